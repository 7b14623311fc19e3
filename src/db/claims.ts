import type { Db } from './sqlite/openDatabase.js'

export type ClaimRowStep = 'open' | 'opened' | 'registered' | 'claimed'
export type ClaimVia = 'known' | 'phone' | 'kiosk'

export type ClaimRow = {
  id: number
  stationId: number
  kind: 'token' | 'guestbook'
  chipUid: string
  tokenId: number | null
  guestbookEventId: number | null
  checkInId: number | null
  otpCode: string
  step: ClaimRowStep
  linkHash: string | null
  phoneHash: string | null
  via: ClaimVia | null
  recipient: string | null
  transferId: number | null
  guestbookMintId: number | null
  chainTxId: number | null
  registrationId: number | null
  createdAt: number
  expiresAt: number
  openedAt: number | null
  claimedAt: number | null
}

const columns = `id, station_id AS stationId, kind, chip_uid AS chipUid, token_id AS tokenId,
  guestbook_event_id AS guestbookEventId, check_in_id AS checkInId, otp_code AS otpCode, step,
  link_hash AS linkHash, phone_hash AS phoneHash, via, recipient, transfer_id AS transferId,
  guestbook_mint_id AS guestbookMintId, chain_tx_id AS chainTxId, registration_id AS registrationId,
  created_at AS createdAt, expires_at AS expiresAt, opened_at AS openedAt, claimed_at AS claimedAt`

/** Per product (token) or event of a station: what its claims came to, for the staff view. */
export type ClaimStatsRow = {
  kind: 'token' | 'guestbook'
  tokenId: number | null
  guestbookEventId: number | null
  taps: number
  claimed: number
  registered: number
  linksShown: number
  linksOpened: number
  /** Links whose phone sent an address (claimed or registered through it). */
  linksUsed: number
  /** Links shown and never used before their claim expired. */
  linksExpired: number
  /** Claims that expired waiting for an address. */
  expired: number
}

// A claim takes an address once: at the kiosk (or known) while open, or from the phone that opened it.
const fromOpen = `((@via = 'phone' AND step = 'opened' AND phone_hash = @phoneHash) OR (@via <> 'phone' AND step = 'open'))`

/** Claims (migration 008): a token or event token waiting for an address, and its one-time link. */
export function createClaimsRepository(db: Db) {
  const insert = db.prepare(
    `INSERT INTO claims (station_id, kind, chip_uid, token_id, guestbook_event_id, check_in_id, otp_code, step, created_at, expires_at)
     VALUES (@stationId, @kind, @chipUid, @tokenId, @guestbookEventId, @checkInId, @otpCode, 'open', @createdAt, @expiresAt)`,
  )
  const byId = db.prepare<[number], ClaimRow>(`SELECT ${columns} FROM claims WHERE id = ?`)
  const byLink = db.prepare<[string], ClaimRow>(`SELECT ${columns} FROM claims WHERE link_hash = ?`)
  const byTx = db.prepare<[number], ClaimRow>(`SELECT ${columns} FROM claims WHERE chain_tx_id = ?`)
  const byTransfer = db.prepare<[number], ClaimRow>(`SELECT ${columns} FROM claims WHERE transfer_id = ?`)
  const setLink = db.prepare<[string, number]>(`UPDATE claims SET link_hash = ? WHERE id = ? AND step = 'open'`)
  // The first phone to open the link takes it: the conditional update decides between two phones.
  const open = db.prepare<[string, number, number]>(`UPDATE claims SET step = 'opened', phone_hash = ?, opened_at = ? WHERE id = ? AND step = 'open'`)
  const claimed = db.prepare(
    `UPDATE claims SET step = 'claimed', via = @via, recipient = @recipient, transfer_id = @transferId,
       guestbook_mint_id = @guestbookMintId, chain_tx_id = @chainTxId, claimed_at = @now
     WHERE id = @id AND ${fromOpen}`,
  )
  const registered = db.prepare(
    `UPDATE claims SET step = 'registered', via = @via, recipient = @recipient, registration_id = @registrationId, claimed_at = @now
     WHERE id = @id AND ${fromOpen}`,
  )
  const setTx = db.prepare<[number, number]>('UPDATE claims SET chain_tx_id = ? WHERE id = ?')
  const retried = db.prepare(
    `UPDATE claims SET transfer_id = coalesce(@transferId, transfer_id), guestbook_mint_id = coalesce(@guestbookMintId, guestbook_mint_id), chain_tx_id = @chainTxId WHERE id = @id`,
  )
  const claimedCount = db.prepare<[number], { n: number }>(`SELECT count(*) AS n FROM claims WHERE station_id = ? AND step = 'claimed'`)
  const stats = db.prepare<[{ now: number; stationId: number }], ClaimStatsRow>(
    `SELECT kind, token_id AS tokenId, guestbook_event_id AS guestbookEventId, count(*) AS taps,
       count(*) FILTER (WHERE step = 'claimed') AS claimed,
       count(*) FILTER (WHERE step = 'registered') AS registered,
       count(*) FILTER (WHERE link_hash IS NOT NULL) AS linksShown,
       count(*) FILTER (WHERE opened_at IS NOT NULL) AS linksOpened,
       count(*) FILTER (WHERE via = 'phone') AS linksUsed,
       count(*) FILTER (WHERE link_hash IS NOT NULL AND step IN ('open', 'opened') AND expires_at <= @now) AS linksExpired,
       count(*) FILTER (WHERE step IN ('open', 'opened') AND expires_at <= @now) AS expired
     FROM claims WHERE station_id = @stationId GROUP BY kind, token_id, guestbook_event_id ORDER BY min(id)`,
  )
  return {
    insert: (c: Pick<ClaimRow, 'stationId' | 'kind' | 'chipUid' | 'tokenId' | 'guestbookEventId' | 'checkInId' | 'otpCode' | 'createdAt' | 'expiresAt'>) =>
      Number(insert.run(c).lastInsertRowid),
    get: (id: number) => byId.get(id),
    findByLink: (linkHash: string) => byLink.get(linkHash),
    findByTx: (chainTxId: number) => byTx.get(chainTxId),
    findByTransfer: (transferId: number) => byTransfer.get(transferId),
    /** A new link replaces the claim's earlier one. @returns false when the claim is no longer open */
    setLink: (id: number, linkHash: string) => setLink.run(linkHash, id).changes === 1,
    /** @returns false when another phone opened it first (or it is no longer open) */
    markOpened: (id: number, phoneHash: string, now: number) => open.run(phoneHash, now, id).changes === 1,
    /** @returns false when the claim was claimed (or registered) meanwhile */
    markClaimed: (c: { id: number; via: ClaimVia; phoneHash: string | null; recipient: string; transferId: number | null; guestbookMintId: number | null; chainTxId: number; now: number }) =>
      claimed.run(c).changes === 1,
    markRegistered: (c: { id: number; via: ClaimVia; phoneHash: string | null; recipient: string; registrationId: number; now: number }) =>
      registered.run(c).changes === 1,
    /** A re-signed transfer moved to a new transaction: the claim follows it. */
    setTx: (id: number, chainTxId: number) => setTx.run(chainTxId, id),
    countClaimed: (stationId: number) => claimedCount.get(stationId)!.n,
    stats: (stationId: number, now: number) => stats.all({ now, stationId }),
    /** Staff retried a failed claim: it follows the new transfer (or mint) and its transaction. */
    setRetried: (id: number, t: { transferId: number | null; guestbookMintId: number | null; chainTxId: number }) => retried.run({ id, ...t }),
  }
}
