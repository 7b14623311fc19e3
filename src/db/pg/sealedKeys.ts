import type { createSealedKeysRepository } from '../sealedKeys.js'
import type { AsyncRepository } from '../types.js'
import type { PgQuery } from './connect.js'

export function createPgSealedKeysRepository(sql: PgQuery): AsyncRepository<ReturnType<typeof createSealedKeysRepository>> {
  return {
    async count() {
      const [row] = await sql<{ n: number }[]>`
        SELECT (SELECT count(*) FROM chip_profiles WHERE meta_key IS NOT NULL OR file_key IS NOT NULL OR master_key IS NOT NULL)
             + (SELECT count(*) FROM chips WHERE file_key IS NOT NULL)
             + (SELECT count(*) FROM chip_provisioning WHERE coalesce(key0, key1, key2, key3, key4, old0, old1, old2, old3, old4) IS NOT NULL) AS n`
      return row!.n
    },
  }
}
