import type { Db } from './sqlite/openDatabase.js'

export type GatewayMetaName = 'secret_check'

/** One-row facts about the gateway (migration 005). */
export function createGatewayMetaRepository(db: Db) {
  const byName = db.prepare<[string], { value: Buffer }>('SELECT value FROM gateway_meta WHERE name = ?')
  const upsert = db.prepare<[string, Buffer]>(
    'INSERT INTO gateway_meta (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value',
  )
  return {
    get: (name: GatewayMetaName): Buffer | undefined => byName.get(name)?.value,
    set: (name: GatewayMetaName, value: Buffer) => void upsert.run(name, value),
  }
}
