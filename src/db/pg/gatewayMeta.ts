import type { createGatewayMetaRepository } from '../gatewayMeta.js'
import type { AsyncRepository } from '../types.js'
import type { PgQuery } from './connect.js'

export function createPgGatewayMetaRepository(sql: PgQuery): AsyncRepository<ReturnType<typeof createGatewayMetaRepository>> {
  return {
    async get(name) {
      const [row] = await sql<{ value: Buffer }[]>`SELECT value FROM gateway_meta WHERE name = ${name}`
      return row?.value
    },
    async set(name, value) {
      await sql`INSERT INTO gateway_meta (name, value) VALUES (${name}, ${value}) ON CONFLICT (name) DO UPDATE SET value = excluded.value`
    },
  }
}
