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
 * Migration 017 (issue 25) gives guests a payment state and events the admitUnpaid setting, and
 * rebuilds door_refusals for the not_paid reason (SQLite changes a CHECK by copying the table). A data
 * dir from before it keeps every guest admissible, every event strict, and every refusal it counted.
 */
test('017 keeps guests paid, events refusing unpaid guests, and every refusal; not_paid is then a reason', () => {
  dir = makeTempDir('tapgate-017-')
  const db = new Database(path.join(dir, 'old.sqlite'))
  try {
    db.pragma('foreign_keys = ON')
    const migrations = loadMigrations()
    expect(migrate(db, migrations.filter((m) => m.version < 17)).at(-1)).toBe(16)
    db.exec(`
      INSERT INTO teams (id, name, created_at) VALUES (1, 'Team', 1);
      INSERT INTO guestbook_contracts (id, team_id, name, symbol, chain_id, address, status, created_at) VALUES (1, 1, 'Book', 'BK', 31337, '0x00000000000000000000000000000000000000bb', 'confirmed', 1);
      INSERT INTO guestbook_events (id, team_id, contract_id, name, token_id, metadata, created_at, updated_at) VALUES (1, 1, 1, 'Opening', '1', '{}', 1, 1);
      INSERT INTO stations (id, team_id, name, prefix, token_hash, created_at, mode, event_id) VALUES (7, 1, 'Door', 'd', 'hd', 1, 'checkin', 1);
      INSERT INTO attendees (id, event_id, name, ticket_type, ticket_code, search, created_at, updated_at) VALUES (1, 1, 'Ada', 'GA', 'T1', 'ada t1', 1, 1);
      INSERT INTO door_refusals (id, event_id, station_id, attendee_id, chip_uid, reason, created_at)
        VALUES (3, 1, 7, 1, NULL, 'not_allowed', 5), (4, 1, 7, NULL, '04AA0000000001', 'not_on_list', 6);
    `)
    const refusals = db.prepare('SELECT * FROM door_refusals ORDER BY id').all()
    expect(() => db.exec("INSERT INTO door_refusals (event_id, station_id, reason, created_at) VALUES (1, 7, 'not_paid', 7)")).toThrow(/CHECK/)

    expect(migrate(db, migrations.filter((m) => m.version <= 17))).toEqual([17])
    expect(db.pragma('foreign_key_check')).toEqual([])
    expect(db.prepare('SELECT * FROM door_refusals ORDER BY id').all()).toEqual(refusals)
    expect(db.prepare('SELECT paid FROM attendees').all()).toEqual([{ paid: 1 }])
    expect(db.prepare('SELECT admit_unpaid AS a FROM guestbook_events').all()).toEqual([{ a: 0 }])
    db.exec("INSERT INTO door_refusals (event_id, station_id, attendee_id, reason, created_at) VALUES (1, 7, 1, 'not_paid', 8)")
    expect(() => db.exec("INSERT INTO door_refusals (event_id, station_id, reason, created_at) VALUES (1, 7, 'dance', 9)")).toThrow(/CHECK/)
    // The rebuilt table still points at its rows, and its index is back.
    expect(() => db.exec("INSERT INTO door_refusals (event_id, station_id, reason, created_at) VALUES (1, 99, 'not_paid', 9)")).toThrow(/FOREIGN KEY/)
    expect(db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'door_refusals'").all()).toEqual([{ name: 'door_refusals_event' }])
  } finally {
    db.close()
  }
})
