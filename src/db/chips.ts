import type { Db } from './sqlite/openDatabase.js'

export type ChipKind = 'ntag424' | 'ntag21x'

export type ChipRow = {
  uid: string
  teamId: number
  groupId: number | null
  kind: ChipKind
  lastCounter: number | null
  redirectUrl: string | null
  createdAt: number
  profileId: number | null
  randomUid: number
  /** Sealed per-chip SDM file read key (key scheme per_chip). */
  fileKey: Buffer | null
  keyVersion: number
  /** NTAG 21x: 1 mirrors its NFC counter, 0 its UID only, null not declared (see migration 004). */
  counterMirror: number | null
  /** The attendee's wallet (migration 007): a check-in mints its guestbook token to it. */
  wallet: string | null
}

const columns = `uid, team_id AS teamId, group_id AS groupId, kind, last_counter AS lastCounter, redirect_url AS redirectUrl,
  created_at AS createdAt, profile_id AS profileId, random_uid AS randomUid, file_key AS fileKey, key_version AS keyVersion,
  counter_mirror AS counterMirror, wallet`

export function createChipsRepository(db: Db) {
  const insert = db.prepare<[string, number, number | null, ChipKind, string | null, number]>(
    'INSERT INTO chips (uid, team_id, group_id, kind, redirect_url, created_at) VALUES (?, ?, ?, ?, ?, ?)',
  )
  const update = db.prepare<[number | null, ChipKind, string | null, string]>(
    'UPDATE chips SET group_id = ?, kind = ?, redirect_url = ? WHERE uid = ?',
  )
  const byUid = db.prepare<[string], ChipRow>(`SELECT ${columns} FROM chips WHERE uid = ?`)
  const byTeam = db.prepare<[number], ChipRow>(`SELECT ${columns} FROM chips WHERE team_id = ? ORDER BY uid`)
  const setRedirect = db.prepare<[string | null, string]>('UPDATE chips SET redirect_url = ? WHERE uid = ?')
  const setVerification = db.prepare(
    `UPDATE chips SET profile_id = @profileId, random_uid = @randomUid, file_key = @fileKey, key_version = @keyVersion
     WHERE uid = @uid`,
  )
  const setWallet = db.prepare<[string | null, string]>('UPDATE chips SET wallet = ? WHERE uid = ?')
  const setMirror = db.prepare<[number | null, string]>('UPDATE chips SET counter_mirror = ? WHERE uid = ?')
  // Staff only (tapgate taps set-counter), after checking the chip: either way, unlike a tap.
  const setLast = db.prepare<[number, string]>('UPDATE chips SET last_counter = ? WHERE uid = ?')
  // Only ever forward: the WHERE clause is the replay check's last line of defence.
  const advance = db.prepare<[number, string, number]>(
    'UPDATE chips SET last_counter = ? WHERE uid = ? AND (last_counter IS NULL OR last_counter < ?)',
  )
  return {
    insert: (c: { uid: string; teamId: number; groupId: number | null; kind: ChipKind; redirectUrl: string | null; now: number }) =>
      insert.run(c.uid, c.teamId, c.groupId, c.kind, c.redirectUrl, c.now),
    update: (c: { uid: string; groupId: number | null; kind: ChipKind; redirectUrl: string | null }) =>
      update.run(c.groupId, c.kind, c.redirectUrl, c.uid),
    get: (uid: string) => byUid.get(uid),
    listByTeam: (teamId: number) => byTeam.all(teamId),
    setRedirectUrl: (uid: string, url: string | null) => setRedirect.run(url, uid),
    setVerification: (c: { uid: string; profileId: number | null; randomUid: boolean; fileKey: Buffer | null; keyVersion: number }) =>
      setVerification.run({ ...c, randomUid: c.randomUid ? 1 : 0 }),
    setCounterMirror: (uid: string, counterMirror: boolean | null) => setMirror.run(counterMirror === null ? null : counterMirror ? 1 : 0, uid),
    setWallet: (uid: string, wallet: string | null) => setWallet.run(wallet, uid),
    setLastCounter: (uid: string, counter: number) => setLast.run(counter, uid),
    /** @returns true when the counter moved forward */
    advanceCounter: (uid: string, counter: number) => advance.run(counter, uid, counter).changes === 1,
  }
}
