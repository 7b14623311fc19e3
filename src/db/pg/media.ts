import type { createMediaRepository, MediaRow } from '../media.js'
import type { AsyncRepository } from '../types.js'
import type { PgQuery } from './connect.js'

const columns = 'key, url, content_type, bytes, fetched_at, failed_at, error, created_at'

export function createPgMediaRepository(sql: PgQuery): AsyncRepository<ReturnType<typeof createMediaRepository>> {
  return {
    // ON CONFLICT DO NOTHING: every card showing the same image names the same row, on any gateway.
    async insert(m) {
      const rows = await sql`INSERT INTO media (key, url, created_at) VALUES (${m.key}, ${m.url}, ${m.now}) ON CONFLICT DO NOTHING RETURNING key`
      return rows.length === 1
    },
    async get(key) {
      const [row] = await sql<MediaRow[]>`SELECT ${sql.unsafe(columns)} FROM media WHERE key = ${key}`
      return row
    },
    // A success clears the last failure: staff see the image is fine now.
    async setFetched(key, f) {
      await sql`UPDATE media SET content_type = ${f.contentType}, bytes = ${f.bytes}, fetched_at = ${f.now}, failed_at = NULL, error = NULL WHERE key = ${key}`
    },
    async setFailed(key, f) {
      await sql`UPDATE media SET failed_at = ${f.now}, error = ${f.error} WHERE key = ${key}`
    },
  }
}
