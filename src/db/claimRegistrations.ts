import type { Db } from './sqlite/openDatabase.js'

export type ClaimRegistrationRow = {
  id: number
  tokenId: number
  recipient: string
  createdAt: number
  allowedAt: number
  expiresAt: number
  usedAt: number | null
}

const columns = `id, token_id AS tokenId, recipient, created_at AS createdAt, allowed_at AS allowedAt,
  expires_at AS expiresAt, used_at AS usedAt`

export function createClaimRegistrationsRepository(db: Db) {
  const insert = db.prepare(
    `INSERT INTO claim_registrations (token_id, recipient, created_at, allowed_at, expires_at)
     VALUES (@tokenId, @recipient, @createdAt, @allowedAt, @expiresAt)`,
  )
  // "Open" = not used and not expired: the one that blocks a new registration.
  const openForToken = db.prepare<[number, number], ClaimRegistrationRow>(
    `SELECT ${columns} FROM claim_registrations WHERE token_id = ? AND used_at IS NULL AND expires_at > ?
     ORDER BY id DESC LIMIT 1`,
  )
  const byId = db.prepare<[number], ClaimRegistrationRow>(`SELECT ${columns} FROM claim_registrations WHERE id = ?`)
  const latestFor = db.prepare<[number, string], ClaimRegistrationRow>(
    `SELECT ${columns} FROM claim_registrations WHERE token_id = ? AND recipient = ? ORDER BY id DESC LIMIT 1`,
  )
  const removeUnused = db.prepare<[number, string]>(
    'DELETE FROM claim_registrations WHERE token_id = ? AND recipient = ? AND used_at IS NULL',
  )
  const use = db.prepare<[number, number]>('UPDATE claim_registrations SET used_at = ? WHERE id = ? AND used_at IS NULL')
  const unuse = db.prepare<[number]>('UPDATE claim_registrations SET used_at = NULL WHERE id = ? AND used_at IS NOT NULL')
  return {
    insert: (r: Omit<ClaimRegistrationRow, 'id' | 'usedAt'>) => Number(insert.run(r).lastInsertRowid),
    get: (id: number) => byId.get(id),
    findOpen: (tokenId: number, now: number) => openForToken.get(tokenId, now),
    findLatest: (tokenId: number, recipient: string) => latestFor.get(tokenId, recipient),
    deleteUnused: (tokenId: number, recipient: string) => removeUnused.run(tokenId, recipient).changes,
    markUsed: (id: number, now: number) => use.run(now, id).changes === 1,
    /** Gives a used registration back: the transfer that used it reverted and will not be retried. */
    release: (id: number) => unuse.run(id).changes === 1,
  }
}
