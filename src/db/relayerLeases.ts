import type { Db } from './sqlite/openDatabase.js'

/**
 * The database's clock in epoch-ms. SQLite is a library, so every process sharing the file runs on
 * this machine and this is the one clock they share; PostgreSQL's twin is
 * `(extract(epoch FROM clock_timestamp()) * 1000)::bigint`, the server's clock, never a gateway's.
 */
const dbNowMs = "CAST(unixepoch('subsec') * 1000 AS INTEGER)"

export type LeaseKey = { chainId: number; sender: string; holder: string }

/**
 * One active sender per (chain, relayer account) across gateway processes
 * (docs/chain.md, "Several gateways"). Taking the lease from another holder
 * raises its epoch; renewing keeps it. Writes that must be fenced check
 * `holds` inside their own transaction.
 */
export function createRelayerLeasesRepository(db: Db) {
  // One statement: a free, expired or own lease is taken or renewed; a live lease of another holder is left alone (no row back).
  const acquire = db.prepare<{ chainId: number; sender: string; holder: string; leaseMs: number }, { epoch: number; expiresAt: number }>(
    `INSERT INTO relayer_leases (chain_id, sender, holder, epoch, expires_at)
     VALUES (@chainId, @sender, @holder, 1, ${dbNowMs} + @leaseMs)
     ON CONFLICT (chain_id, sender) DO UPDATE SET
       epoch = CASE WHEN relayer_leases.holder = excluded.holder THEN relayer_leases.epoch ELSE relayer_leases.epoch + 1 END,
       holder = excluded.holder,
       expires_at = excluded.expires_at
     WHERE relayer_leases.holder = excluded.holder OR relayer_leases.expires_at < ${dbNowMs}
     RETURNING epoch, expires_at AS expiresAt`,
  )
  const holds = db.prepare<[number, string, string, number], { one: number }>(
    'SELECT 1 AS one FROM relayer_leases WHERE chain_id = ? AND sender = ? AND holder = ? AND epoch = ?',
  )
  const release = db.prepare<[number, string, string]>('UPDATE relayer_leases SET expires_at = 0 WHERE chain_id = ? AND sender = ? AND holder = ?')
  const get = db.prepare<[number, string], { holder: string; epoch: number; expiresAt: number }>(
    'SELECT holder, epoch, expires_at AS expiresAt FROM relayer_leases WHERE chain_id = ? AND sender = ?',
  )

  return {
    /** Takes or renews the lease for `leaseMs` of database time: its epoch, or null while another holder's lease runs. */
    acquire: (key: LeaseKey, leaseMs: number): number | null => acquire.get({ ...key, leaseMs })?.epoch ?? null,
    /**
     * Whether `holder` still holds the lease at `epoch`. Expiry alone does not fence: until someone
     * takes the lease (which raises the epoch, and serializes with this check) nobody else has acted.
     */
    holds: (key: LeaseKey, epoch: number): boolean => holds.get(key.chainId, key.sender, key.holder, epoch) !== undefined,
    /** Gives the lease up now (a gateway stopping): another takes it at its next poll, not after the lease time. */
    release: (key: LeaseKey) => release.run(key.chainId, key.sender, key.holder).changes === 1,
    get: (chainId: number, sender: string) => get.get(chainId, sender),
  }
}
