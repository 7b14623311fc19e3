import fs from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, expect, test } from 'vitest'
import { loadMigrations } from '../../src/db/migrations.js'
import { migrate } from '../../src/db/sqlite/migrate.js'
import { makeTempDir } from '../helpers/gateway.js'

let dir: string | undefined
afterEach(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true })
})

/*
 * Migration 015 rebuilds check_ins and stations (SQLite changes a column's constraint by copying the
 * table), while claims, station_events and kiosk tokens reference them. With foreign keys on, as every
 * gateway opens its database, the rows and their references must come through whole.
 */
test('015 keeps every check-in, station and what references them; a check-in may then be a guest without a chip', () => {
  dir = makeTempDir('tapgate-015-')
  const db = new Database(path.join(dir, 'old.sqlite'))
  try {
    db.pragma('foreign_keys = ON')
    const migrations = loadMigrations()
    expect(migrate(db, migrations.filter((m) => m.version < 15)).at(-1)).toBe(14)
    db.exec(`
      INSERT INTO teams (id, name, created_at) VALUES (1, 'Team', 1);
      INSERT INTO chips (uid, team_id, kind, created_at) VALUES ('04AA0000000001', 1, 'ntag424', 1), ('04BB0000000002', 1, 'ntag424', 1);
      INSERT INTO guestbook_contracts (id, team_id, name, symbol, chain_id, address, status, created_at) VALUES (1, 1, 'Book', 'BK', 31337, '0x00000000000000000000000000000000000000bb', 'confirmed', 1);
      INSERT INTO guestbook_events (id, team_id, contract_id, name, token_id, metadata, created_at, updated_at) VALUES (1, 1, 1, 'Opening', '1', '{}', 1, 1);
      INSERT INTO stations (id, team_id, name, prefix, token_hash, created_at, mode, event_id, in_process, test_until)
        VALUES (7, 1, 'Door', 'd', 'hd', 1, 'checkin', 1, 1, 99), (8, 1, 'Shop', 's', 'hs', 1, 'claim', NULL, 0, NULL);
      INSERT INTO kiosk_tokens (station_id, prefix, token_hash, created_at) VALUES (7, 'k', 'hk', 1);
      INSERT INTO station_events (station_id, kind, data, created_at) VALUES (7, 'mode', '{}', 1);
      INSERT INTO refs (id, chip_uid, team_id, source, authenticated, created_at) VALUES ('r1', '04BB0000000002', 1, 'sun', 1, 1);
      INSERT INTO otps (code, team_id, ref_id, chip_uid, type, guestbook_event_id, created_at, expires_at) VALUES ('o1', 1, 'r1', '04BB0000000002', 'GUESTBOOK_EVENT', 1, 1, 9);
      INSERT INTO check_ins (id, event_id, chip_uid, station_id, manual, created_at, undone_at) VALUES (20, 1, '04AA0000000001', 7, 1, 5, NULL), (21, 1, '04BB0000000002', 7, 0, 6, 8);
      INSERT INTO claims (id, station_id, kind, chip_uid, check_in_id, otp_code, step, created_at, expires_at) VALUES (30, 7, 'guestbook', '04BB0000000002', 21, 'o1', 'open', 6, 9);
    `)
    const stations = db.prepare('SELECT id, team_id, name, prefix, token_hash, created_at, revoked_at, mode, event_id, in_process, test_until FROM stations ORDER BY id').all()
    const checkIns = db.prepare('SELECT id, event_id, chip_uid, station_id, manual, mint_id, chain_tx_id, created_at, undone_at FROM check_ins ORDER BY id').all()

    expect(migrate(db, migrations.filter((m) => m.version <= 15))).toEqual([15])
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1)
    expect(db.pragma('foreign_key_check')).toEqual([])
    expect(db.prepare('SELECT id, team_id, name, prefix, token_hash, created_at, revoked_at, mode, event_id, in_process, test_until FROM stations ORDER BY id').all()).toEqual(stations)
    expect(db.prepare('SELECT id, event_id, chip_uid, station_id, manual, mint_id, chain_tx_id, created_at, undone_at FROM check_ins ORDER BY id').all()).toEqual(checkIns)
    expect(db.prepare('SELECT attendee_id AS a, left_at AS l FROM check_ins').all()).toEqual([{ a: null, l: null }, { a: null, l: null }])
    // The references still point at the rebuilt tables: a claim of a missing check-in is refused, a new station mode accepted.
    expect(() => db.exec("INSERT INTO claims (station_id, kind, chip_uid, check_in_id, otp_code, step, created_at, expires_at) VALUES (7, 'guestbook', '04BB0000000002', 999, 'o1', 'open', 6, 9)")).toThrow(/FOREIGN KEY/)
    db.exec("UPDATE stations SET mode = 'bind' WHERE id = 7")
    expect(() => db.exec("UPDATE stations SET mode = 'dance' WHERE id = 7")).toThrow(/CHECK/)
    // A guest found by name checks in without a chip; a check-in with neither is refused.
    db.exec("INSERT INTO attendees (id, event_id, name, ticket_type, ticket_code, search, created_at, updated_at) VALUES (1, 1, 'Ada', 'GA', 'T1', 'ada t1', 1, 1)")
    db.exec('INSERT INTO check_ins (event_id, attendee_id, station_id, created_at) VALUES (1, 1, 7, 10)')
    expect(() => db.exec('INSERT INTO check_ins (event_id, station_id, created_at) VALUES (1, 7, 11)')).toThrow(/CHECK/)
    expect(() => db.exec('INSERT INTO check_ins (event_id, attendee_id, station_id, created_at) VALUES (1, 1, 7, 12)')).toThrow(/UNIQUE/)
  } finally {
    db.close()
  }
})

test('a migration that leaves a reference without its row is not applied', () => {
  dir = makeTempDir('tapgate-fk-')
  const db = new Database(path.join(dir, 'fk.sqlite'))
  try {
    db.pragma('foreign_keys = ON')
    const broken = [
      { version: 1, name: '001-a.sql', sql: 'CREATE TABLE parent (id INTEGER PRIMARY KEY); CREATE TABLE child (id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES parent(id));' },
      { version: 2, name: '002-b.sql', sql: 'INSERT INTO child (id, parent_id) VALUES (1, 42);' },
    ]
    expect(() => migrate(db, broken)).toThrow(/1 reference\(s\) without their row, e\.g\. child rowid 1 → parent/)
    expect(db.pragma('user_version', { simple: true })).toBe(0)
    expect(db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'child'").get()).toEqual({ n: 0 })
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1)
  } finally {
    db.close()
  }
})
