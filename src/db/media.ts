import type { Db } from './sqlite/openDatabase.js'

export type MediaRow = {
  key: string
  url: string
  contentType: string | null
  bytes: number | null
  fetchedAt: number | null
  failedAt: number | null
  error: string | null
  createdAt: number
}

const columns = `key, url, content_type AS contentType, bytes, fetched_at AS fetchedAt, failed_at AS failedAt, error, created_at AS createdAt`

/** Product images (migration 008): one row per image URL, keyed by sha256(url); the bytes live in <dataDir>/media/<key>. */
export function createMediaRepository(db: Db) {
  // ON CONFLICT DO NOTHING: every card showing the same image names the same row.
  const insert = db.prepare<[string, string, number]>('INSERT INTO media (key, url, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING')
  const byKey = db.prepare<[string], MediaRow>(`SELECT ${columns} FROM media WHERE key = ?`)
  // A success clears the last failure: staff see the image is fine now.
  const fetched = db.prepare<[string, number, number, string]>(
    'UPDATE media SET content_type = ?, bytes = ?, fetched_at = ?, failed_at = NULL, error = NULL WHERE key = ?',
  )
  const failed = db.prepare<[number, string, string]>('UPDATE media SET failed_at = ?, error = ? WHERE key = ?')
  return {
    /** @returns true when the URL is new */
    insert: (m: { key: string; url: string; now: number }) => insert.run(m.key, m.url, m.now).changes === 1,
    get: (key: string) => byKey.get(key),
    setFetched: (key: string, f: { contentType: string; bytes: number; now: number }) => fetched.run(f.contentType, f.bytes, f.now, key),
    setFailed: (key: string, f: { error: string; now: number }) => failed.run(f.now, f.error, key),
  }
}
