import fs from 'node:fs'
import { ValidationError } from '../../errors.js'
import { importData, parseImportFile } from '../../importer/importData.js'
import { openGatewaySecret, recordGatewaySecret } from '../../profiles/secretCheck.js'
import type { Flags } from '../usage.js'
import { onePositional, printJson, withStore } from './context.js'

export async function run(positionals: string[], flags: Flags) {
  const file = onePositional(positionals, 'import file')
  let data: unknown
  try {
    data = JSON.parse(fs.readFileSync(file, 'utf8'))
  } catch (error) {
    throw new ValidationError(`Cannot read ${file}`, { [file]: (error as Error).message })
  }
  const parsed = parseImportFile(data)
  await withStore(flags, async (store, config) => {
    // After openStore, which creates the data dir the secret file may have to go in.
    const secret = await openGatewaySecret(store, { dataDir: config.dataDir, secretHex: config.secret })
    const summary = await importData(store, parsed, { config, now: Date.now(), secret })
    await recordGatewaySecret(store, secret)
    printJson(summary)
  })
}
