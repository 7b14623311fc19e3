import type { Db } from './sqlite/openDatabase.js'

/** The sealed chip keys across chip_profiles, chips and provisioning runs: read only, for the gateway secret check. */
export function createSealedKeysRepository(db: Db) {
  const count = db.prepare<[], { n: number }>(
    `SELECT (SELECT count(*) FROM chip_profiles WHERE meta_key IS NOT NULL OR file_key IS NOT NULL OR master_key IS NOT NULL)
          + (SELECT count(*) FROM chips WHERE file_key IS NOT NULL)
          + (SELECT count(*) FROM chip_provisioning WHERE coalesce(key0, key1, key2, key3, key4, old0, old1, old2, old3, old4) IS NOT NULL) AS n`,
  )
  return {
    /** Profiles with any sealed key, chips with their own, provisioning runs with theirs: nonzero means a new secret would lose keys. */
    count: (): number => count.get()!.n,
  }
}
