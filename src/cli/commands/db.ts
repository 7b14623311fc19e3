import { ConfigError } from '../../configError.js'
import { DatabaseStatusError, sqliteStatus, type DatabaseStatus } from '../../db/status.js'
import { UsageError, type Flags } from '../usage.js'
import { configFrom, onePositional, printJson } from './context.js'

export async function run(positionals: string[], flags: Flags) {
  const action = onePositional(positionals, 'action (status)')
  if (action !== 'status') throw new UsageError(`unknown action "db ${action}" (status)`)
  const status = readStatus(configFrom(flags).dataDir)
  if (flags.json) printJson({ ...status, schema: schemaState(status), totalRows: totalRows(status) })
  else console.log(formatStatus(status))
}

function readStatus(dataDir: string): DatabaseStatus {
  try {
    return sqliteStatus(dataDir)
  } catch (error) {
    // The data dir setting points at nothing tapgate can read: exit 1 with the message, as for a bad config.
    if (error instanceof DatabaseStatusError) throw new ConfigError(error.message)
    throw error
  }
}

type SchemaState = 'current' | 'pending' | 'newer'

function schemaState(s: DatabaseStatus): SchemaState {
  if (s.schemaVersion > s.latestVersion) return 'newer'
  return s.pendingMigrations.length > 0 ? 'pending' : 'current'
}

const totalRows = (s: DatabaseStatus) => s.tables.reduce((sum, t) => sum + t.rows, 0)

function schemaLine(s: DatabaseStatus): string {
  const known = `this tapgate knows ${s.latestVersion}`
  switch (schemaState(s)) {
    case 'current':
      return `${s.schemaVersion} (up to date: ${known})`
    case 'pending': {
      const n = s.pendingMigrations.length
      return `${s.schemaVersion} (${known}: ${n} migration${n === 1 ? '' : 's'} pending, applied when the gateway or another command next opens the data dir)`
    }
    case 'newer':
      return `${s.schemaVersion} (${known}: the data dir is newer than this tapgate; run the tapgate that wrote it, or upgrade)`
  }
}

/** The status as a small aligned table: the facts, then one row per table and the total. */
function formatStatus(s: DatabaseStatus): string {
  const facts: [string, string][] = [
    ['backend', s.backend],
    ['location', s.location],
    ['size', `${s.sizeBytes} bytes (${(s.sizeBytes / 2 ** 20).toFixed(1)} MiB)`],
    ['schema', schemaLine(s)],
  ]
  const rows: [string, string][] = [...s.tables.map((t): [string, string] => [t.name, String(t.rows)]), ['total', String(totalRows(s))]]
  const nameWidth = Math.max('table'.length, ...rows.map(([name]) => name.length))
  const countWidth = Math.max('rows'.length, ...rows.map(([, count]) => count.length))
  const line = ([name, count]: [string, string]) => `${name.padEnd(nameWidth)}  ${count.padStart(countWidth)}`
  return [
    ...facts.map(([label, value]) => `${label.padEnd(8)}  ${value}`),
    '',
    line(['table', 'rows']),
    ...rows.slice(0, -1).map(line),
    line(['-'.repeat(nameWidth), '-'.repeat(countWidth)]),
    line(rows.at(-1)!),
  ].join('\n')
}
