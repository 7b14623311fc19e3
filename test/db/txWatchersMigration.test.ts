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
 * Migration 014 gives every outbox row the station that watches it. A data dir from before it has
 * check-ins and claims that point at their transactions; the relayer no longer looks them up, so the
 * migration must record, once, what it used to find at each step.
 */
test('014 records the watcher of the transactions a data dir already has', () => {
  dir = makeTempDir('tapgate-014-')
  const db = new Database(path.join(dir, 'old.sqlite'))
  try {
    const migrations = loadMigrations()
    const v14 = migrations.findIndex((m) => m.version === 14)
    expect(migrate(db, migrations.slice(0, v14)).at(-1)).toBe(13)
    // Only the columns the migration reads: a reference check would ask for the whole graph of rows.
    db.pragma('foreign_keys = OFF')
    const outbox = db.prepare(
      `INSERT INTO chain_txs (id, chain_id, sender, nonce, kind, data, gas, max_fee_per_gas, max_priority_fee_per_gas, raw_tx, tx_hash,
         initial_tx_hash, status, created_at) VALUES (?, 31337, '0xsender', ?, ?, '0x', 1, '1', '1', '0x', ?, ?, 'queued', 1)`,
    )
    for (const [id, kind] of [[1, 'guestbook_mint'], [2, 'guestbook_mint'], [3, 'transfer'], [4, 'transfer'], [5, 'deploy_guestbook']] as const)
      outbox.run(id, id, kind, `0xh${id}`, `0xh${id}`)
    db.exec(`
      INSERT INTO stations (id, team_id, name, prefix, token_hash, created_at) VALUES (10, 1, 'Door', 'd', 'hd', 1), (11, 1, 'Shop', 's', 'hs', 1);
      -- A check-in's mint (tx 1); a check-in whose claim hand-off minted (tx 2).
      INSERT INTO check_ins (id, event_id, chip_uid, station_id, chain_tx_id, created_at) VALUES (20, 1, 'A', 10, 1, 1), (21, 1, 'B', 10, 2, 1);
      INSERT INTO claims (id, station_id, kind, chip_uid, check_in_id, otp_code, step, chain_tx_id, created_at, expires_at)
        VALUES (30, 10, 'guestbook', 'B', 21, 'otp-b', 'claimed', 2, 1, 9);
      -- A claim's transfer that reverted and was re-signed as tx 4: the claim still names tx 3.
      INSERT INTO transfers (id, token_id, team_id, recipient, method, via, chain_tx_id, created_at) VALUES (40, 1, 1, '0xr', 'mintNFT', 'otp', 4, 1);
      INSERT INTO claims (id, station_id, kind, chip_uid, token_id, otp_code, step, transfer_id, chain_tx_id, created_at, expires_at)
        VALUES (31, 11, 'token', 'C', 1, 'otp-c', 'claimed', 40, 3, 1, 9);
    `)
    expect(migrate(db, migrations.slice(0, v14 + 1))).toEqual([14])
    const watchers = db.prepare('SELECT id, station_id AS s, check_in_id AS c, claim_id AS k FROM chain_txs ORDER BY id').all()
    expect(watchers).toEqual([
      { id: 1, s: 10, c: 20, k: null },
      { id: 2, s: 10, c: 21, k: 30 },
      { id: 3, s: 11, c: null, k: 31 },
      { id: 4, s: 11, c: null, k: 31 },
      { id: 5, s: null, c: null, k: null },
    ])
  } finally {
    db.close()
  }
})
