import type { Db } from './openDatabase.js'

export type ChipKind = 'ntag424' | 'ntag21x'

export type ChipRow = {
  uid: string
  teamId: number
  groupId: number | null
  kind: ChipKind
  lastCounter: number | null
  redirectUrl: string | null
  createdAt: number
}

const columns =
  'uid, team_id AS teamId, group_id AS groupId, kind, last_counter AS lastCounter, redirect_url AS redirectUrl, created_at AS createdAt'

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
  return {
    insert: (c: { uid: string; teamId: number; groupId: number | null; kind: ChipKind; redirectUrl: string | null; now: number }) =>
      insert.run(c.uid, c.teamId, c.groupId, c.kind, c.redirectUrl, c.now),
    update: (c: { uid: string; groupId: number | null; kind: ChipKind; redirectUrl: string | null }) =>
      update.run(c.groupId, c.kind, c.redirectUrl, c.uid),
    get: (uid: string) => byUid.get(uid),
    listByTeam: (teamId: number) => byTeam.all(teamId),
    setRedirectUrl: (uid: string, url: string | null) => setRedirect.run(url, uid),
  }
}
