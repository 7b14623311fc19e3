/*
 * The PostgreSQL schema and its migrator, on the run's real PostgreSQL (test/helpers/postgres.ts):
 * the PostgreSQL list is SQLite's list from the baseline on, a fresh database ends at SQLite's latest
 * version, the two schemas agree table by table (this is what keeps the two lists from drifting),
 * gateways starting at once apply each migration once, and the single-use rules that are constraints
 * in SQLite are constraints in PostgreSQL too.
 */
import fs from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import type postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { loadMigrations } from '../../src/db/migrations.js'
import { migrate } from '../../src/db/sqlite/migrate.js'
import { loadPostgresMigrations, migratePostgres, POSTGRES_BASELINE_VERSION } from '../../src/db/pg/migrate.js'
import { makeTempDir } from '../helpers/gateway.js'
import { HAS_POSTGRES, testDatabase } from '../helpers/postgres.js'

/**
 * SQLite INTEGER columns that hold 0/1 flags and are boolean in PostgreSQL (docs/decisions.md). Every
 * other INTEGER is bigint; transfers.resigned is a count, not a flag.
 */
const BOOLEAN_COLUMNS = [
  'attendee_import_rows.needs_attention',
  'attendee_import_rows.paid',
  'attendees.needs_attention',
  'attendees.paid',
  'chain_txs.reverted',
  'check_ins.manual',
  'chip_provisioning.random_id',
  'chip_provisioning_steps.ok',
  'chips.counter_mirror',
  'chips.random_uid',
  'guestbook_contracts.paused',
  'guestbook_events.admit_unpaid',
  'guestbook_events.reentry',
  'refs.authenticated',
  'refs.links_module',
  'stations.bind_rebind',
  'stations.in_process',
  'tap_log.accepted',
  'tap_log.authenticated',
  'tokens.minted',
  'tokens.two_tap_claim',
]

type Column = { name: string; type: string; notNull: boolean; default: string | null; identity: boolean }
type TableShape = { columns: Column[]; indexes: string[]; foreignKeys: string[] }
type Schema = Map<string, TableShape>

/** Both dialects' partial-index predicates in one form: `(status <> 'mined'::text)` → `status <> 'mined'`. */
const normalizePredicate = (where: string) =>
  where
    .toLowerCase()
    .replace(/::[a-z ]+/g, '')
    .replace(/[()]/g, '')
    .replace(/\s+/g, ' ')
    .trim()

const indexKey = (kind: 'primary key' | 'unique' | 'index', columns: string[], where: string | null) =>
  `${kind} (${columns.join(', ')})${where ? ` where ${normalizePredicate(where)}` : ''}`

/** SQLite's schema after every migration, from a temp file. */
function sqliteSchema(): Schema {
  const dir = makeTempDir('tapgate-pg-schema-')
  const db = new Database(path.join(dir, 'schema.sqlite'))
  try {
    migrate(db)
    const schema: Schema = new Map()
    const tables = db
      .prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
      .all()
      .map((t) => t.name)
    for (const table of tables) {
      const info = db.pragma(`table_info(${table})`) as { name: string; type: string; notnull: number; dflt_value: string | null; pk: number }[]
      const pk = info.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk)
      const rowidAlias = pk.length === 1 && pk[0]!.type === 'INTEGER' && pk[0]!.name === 'id'
      const columns = info.map((c) => ({
        name: c.name,
        type: c.type,
        // A primary key column is NOT NULL in PostgreSQL; SQLite's table_info says 0 for a non-INTEGER one.
        notNull: c.notnull === 1 || c.pk > 0,
        default: c.dflt_value,
        identity: rowidAlias && c.pk > 0,
      }))
      const indexes = [indexKey('primary key', pk.map((c) => c.name), null)]
      const list = db.pragma(`index_list(${table})`) as { name: string; unique: number; origin: string; partial: number }[]
      for (const index of list) {
        if (index.origin === 'pk') continue
        const cols = (db.pragma(`index_info(${index.name})`) as { seqno: number; name: string }[]).sort((a, b) => a.seqno - b.seqno).map((c) => c.name)
        let where: string | null = null
        if (index.partial) {
          const { sql } = db.prepare<[string], { sql: string }>('SELECT sql FROM sqlite_master WHERE name = ?').get(index.name)!
          where = /\bWHERE\b(.*)$/is.exec(sql)![1]!
        }
        indexes.push(indexKey(index.unique ? 'unique' : 'index', cols, where))
      }
      const fkRows = db.pragma(`foreign_key_list(${table})`) as { id: number; seq: number; table: string; from: string; to: string }[]
      const foreignKeys = [...new Set(fkRows.map((f) => f.id))].map((id) => {
        const parts = fkRows.filter((f) => f.id === id).sort((a, b) => a.seq - b.seq)
        return `(${parts.map((p) => p.from).join(', ')}) → ${parts[0]!.table}(${parts.map((p) => p.to).join(', ')})`
      })
      schema.set(table, { columns, indexes: indexes.sort(), foreignKeys: foreignKeys.sort() })
    }
    return schema
  } finally {
    db.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

/** The current schema of a PostgreSQL database, in the same shape (schema_migrations left out). */
async function postgresSchema(sql: postgres.Sql): Promise<Schema> {
  const columns = await sql<{ table: string; name: string; type: string; notNull: boolean; default: string | null; identity: boolean }[]>`
    SELECT table_name AS "table", column_name AS "name", data_type AS "type", is_nullable = 'NO' AS "notNull",
           column_default AS "default", is_identity = 'YES' AS "identity"
    FROM information_schema.columns
    WHERE table_schema = current_schema() AND table_name <> 'schema_migrations'
    ORDER BY table_name, ordinal_position`
  const indexes = await sql<{ table: string; primary: boolean; unique: boolean; columns: string[]; predicate: string | null }[]>`
    SELECT c.relname AS "table", i.indisprimary AS "primary", i.indisunique AS "unique",
           array(SELECT a.attname FROM unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, n)
                 JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum ORDER BY k.n)::text[] AS "columns",
           pg_get_expr(i.indpred, i.indrelid) AS "predicate"
    FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace ns ON ns.oid = c.relnamespace
    WHERE ns.nspname = current_schema() AND c.relname <> 'schema_migrations'`
  const foreignKeys = await sql<{ table: string; target: string; columns: string[]; targetColumns: string[] }[]>`
    SELECT c.relname AS "table", t.relname AS "target",
           array(SELECT a.attname FROM unnest(f.conkey) WITH ORDINALITY AS k(attnum, n)
                 JOIN pg_attribute a ON a.attrelid = f.conrelid AND a.attnum = k.attnum ORDER BY k.n)::text[] AS "columns",
           array(SELECT a.attname FROM unnest(f.confkey) WITH ORDINALITY AS k(attnum, n)
                 JOIN pg_attribute a ON a.attrelid = f.confrelid AND a.attnum = k.attnum ORDER BY k.n)::text[] AS "targetColumns"
    FROM pg_constraint f JOIN pg_class c ON c.oid = f.conrelid JOIN pg_class t ON t.oid = f.confrelid
    JOIN pg_namespace ns ON ns.oid = c.relnamespace
    WHERE f.contype = 'f' AND ns.nspname = current_schema()`
  const schema: Schema = new Map()
  const shape = (table: string) => {
    if (!schema.has(table)) schema.set(table, { columns: [], indexes: [], foreignKeys: [] })
    return schema.get(table)!
  }
  for (const { table, ...column } of columns) shape(table).columns.push(column)
  for (const i of indexes) shape(i.table).indexes.push(indexKey(i.primary ? 'primary key' : i.unique ? 'unique' : 'index', i.columns, i.predicate))
  for (const f of foreignKeys) shape(f.table).foreignKeys.push(`(${f.columns.join(', ')}) → ${f.target}(${f.targetColumns.join(', ')})`)
  for (const table of schema.values()) {
    table.indexes.sort()
    table.foreignKeys.sort()
  }
  return schema
}

/** The PostgreSQL type a SQLite column must have (BOOLEAN_COLUMNS and docs/decisions.md). */
function expectedType(table: string, column: Column): string {
  if (column.type === 'INTEGER') return BOOLEAN_COLUMNS.includes(`${table}.${column.name}`) ? 'boolean' : 'bigint'
  return { TEXT: 'text', BLOB: 'bytea' }[column.type] ?? `(no mapping for SQLite ${column.type})`
}

/** A PostgreSQL default in SQLite's spelling: `''::text` → `''`, false → 0. */
function sqliteSpelling(pgDefault: string | null): string | null {
  if (pgDefault === null) return null
  const bare = pgDefault.replace(/::[a-z ]+$/, '')
  return { false: '0', true: '1' }[bare] ?? bare
}

/** Every difference, each naming its table and column (or index, or foreign key). */
function differences(sqlite: Schema, pg: Schema): string[] {
  const found: string[] = []
  for (const table of pg.keys()) if (!sqlite.has(table)) found.push(`${table}: a table in PostgreSQL only`)
  for (const [table, want] of sqlite) {
    const have = pg.get(table)
    if (!have) {
      found.push(`${table}: missing in PostgreSQL`)
      continue
    }
    const names = (cs: Column[]) => cs.map((c) => c.name).join(', ')
    if (names(want.columns) !== names(have.columns))
      found.push(`${table}: columns (in order) SQLite [${names(want.columns)}], PostgreSQL [${names(have.columns)}]`)
    for (const column of want.columns) {
      const other = have.columns.find((c) => c.name === column.name)
      const at = `${table}.${column.name}`
      if (!other) continue
      if (other.type !== expectedType(table, column)) found.push(`${at}: SQLite ${column.type} should be ${expectedType(table, column)}, is ${other.type}`)
      if (other.notNull !== column.notNull) found.push(`${at}: NOT NULL in ${column.notNull ? 'SQLite' : 'PostgreSQL'} only`)
      if (sqliteSpelling(other.default) !== column.default) found.push(`${at}: default SQLite ${column.default}, PostgreSQL ${other.default}`)
      if (other.identity !== column.identity) found.push(`${at}: generated id (identity) in ${column.identity ? 'SQLite' : 'PostgreSQL'} only`)
    }
    for (const index of want.indexes) if (!have.indexes.includes(index)) found.push(`${table}: ${index} missing in PostgreSQL`)
    for (const index of have.indexes) if (!want.indexes.includes(index)) found.push(`${table}: ${index} in PostgreSQL only`)
    for (const fk of want.foreignKeys) if (!have.foreignKeys.includes(fk)) found.push(`${table}: foreign key ${fk} missing in PostgreSQL`)
    for (const fk of have.foreignKeys) if (!want.foreignKeys.includes(fk)) found.push(`${table}: foreign key ${fk} in PostgreSQL only`)
  }
  return found
}

const latestSqliteVersion = () => loadMigrations().at(-1)!.version

describe('the PostgreSQL migration list', () => {
  test("is SQLite's list from the baseline (012) on: same numbers, the baseline first", () => {
    const pg = loadPostgresMigrations()
    expect(pg[0]?.name).toBe('012-baseline.sql')
    expect(pg[0]?.version).toBe(POSTGRES_BASELINE_VERSION)
    const sqliteFromBaseline = loadMigrations()
      .map((m) => m.version)
      .filter((v) => v >= POSTGRES_BASELINE_VERSION)
    expect(pg.map((m) => m.version)).toEqual(sqliteFromBaseline)
  })
})

describe.skipIf(!HAS_POSTGRES)('migratePostgres', () => {
  describe('on a fresh database', () => {
    const db = testDatabase({ empty: true })

    test("migrates to SQLite's latest version, recorded in schema_migrations; a second run applies nothing", async () => {
      const sql = db.connect()
      expect(await migratePostgres(sql)).toEqual(loadPostgresMigrations().map((m) => m.version))
      const rows = await sql<{ version: number; name: string; appliedAt: string }[]>`
        SELECT version, name, applied_at AS "appliedAt" FROM schema_migrations ORDER BY version`
      expect(rows.at(-1)!.version).toBe(latestSqliteVersion())
      expect(rows.map((r) => r.name)).toEqual(loadPostgresMigrations().map((m) => m.name))
      expect(Math.abs(Number(rows[0]!.appliedAt) - Date.now())).toBeLessThan(60_000)

      expect(await migratePostgres(sql)).toEqual([])
      expect(await sql`SELECT 1 FROM schema_migrations`).toHaveLength(rows.length)
    })

    test('has the same tables as SQLite: columns in order, types by the dialect rules, NOT NULL, defaults, keys, indexes, foreign keys', async () => {
      const sql = db.connect()
      await migratePostgres(sql)
      const found = differences(sqliteSchema(), await postgresSchema(sql))
      expect(found, 'src/db/migrations/pg/ has drifted from src/db/migrations/').toEqual([])
    })
  })

  describe('three gateways starting at once on an empty database', () => {
    const db = testDatabase({ empty: true })

    test('apply each migration exactly once: one gets the versions, the others [], nobody an error (5 rounds)', async () => {
      const versions = loadPostgresMigrations().map((m) => m.version)
      const admin = db.connect({ max: 1 })
      // A schema per round (each client's search_path) is an empty database for the migrator, with a
      // fresh race on creating schema_migrations every time.
      for (let round = 1; round <= 5; round++) {
        const schema = `round_${round}`
        await admin`CREATE SCHEMA ${admin(schema)}`
        const gateways = [1, 2, 3].map(() => db.connect({ max: 1, connection: { search_path: schema } }))
        const results = await Promise.all(gateways.map((sql) => migratePostgres(sql)))
        expect(
          results.map((r) => r.length).sort(),
          `round ${round}`,
        ).toEqual([0, 0, versions.length])
        expect(results.find((r) => r.length > 0)).toEqual(versions)
        const recorded = await admin<{ version: number }[]>`SELECT version FROM ${admin(schema)}.schema_migrations ORDER BY version`
        expect(recorded.map((r) => r.version)).toEqual(versions)
        await Promise.all(gateways.map((sql) => sql.end({ timeout: 5 })))
      }
    })
  })

  describe('the single-use rules that are constraints in SQLite', () => {
    const db = testDatabase()
    let sql: postgres.Sql
    const now = Date.now()

    beforeAll(async () => {
      sql = db.connect()
      await migratePostgres(sql)
      await sql`INSERT INTO teams (id, name, created_at) VALUES (1, 'team', ${now})`
      await sql`INSERT INTO chips (uid, team_id, kind, created_at) VALUES ('04A1B2C3D4E5F6', 1, 'ntag424', ${now})`
      await sql`INSERT INTO guestbook_contracts (id, team_id, name, symbol, chain_id, status, created_at) VALUES (1, 1, 'gb', 'GB', 31337, 'pending', ${now})`
      await sql`INSERT INTO guestbook_events (id, team_id, contract_id, name, token_id, metadata, created_at, updated_at)
                VALUES (1, 1, 1, 'event', '1', '{}', ${now}, ${now})`
      await sql`INSERT INTO stations (id, team_id, name, prefix, token_hash, created_at) VALUES (1, 1, 'door', 'tgs_', 'hash', ${now})`
    })
    afterAll(async () => {
      await sql?.end({ timeout: 5 })
    })

    const code = (promise: Promise<unknown>) => promise.then(() => 'no error', (error: { code?: string }) => error.code)

    test('a signature digest is used once: a second used_signatures row with the digest is 23505', async () => {
      await sql`INSERT INTO used_signatures (digest, used_at) VALUES ('0xabc', ${now})`
      expect(await code(sql`INSERT INTO used_signatures (digest, used_at) VALUES ('0xabc', ${now + 1})`)).toBe('23505')
    })

    test('one open check-in per chip per event (23505); once undone, the chip checks in again', async () => {
      const checkIn = () => sql`INSERT INTO check_ins (event_id, chip_uid, station_id, created_at) VALUES (1, '04A1B2C3D4E5F6', 1, ${now}) RETURNING id`
      const [first] = await checkIn()
      expect(await code(checkIn())).toBe('23505')
      await sql`UPDATE check_ins SET undone_at = ${now} WHERE id = ${first!.id}`
      expect(await checkIn()).toHaveLength(1)
    })

    test("the relayer's nonce is never reused: a second chain_txs row for (chain, sender, nonce) is 23505", async () => {
      const queue = (hash: string) => sql`
        INSERT INTO chain_txs (chain_id, sender, nonce, kind, data, gas, max_fee_per_gas, max_priority_fee_per_gas, raw_tx, tx_hash, initial_tx_hash, status, created_at)
        VALUES (31337, '0xSender', 7, 'transfer', '0x', 21000, '1', '1', '0x', ${hash}, ${hash}, 'queued', ${now})`
      await queue('0x01')
      expect(await code(queue('0x02'))).toBe('23505')
    })

    test('a chip mints once per event: a second guestbook_mints row for (event, chip) is 23505', async () => {
      const [tx] = await sql<{ id: string }[]>`
        INSERT INTO chain_txs (chain_id, sender, nonce, kind, data, gas, max_fee_per_gas, max_priority_fee_per_gas, raw_tx, tx_hash, initial_tx_hash, status, created_at)
        VALUES (31337, '0xSender', 8, 'guestbook_mint', '0x', 21000, '1', '1', '0x', '0x08', '0x08', 'queued', ${now}) RETURNING id`
      const mint = (recipient: string) => sql`
        INSERT INTO guestbook_mints (event_id, recipient, chip_uid, chain_tx_id, created_at) VALUES (1, ${recipient}, '04A1B2C3D4E5F6', ${tx!.id}, ${now})`
      await mint('0xAlice')
      expect(await code(mint('0xBob'))).toBe('23505')
    })
  })
})
