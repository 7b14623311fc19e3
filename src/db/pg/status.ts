import { quoteIdentifier, type DatabaseStatus } from '../status.js'
import type { PgSql } from './connect.js'
import { redactDatabaseUrl } from '../../redact.js'
import { loadPostgresMigrations } from './migrate.js'

/**
 * `tapgate db status` on PostgreSQL: the same fields as SQLite's, read in one READ ONLY snapshot
 * (nothing is migrated or created). `location` is the URL without its password.
 */
export async function postgresStatus(sql: PgSql, url: string): Promise<DatabaseStatus> {
  const migrations = loadPostgresMigrations()
  return sql.begin('isolation level repeatable read read only', async (tx) => {
    const names = (await tx<{ tablename: string }[]>`
      SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename <> 'schema_migrations' ORDER BY tablename`).map((r) => r.tablename)
    const hasMigrations = (await tx`SELECT 1 FROM pg_tables WHERE schemaname = current_schema() AND tablename = 'schema_migrations'`).length > 0
    const [version] = hasMigrations ? await tx<{ v: number }[]>`SELECT coalesce(max(version), 0) AS v FROM schema_migrations` : [{ v: 0 }]
    const [size] = await tx<{ bytes: number }[]>`SELECT pg_database_size(current_database()) AS bytes`
    const schemaVersion = version!.v
    const tables = []
    for (const name of names) {
      const [row] = await tx<{ n: number }[]>`SELECT count(*) AS n FROM ${tx.unsafe(quoteIdentifier(name))}`
      tables.push({ name, rows: row!.n })
    }
    return {
      backend: 'postgres' as const,
      location: redactDatabaseUrl(url),
      sizeBytes: size!.bytes,
      schemaVersion,
      latestVersion: migrations.at(-1)?.version ?? 0,
      pendingMigrations: migrations.filter((m) => m.version > schemaVersion).map((m) => m.name),
      tables,
    }
  }) as Promise<DatabaseStatus>
}
