import type { ClaimRow, ClaimStatsRow, ClaimVia, createClaimsRepository } from '../claims.js'
import type { AsyncRepository } from '../types.js'
import type { PgQuery } from './connect.js'

const columns = `id, station_id, kind, chip_uid, token_id, guestbook_event_id, check_in_id, otp_code, step, link_hash, phone_hash,
  via, recipient, transfer_id, guestbook_mint_id, chain_tx_id, registration_id, created_at, expires_at, opened_at, claimed_at`

export function createPgClaimsRepository(sql: PgQuery): AsyncRepository<ReturnType<typeof createClaimsRepository>> {
  // A claim takes an address once: at the kiosk (or known) while open, or from the phone that opened it.
  // The conditional UPDATE is the rule: a racer blocked on the row re-checks it (READ COMMITTED) and finds it taken.
  const fromOpen = (c: { via: ClaimVia; phoneHash: string | null }) =>
    sql`((${c.via}::text = 'phone' AND step = 'opened' AND phone_hash = ${c.phoneHash}::text) OR (${c.via}::text <> 'phone' AND step = 'open'))`
  return {
    async insert(c) {
      const [row] = await sql<{ id: number }[]>`INSERT INTO claims (station_id, kind, chip_uid, token_id, guestbook_event_id, check_in_id, otp_code, step, created_at, expires_at)
        VALUES (${c.stationId}, ${c.kind}, ${c.chipUid}, ${c.tokenId}, ${c.guestbookEventId}, ${c.checkInId}, ${c.otpCode}, 'open', ${c.createdAt}, ${c.expiresAt})
        RETURNING id`
      return row!.id
    },
    async get(id) {
      const [row] = await sql<ClaimRow[]>`SELECT ${sql.unsafe(columns)} FROM claims WHERE id = ${id}`
      return row
    },
    async findByLink(linkHash) {
      const [row] = await sql<ClaimRow[]>`SELECT ${sql.unsafe(columns)} FROM claims WHERE link_hash = ${linkHash}`
      return row
    },
    async findByTx(chainTxId) {
      const [row] = await sql<ClaimRow[]>`SELECT ${sql.unsafe(columns)} FROM claims WHERE chain_tx_id = ${chainTxId}`
      return row
    },
    async findByTransfer(transferId) {
      const [row] = await sql<ClaimRow[]>`SELECT ${sql.unsafe(columns)} FROM claims WHERE transfer_id = ${transferId}`
      return row
    },
    async setLink(id, linkHash) {
      const rows = await sql`UPDATE claims SET link_hash = ${linkHash} WHERE id = ${id} AND step = 'open' RETURNING id`
      return rows.length === 1
    },
    // The first phone to open the link takes it: the conditional update decides between two phones.
    async markOpened(id, phoneHash, now) {
      const rows = await sql`UPDATE claims SET step = 'opened', phone_hash = ${phoneHash}, opened_at = ${now} WHERE id = ${id} AND step = 'open' RETURNING id`
      return rows.length === 1
    },
    async markClaimed(c) {
      const rows = await sql`UPDATE claims SET step = 'claimed', via = ${c.via}, recipient = ${c.recipient}, transfer_id = ${c.transferId},
          guestbook_mint_id = ${c.guestbookMintId}, chain_tx_id = ${c.chainTxId}, claimed_at = ${c.now}
        WHERE id = ${c.id} AND ${fromOpen(c)} RETURNING id`
      return rows.length === 1
    },
    async markRegistered(c) {
      const rows = await sql`UPDATE claims SET step = 'registered', via = ${c.via}, recipient = ${c.recipient}, registration_id = ${c.registrationId}, claimed_at = ${c.now}
        WHERE id = ${c.id} AND ${fromOpen(c)} RETURNING id`
      return rows.length === 1
    },
    async setTx(id, chainTxId) {
      await sql`UPDATE claims SET chain_tx_id = ${chainTxId} WHERE id = ${id}`
    },
    async countClaimed(stationId) {
      const [row] = await sql<{ n: number }[]>`SELECT count(*) AS n FROM claims WHERE station_id = ${stationId} AND step = 'claimed'`
      return row!.n
    },
    async stats(stationId, now) {
      return [
        ...(await sql<ClaimStatsRow[]>`SELECT kind, token_id, guestbook_event_id, count(*) AS taps,
            count(*) FILTER (WHERE step = 'claimed') AS claimed,
            count(*) FILTER (WHERE step = 'registered') AS registered,
            count(*) FILTER (WHERE link_hash IS NOT NULL) AS links_shown,
            count(*) FILTER (WHERE opened_at IS NOT NULL) AS links_opened,
            count(*) FILTER (WHERE via = 'phone') AS links_used,
            count(*) FILTER (WHERE link_hash IS NOT NULL AND step IN ('open', 'opened') AND expires_at <= ${now}) AS links_expired,
            count(*) FILTER (WHERE step IN ('open', 'opened') AND expires_at <= ${now}) AS expired
          FROM claims WHERE station_id = ${stationId} GROUP BY kind, token_id, guestbook_event_id ORDER BY min(id)`),
      ]
    },
    async setRetried(id, t) {
      await sql`UPDATE claims SET transfer_id = coalesce(${t.transferId}::bigint, transfer_id),
          guestbook_mint_id = coalesce(${t.guestbookMintId}::bigint, guestbook_mint_id), chain_tx_id = ${t.chainTxId}
        WHERE id = ${id}`
    },
  }
}
