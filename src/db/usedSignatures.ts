import type { Db } from './sqlite/openDatabase.js'

/** Digests of signed requests already applied, so each signature works once. */
export function createUsedSignaturesRepository(db: Db) {
  const insert = db.prepare<[string, number]>('INSERT OR IGNORE INTO used_signatures (digest, used_at) VALUES (?, ?)')
  return {
    /** false when the digest was used before. */
    use: (digest: string, now: number) => insert.run(digest, now).changes === 1,
  }
}
