import fs from 'node:fs'
import { ValidationError } from '../../errors.js'
import { importData, parseImportFile } from '../../importer/importData.js'
import type { GlobalOptions } from '../usage.js'
import { printJson, withStore } from './context.js'

export async function importFile(file: string, o: GlobalOptions) {
  let data: unknown
  try {
    data = JSON.parse(fs.readFileSync(file, 'utf8'))
  } catch (error) {
    throw new ValidationError(`Cannot read ${file}`, { [file]: (error as Error).message })
  }
  const parsed = parseImportFile(data)
  await withStore(o, (store, config) => printJson(importData(store, parsed, { config, now: Date.now() })))
}
