import { loadConfig, type Config } from '../../config.js'
import { openGatewayStore, type Store } from '../../db/store.js'
import { UsageError, type Flags } from '../usage.js'

/**
 * Config from env/file with the CLI's global flags (and a command's own overrides) on top. `serving`:
 * for `serve`, which alone starts a chain, so alone needs chain settings that fit database.url.
 */
export function configFrom(flags: Flags, overrides: Record<string, unknown> = {}, { serving = false }: { serving?: boolean } = {}): Config {
  return loadConfig({ configFile: text(flags, 'config'), overrides: { dataDir: text(flags, 'data-dir'), ...overrides }, serving })
}

/** Runs a command against the gateway's store (PostgreSQL when `database.url` is set, else the data dir's SQLite) and always closes it. */
export async function withStore<T>(flags: Flags, fn: (store: Store, config: Config) => T | Promise<T>): Promise<T> {
  const config = configFrom(flags)
  const store = await openGatewayStore({ dataDir: config.dataDir, databaseUrl: config.database.url })
  try {
    return await fn(store, config)
  } finally {
    await store.close()
  }
}

/** A string flag's value, if given. */
export function text(flags: Flags, name: string): string | undefined {
  const value = flags[name]
  return typeof value === 'string' ? value : undefined
}

/** A string flag that must be present and non-empty. */
export function required(flags: Flags, name: string): string {
  const value = text(flags, name)
  if (value === undefined || value === '') throw new UsageError(`--${name} is required`)
  return value
}

export function teamIdOf(flags: Flags): number {
  const raw = required(flags, 'team')
  if (!/^\d+$/.test(raw) || Number(raw) === 0) throw new UsageError('--team takes a team id (a positive integer)')
  return Number(raw)
}

/** The one positional a command takes, e.g. `import FILE`. */
export function onePositional(positionals: string[], what: string): string {
  if (positionals.length !== 1) throw new UsageError(`expected one ${what}, got ${positionals.length}`)
  return positionals[0]!
}

/** Rejects positionals a command does not take (typos like `tap 04AB…` without --uid). */
export function noPositionals(positionals: string[]): void {
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`)
}

export const printJson = (value: unknown) => console.log(JSON.stringify(value, null, 2))
