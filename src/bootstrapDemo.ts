import fs from 'node:fs'
import path from 'node:path'
import { createApiKey, type CreateApiKeyReturnType } from './auth/apiKeys.js'
import type { Config } from './config.js'
import type { Store } from './db/store.js'
import { packageRoot } from './paths.js'
import { importInto, parseImportFile, type ImportSummary } from './importer/importData.js'

export const demoFixturePath = path.join(packageRoot, 'fixtures/demo.json')

export type BootstrapDemoReturnType = { key: CreateApiKeyReturnType; summary: ImportSummary } | null

/**
 * On a data dir with no team yet, imports fixtures/demo.json (its chip profile's
 * all-zero keys sealed under `secret`) and creates an API key for its team. The emptiness check and the import share one
 * transaction, so two processes starting together create one demo team.
 *
 * @returns the new key (to print once) and what was imported, or null when the data dir already had a team
 * @example
 * const demo = bootstrapDemo(store, { config, now: Date.now(), secret: loadGatewaySecret({ dataDir: config.dataDir, secretHex: config.secret }) })
 */
export function bootstrapDemo(store: Store, { config, now, secret }: { config: Config; now: number; secret: Buffer }): Promise<BootstrapDemoReturnType> {
  const data = parseImportFile(JSON.parse(fs.readFileSync(demoFixturePath, 'utf8')))
  return store.tx(async (tx) => {
    if ((await tx.teams.list()).length > 0) return null
    const summary = await importInto(tx, data, { config, now, secret })
    const key = await createApiKey(tx, { teamId: summary.teams[0]!.id, label: 'demo', now })
    return { key, summary }
  })
}
