import type { ChipRow, createChipsRepository } from '../chips.js'
import type { AsyncRepository } from '../types.js'
import type { PgQuery } from './connect.js'

// random_uid and counter_mirror keep SQLite's 0/1 in the row type (see types.ts).
const columns = `uid, team_id, group_id, kind, last_counter, redirect_url, created_at, profile_id,
  random_uid::int AS random_uid, file_key, key_version, counter_mirror::int AS counter_mirror, wallet`

export function createPgChipsRepository(sql: PgQuery): AsyncRepository<ReturnType<typeof createChipsRepository>> {
  return {
    async insert(c) {
      await sql`INSERT INTO chips (uid, team_id, group_id, kind, redirect_url, created_at)
        VALUES (${c.uid}, ${c.teamId}, ${c.groupId}, ${c.kind}, ${c.redirectUrl}, ${c.now})`
    },
    async update(c) {
      await sql`UPDATE chips SET group_id = ${c.groupId}, kind = ${c.kind}, redirect_url = ${c.redirectUrl} WHERE uid = ${c.uid}`
    },
    async get(uid) {
      const [row] = await sql<ChipRow[]>`SELECT ${sql.unsafe(columns)} FROM chips WHERE uid = ${uid}`
      return row
    },
    async listByTeam(teamId) {
      return [...(await sql<ChipRow[]>`SELECT ${sql.unsafe(columns)} FROM chips WHERE team_id = ${teamId} ORDER BY uid`)]
    },
    async setRedirectUrl(uid, url) {
      await sql`UPDATE chips SET redirect_url = ${url} WHERE uid = ${uid}`
    },
    async setVerification(c) {
      await sql`UPDATE chips SET profile_id = ${c.profileId}, random_uid = ${c.randomUid}, file_key = ${c.fileKey}, key_version = ${c.keyVersion}
        WHERE uid = ${c.uid}`
    },
    async setCounterMirror(uid, counterMirror) {
      await sql`UPDATE chips SET counter_mirror = ${counterMirror} WHERE uid = ${uid}`
    },
    async setWallet(uid, wallet) {
      await sql`UPDATE chips SET wallet = ${wallet} WHERE uid = ${uid}`
    },
    async setLastCounter(uid, counter) {
      await sql`UPDATE chips SET last_counter = ${counter} WHERE uid = ${uid}`
    },
    // Only ever forward: the WHERE clause is the replay check's last line of defence, on any gateway.
    async advanceCounter(uid, counter) {
      const rows = await sql`UPDATE chips SET last_counter = ${counter} WHERE uid = ${uid} AND (last_counter IS NULL OR last_counter < ${counter}) RETURNING uid`
      return rows.length === 1
    },
  }
}
