import path from 'node:path'
import type { Sql } from 'postgres'
import { packageRoot } from '../../paths.js'
import { loadMigrations, type Migration } from '../migrations.js'

const postgresMigrationsDir = path.join(packageRoot, 'src/db/migrations/pg')

/**
 * PostgreSQL support starts at this schema version: `pg/012-baseline.sql` is SQLite's schema after
 * 001–012, and every later migration exists in both dialects under one number.
 */
export const POSTGRES_BASELINE_VERSION = 12

/** Reads `migrations/pg/NNN-name.sql`, ordered by their number. */
export function loadPostgresMigrations(dir: string = postgresMigrationsDir): Migration[] {
  return loadMigrations(dir)
}

/**
 * What a losing concurrent `CREATE TABLE IF NOT EXISTS` gets once the winner has committed: the
 * relation (42P07) or its row type (42710, "type … already exists", seen here) exists, or the
 * catalog's unique index refuses the duplicate (23505). In every case the table is there.
 */
const bootstrapRaceCodes = new Set(['42P07', '42710', '23505'])

/**
 * Applies, in one transaction, every migration newer than the highest version `schema_migrations`
 * records. Several gateways starting at once on one database apply each migration once: the
 * transaction first takes `LOCK TABLE schema_migrations IN EXCLUSIVE MODE` (held to COMMIT; PostgreSQL
 * DDL is transactional), then reads the version, so a waiter reads the winner's rows and applies
 * nothing. No advisory lock: CockroachDB's are stubs and they break behind a transaction-mode pooler.
 *
 * @returns the versions applied by this call
 */
export async function migratePostgres<T extends Record<string, unknown>>(
  sql: Sql<T>,
  migrations: Migration[] = loadPostgresMigrations(),
): Promise<number[]> {
  await createSchemaMigrations(sql)
  return sql.begin(async (tx) => {
    await tx`LOCK TABLE schema_migrations IN EXCLUSIVE MODE`
    const [row] = await tx<{ current: number }[]>`SELECT coalesce(max(version), 0) AS current FROM schema_migrations`
    const current = row!.current
    const applied: number[] = []
    for (const migration of migrations) {
      if (migration.version <= current) continue
      // The simple protocol: a migration file holds several statements.
      await tx.unsafe(migration.sql).simple()
      await tx`INSERT INTO schema_migrations (version, name, applied_at)
               VALUES (${migration.version}, ${migration.name}, (extract(epoch FROM clock_timestamp()) * 1000)::bigint)`
      applied.push(migration.version)
    }
    return applied
  })
}

/**
 * The lock needs the table, so it is created first, in a transaction of its own. Two creators racing
 * on an empty database both pass IF NOT EXISTS; the loser's error (bootstrapRaceCodes) comes once the
 * winner has committed, so the table exists and the error is dropped.
 */
async function createSchemaMigrations<T extends Record<string, unknown>>(sql: Sql<T>): Promise<void> {
  try {
    await sql.begin(async (tx) => {
      // IF NOT EXISTS on an existing table raises a NOTICE, which the driver would print at every start.
      await tx`SET LOCAL client_min_messages = warning`
      await tx`CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)`
    })
  } catch (error) {
    if (!bootstrapRaceCodes.has((error as { code?: string }).code ?? '')) throw error
  }
}
