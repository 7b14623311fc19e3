import { ConfigError } from '../../configError.js'
import { copySqliteToPostgres, CopyRefusedError } from '../../db/copy.js'
import { connectPostgres, type PgSql } from '../../db/pg/connect.js'
import { postgresStatus } from '../../db/pg/status.js'
import { DatabaseStatusError, sqliteStatus, type DatabaseStatus } from '../../db/status.js'
import { UsageError, type Flags } from '../usage.js'
import { redactDatabaseUrl } from '../../redact.js'
import { configFrom, onePositional, printJson, text } from './context.js'

export async function run(positionals: string[], flags: Flags) {
  const action = onePositional(positionals, 'action (status, copy)')
  if (action === 'copy') return copy(flags)
  if (action !== 'status') throw new UsageError(`unknown action "db ${action}" (status, copy)`)
  const config = configFrom(flags)
  const status = config.database.url ? await readPostgresStatus(config.database.url) : readStatus(config.dataDir)
  if (flags.json) printJson({ ...status, schema: schemaState(status), totalRows: totalRows(status) })
  else console.log(formatStatus(status))
}

/** A client for `url`; a URL the driver cannot parse (a port out of range, a stray %) is a config error, not a stack trace. */
function connect(url: string): PgSql {
  try {
    return connectPostgres({ url, max: 1 })
  } catch (error) {
    throw new ConfigError(`cannot use the PostgreSQL URL ${redactDatabaseUrl(url)}: ${(error as Error).message}`)
  }
}

async function readPostgresStatus(url: string): Promise<DatabaseStatus> {
  const sql = connect(url)
  try {
    return await postgresStatus(sql, url)
  } catch (error) {
    throw new ConfigError(`cannot read the PostgreSQL database ${redactDatabaseUrl(url)}: ${(error as Error).message}`)
  } finally {
    await sql.end({ timeout: 5 })
  }
}

/** `tapgate db copy --to postgres://…`: the data dir's SQLite database into an empty PostgreSQL one. */
async function copy(flags: Flags): Promise<void> {
  const to = text(flags, 'to')
  if (!to || !/^postgres(ql)?:\/\//.test(to)) throw new UsageError('db copy needs --to postgres://user@host/database (an empty database)')
  const config = configFrom(flags)
  const before = readStatus(config.dataDir)
  const sql = connect(to)
  try {
    const report = await copySqliteToPostgres(config.dataDir, sql)
    const after = await postgresStatus(sql, to)
    const counts = report.tables.map((t) => ({ table: t.name, sqlite: t.rows, postgres: t.copied }))
    if (flags.json) printJson({ from: before.location, to: after.location, schemaVersion: after.schemaVersion, tables: counts, sequences: report.sequences })
    else {
      const width = Math.max(...counts.map((c) => c.table.length), 'table'.length)
      console.log(`copied ${before.location} → ${after.location} (schema ${after.schemaVersion})`)
      console.log(`${'table'.padEnd(width)}  ${'sqlite'.padStart(8)}  ${'postgres'.padStart(8)}`)
      for (const c of counts) console.log(`${c.table.padEnd(width)}  ${String(c.sqlite).padStart(8)}  ${String(c.postgres).padStart(8)}`)
      console.log(`${report.sequences} id sequences moved past the copied ids.`)
      console.log('Every gateway on this database needs the data dir\'s gateway secret: set TAPGATE_SECRET to the hex in its secret.key.')
    }
    if (counts.some((c) => c.sqlite !== c.postgres)) throw new ConfigError('the row counts differ after the copy (see above)')
  } catch (error) {
    if (error instanceof CopyRefusedError) throw new ConfigError(`db copy refused: ${error.message}`)
    throw error
  } finally {
    await sql.end({ timeout: 5 })
  }
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
