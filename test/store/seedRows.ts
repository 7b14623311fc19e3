/*
 * Rows of other repositories' tables that a store contract test needs as foreign-key parents,
 * written straight into either engine so a test depends only on the repository it covers.
 */
import type { PostgresStore } from '../../src/db/pg/store.js'
import type { SqliteStore, Store } from '../../src/db/store.js'

type Value = string | number | boolean | null

/** Inserts one row into `table` on the store's engine. @returns its `key` column */
export async function insertRow(store: Store, table: string, row: Record<string, Value>, key = 'id'): Promise<number> {
  if (store.backend === 'postgres') {
    const { sql } = store as PostgresStore
    const [inserted] = await sql<Record<string, number>[]>`INSERT INTO ${sql(table)} ${sql(row)} RETURNING ${sql(key)}`
    return inserted![key]!
  }
  // better-sqlite3 binds no booleans: SQLite's flags are 0/1.
  const values = Object.values(row).map((v) => (typeof v === 'boolean' ? Number(v) : v))
  const columns = Object.keys(row).join(', ')
  const placeholders = values.map(() => '?').join(', ')
  const inserted = (store as SqliteStore).db.prepare(`INSERT INTO ${table} (${columns}) VALUES (${placeholders}) RETURNING ${key}`).get(...values) as Record<string, number>
  return inserted[key]!
}

let txCounter = 0

/** An outbox row (chain_txs); `mined` with `reverted` set, or queued. */
export function insertChainTx(store: Store, { status = 'queued', reverted = null }: { status?: 'queued' | 'sent' | 'mined'; reverted?: boolean | null } = {}): Promise<number> {
  const n = ++txCounter
  const hash = `0x${n.toString(16).padStart(64, '0')}`
  return insertRow(store, 'chain_txs', {
    chain_id: 31337, sender: '0x00000000000000000000000000000000000000aa', nonce: n, kind: 'transfer', to_address: null, data: '0x',
    gas: 21000, max_fee_per_gas: '1', max_priority_fee_per_gas: '1', raw_tx: '0x', tx_hash: hash, initial_tx_hash: hash,
    status, reverted, block_number: status === 'mined' ? n : null, created_at: n,
  })
}

let stationCounter = 0

export function insertStation(store: Store, teamId: number): Promise<number> {
  const n = ++stationCounter
  return insertRow(store, 'stations', { team_id: teamId, name: `Station ${n}`, prefix: `s${n}`, token_hash: `station-hash-${n}`, created_at: 1 })
}

/** An OTP (and the ref it was issued on) for a chip. */
export async function insertOtp(store: Store, { code, teamId, chipUid }: { code: string; teamId: number; chipUid: string }): Promise<string> {
  await store.refs.insert({ id: `ref-${code}`, chipUid, teamId, source: 'station', authenticated: true, linksModule: false, counter: null, now: 1 })
  await insertRow(store, 'otps', { code, team_id: teamId, ref_id: `ref-${code}`, chip_uid: chipUid, type: 'PHYGITAL_CLAIM', created_at: 1, expires_at: 10_000 }, 'code')
  return code
}

/** A team with its chips (14 hex digits each). @returns the team's id */
export async function insertTeam(store: Store, chipUids: string[]): Promise<number> {
  const teamId = await store.teams.insert({ name: 'Team', redirectUrl: null, now: 1 })
  for (const uid of chipUids) await store.chips.insert({ uid, teamId, groupId: null, kind: 'ntag424', redirectUrl: null, now: 1 })
  return teamId
}

/** A one-tap token of the test contract. @returns its row id */
export function insertToken(store: Store, teamId: number, tokenId = '1'): Promise<number> {
  return store.tokens.insert({
    teamId, chainId: 31337, contractAddress: '0x00000000000000000000000000000000000000c0', tokenId, metadata: null,
    twoTapClaim: false, claimDelaySeconds: 0, claimWindowSeconds: 0, now: 1,
  })
}
