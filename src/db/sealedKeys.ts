import type { Db } from './openDatabase.js'

/** The sealed chip keys across chip_profiles and chips: read only, for the gateway secret check. */
export function createSealedKeysRepository(db: Db) {
  const count = db.prepare<[], { n: number }>(
    `SELECT (SELECT count(*) FROM chip_profiles WHERE meta_key IS NOT NULL OR file_key IS NOT NULL OR master_key IS NOT NULL)
          + (SELECT count(*) FROM chips WHERE file_key IS NOT NULL) AS n`,
  )
  return {
    /** Profiles with any sealed key, plus chips with their own: nonzero means a new secret would lose keys. */
    count: (): number => count.get()!.n,
  }
}
