import { loadConfig, type Config } from '../../config.js'
import { openStore, type Store } from '../../db/store.js'
import { UsageError, type GlobalOptions } from '../usage.js'

/** Config from env/file with the CLI's global flags on top. */
export function configFrom(o: GlobalOptions, overrides: Record<string, unknown> = {}): Config {
  return loadConfig({ configFile: o.config, overrides: { dataDir: o.dataDir, ...overrides } })
}

/** Runs a command against the data dir's store and always closes it. */
export async function withStore<T>(o: GlobalOptions, fn: (store: Store, config: Config) => T | Promise<T>): Promise<T> {
  const config = configFrom(o)
  const store = openStore({ dataDir: config.dataDir })
  try {
    return await fn(store, config)
  } finally {
    store.close()
  }
}

export function required<T>(value: T | undefined, flag: string): T {
  if (value === undefined || value === '' || (value as unknown) === true) throw new UsageError(`${flag} is required`)
  return value
}

export function teamIdOf(value: unknown): number {
  const id = Number(required(value as string | undefined, '--team'))
  if (!Number.isInteger(id) || id <= 0) throw new UsageError('--team takes a team id (a positive integer)')
  return id
}

export const printJson = (value: unknown) => console.log(JSON.stringify(value, null, 2))
