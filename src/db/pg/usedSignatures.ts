import type { createUsedSignaturesRepository } from '../usedSignatures.js'
import type { AsyncRepository } from '../types.js'
import type { PgQuery } from './connect.js'

export function createPgUsedSignaturesRepository(sql: PgQuery): AsyncRepository<ReturnType<typeof createUsedSignaturesRepository>> {
  return {
    // The primary key decides: a concurrent insert of the same digest waits for the first and then does nothing.
    async use(digest, now) {
      const rows = await sql`INSERT INTO used_signatures (digest, used_at) VALUES (${digest}, ${now}) ON CONFLICT DO NOTHING RETURNING digest`
      return rows.length === 1
    },
  }
}
