import Database from 'better-sqlite3'
import { quoteIdentifier, type TableRows } from './status.js'
import type { PgQuery, PgSql, PgTransaction } from './pg/connect.js'
import { migratePostgres } from './pg/migrate.js'
import { databaseFile, openDatabase } from './sqlite/openDatabase.js'

export type CopyReport = { tables: Array<TableRows & { copied: number }>; sequences: number }

/** The target already holds data or tables of its own (or the copy would not match): nothing was written or created. */
export class CopyRefusedError extends Error {
  override name = 'CopyRefusedError'
}

/** Rows per INSERT: well under PostgreSQL's 65,535 parameters for our widest table. */
const BATCH = 500

/**
 * Copies a SQLite data dir's database into an empty PostgreSQL database: every table, as stored
 * (sealed keys stay sealed bytes, counters, live refs and OTPs, the chain outbox), in one PostgreSQL
 * transaction, so a failure leaves the target empty. The SQLite side is migrated to the current
 * schema first and read in one snapshot; PostgreSQL is migrated to the same version, only once the
 * target is known to be empty: a refusal creates nothing there. Ids keep their values and each
 * identity sequence is moved past the largest copied id.
 *
 * @throws CopyRefusedError when the target has a table tapgate does not know, any target table has
 * rows, or the two schemas differ
 */
export async function copySqliteToPostgres(dataDir: string, target: PgSql): Promise<CopyReport> {
  // openDatabase applies any pending SQLite migration: the two schemas must be at the same version.
  openDatabase({ dataDir }).close()
  const source = new Database(databaseFile(dataDir), { fileMustExist: true, readonly: true })
  try {
    const names = orderByForeignKeys(source)
    // Before the migrations create anything: a database that is not ours, or not empty, keeps exactly the tables it had.
    await refuseUnlessEmpty(target, names)
    await migratePostgres(target)
    const snapshot = source.transaction(() =>
      names.map((name) => ({ name, rows: source.prepare(`SELECT * FROM ${quoteIdentifier(name)}`).all() as Record<string, unknown>[] })),
    )()
    return (await target.begin(async (transaction) => {
      const tx = transaction as unknown as PgTransaction
      const targetTables = new Set(
        (await tx<{ tablename: string }[]>`SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename <> 'schema_migrations'`).map(
          (r) => r.tablename,
        ),
      )
      const missing = names.filter((name) => !targetTables.has(name))
      if (missing.length > 0) throw new CopyRefusedError(`the PostgreSQL schema has no table ${missing.join(', ')}: is this tapgate older than the data dir?`)
      // Again inside the copy's transaction: a writer may have come between the first check and this one.
      await refuseUnlessEmpty(tx, names)
      const booleans = await booleanColumns(tx)
      const report: CopyReport = { tables: [], sequences: 0 }
      for (const { name, rows } of snapshot) {
        const flags = booleans.get(name) ?? []
        for (let i = 0; i < rows.length; i += BATCH) {
          const batch = rows.slice(i, i + BATCH).map((row) => {
            const out: Record<string, unknown> = { ...row }
            // SQLite stores a flag as 0/1; the PostgreSQL column is boolean.
            for (const column of flags) if (out[column] !== null && out[column] !== undefined) out[column] = out[column] === 1 || out[column] === true
            return out
          })
          const columns = Object.keys(batch[0]!)
          // The copied ids, not new ones (rows point at each other by them): identities are BY DEFAULT, so they are taken as given.
          await tx`INSERT INTO ${tx(name)} ${tx(batch as never, columns)}`
        }
        const [copied] = await tx<{ n: number }[]>`SELECT count(*) AS n FROM ${tx(name)}`
        report.tables.push({ name, rows: rows.length, copied: copied!.n })
      }
      // Identity sequences past the copied ids, so the next insert does not collide.
      const identities = await tx<{ tableName: string; columnName: string }[]>`
        SELECT table_name, column_name FROM information_schema.columns
        WHERE table_schema = current_schema() AND is_identity = 'YES'`
      for (const { tableName, columnName } of identities) {
        await tx`SELECT setval(pg_get_serial_sequence(${quoteIdentifier(tableName)}, ${columnName}),
          coalesce((SELECT max(${tx(columnName)}) FROM ${tx(tableName)}), 0) + 1, false)`
        report.sequences++
      }
      return report
    })) as CopyReport
  } finally {
    source.close()
  }
}

/**
 * Refuses a target that holds a table tapgate does not know (someone else's database: empty or not,
 * it is not ours to add 40 tables to) or any row in one of tapgate's (a database already in use).
 * An empty tapgate schema, as a gateway's first start leaves it, is a fine target.
 */
async function refuseUnlessEmpty(q: PgQuery, tapgateTables: string[]): Promise<void> {
  const tables = (
    await q<{ tablename: string }[]>`
      SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename <> 'schema_migrations' ORDER BY tablename`
  ).map((r) => r.tablename)
  const foreign = tables.filter((name) => !tapgateTables.includes(name))
  if (foreign.length > 0) {
    const listed = foreign.length > 5 ? `${foreign.slice(0, 5).join(', ')} and ${foreign.length - 5} more` : foreign.join(', ')
    throw new CopyRefusedError(
      `the target database is not empty: it has ${foreign.length === 1 ? 'a table' : 'tables'} tapgate does not know (${listed}); copy into a new database`,
    )
  }
  for (const name of tables) {
    const [row] = await q<{ n: number }[]>`SELECT count(*) AS n FROM ${q.unsafe(quoteIdentifier(name))}`
    if (row!.n > 0) throw new CopyRefusedError(`the target database is not empty: ${name} has ${row!.n} rows; copy into a new database`)
  }
}

/** Boolean columns per table in the target (PostgreSQL's types; SQLite's are 0/1 integers). */
async function booleanColumns(tx: PgTransaction): Promise<Map<string, string[]>> {
  const rows = await tx<{ tableName: string; columnName: string }[]>`
    SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema() AND data_type = 'boolean'`
  const map = new Map<string, string[]>()
  for (const { tableName, columnName } of rows) map.set(tableName, [...(map.get(tableName) ?? []), columnName])
  return map
}

/** Every table, parents before the tables whose foreign keys point at them. */
function orderByForeignKeys(db: Database.Database): string[] {
  const names = db
    .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name`)
    .pluck()
    .all() as string[]
  const parents = new Map(
    names.map((name) => [name, (db.prepare(`SELECT "table" FROM pragma_foreign_key_list(?)`).pluck().all(name) as string[]).filter((p) => p !== name)]),
  )
  const ordered: string[] = []
  const visit = (name: string, path: string[]) => {
    if (ordered.includes(name) || path.includes(name)) return
    for (const parent of parents.get(name) ?? []) visit(parent, [...path, name])
    ordered.push(name)
  }
  for (const name of names) visit(name, [])
  return ordered
}
