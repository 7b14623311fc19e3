import type { Address } from 'viem'
import type { StationRow } from '../db/stations.js'
import type { Repositories, Tx } from '../db/types.js'
import { ConflictError, NotFoundError, UnavailableError } from '../errors.js'
import { queueMint } from '../guestbook/guestbookChain.js'
import type { Relayer } from '../relayer/relayer.js'
import { admitGuest } from '../door/admitEntry.js'
import { chipGuest, hasGuestList } from '../door/doorGuest.js'
import type { DoorResult, DoorState } from '../door/doorResult.js'
import { type CheckInDeps, type CheckInResult, checkInChip } from '../door/checkIns.js'
import { txStatusOf } from '../feed/txProgress.js'
import type { FeedHub } from '../feed/feedHub.js'
import { kioskCounts, kioskStation, teamCounts } from './kioskViews.js'
import type { CheckInSummary, StaffEventData } from '../wire/feedProtocol.js'
import { watchTx } from '../feed/txProgress.js'
import { appendCheckInRows, isCheckInStation } from '../stations/recordAcceptedTap.js'

/** What a staff action needs: a check-in's (the store tells the kiosks and the relayer of what it commits). */
export type KioskDeps = CheckInDeps

/** The staff view's state also reads the live side: the relayer's chains and the kiosks connected. */
export type StaffStateDeps = KioskDeps & { feed: Pick<FeedHub, 'subscribers'>; relayer?: Pick<Relayer, 'status'> }

/** Staff may undo a check-in this long after it was made. */
export const UNDO_WINDOW_MS = 2 * 60_000
export const MAX_TEST_CHIP_SECONDS = 600

export const staffRow = (tx: Tx, stationId: number, data: StaffEventData, now: number) => tx.stationEvents.append(stationId, 'staff', data, now)

export async function freshStation(store: Repositories, stationId: number): Promise<StationRow> {
  const station = await store.stations.get(stationId)
  if (!station || station.revokedAt !== null) throw new NotFoundError('station_not_found', `No active station with id ${stationId}`)
  return station
}

/**
 * POST /kiosk/staff/check-in: a dead badge checked in by UID, marked manual. The same check-in as
 * a tap's (one per chip per event; a wallet's mint queued; at an event with a guest list, the door's
 * rules for the chip's guest), with a staff row beside it.
 *
 * @throws ConflictError station_not_checkin / not_on_list; NotFoundError chip_not_found
 */
export async function manualCheckIn(deps: KioskDeps, p: { stationId: number; uid: string }): Promise<{ state: DoorState; checkIn: CheckInSummary | null }> {
  const { store } = deps
  const now = deps.now()
  return store.tx(async (tx) => {
    const station = await freshStation(tx, p.stationId)
    if (!isCheckInStation(station)) throw new ConflictError('station_not_checkin', 'The station is not in check-in mode: set its mode and event first')
    const chip = await tx.chips.get(p.uid)
    if (!chip || chip.teamId !== station.teamId) throw new NotFoundError('chip_not_found', `No chip of this station's team has UID ${p.uid}`)
    const guest = await chipGuest(tx, station.eventId, p.uid)
    if (!guest && (await hasGuestList(tx, station.eventId)))
      throw new ConflictError('not_on_list', `Chip ${p.uid} is on nobody's ticket for this event: find the guest by name`)
    const result = guest
      ? await admitGuest(tx, deps, { station, attendee: guest, uid: p.uid, manual: true, now })
      : await checkInChip(tx, deps, { station, uid: p.uid, manual: true, now })
    const { summary: checkIn } = await appendCheckInRows(tx, station.id, result, { uid: p.uid, counter: null }, now)
    await staffRow(tx, station.id, { action: 'manual_check_in', summary: manualSummary(result, p.uid, checkIn), ...(checkIn ? { checkInId: checkIn.id } : {}) }, now)
    return { state: result.state, checkIn }
  })
}

/** What a manual check-in did, for the staff feed. */
export function manualSummary(result: CheckInResult | DoorResult, who: string, checkIn: CheckInSummary | null): string {
  if (result.state === 'accepted') return `checked in ${who} by hand`
  if (result.state === 'reentry') return `let ${who} back in by hand`
  if (result.state === 'already' && checkIn) return `${who} was already checked in at ${checkIn.at} (${checkIn.stationName})`
  return `${who}: ${result.state}${'detail' in result && result.detail ? ` (${result.detail})` : ''}`
}

/**
 * POST /kiosk/staff/undo: the station's last check-in, if made within 2 minutes. The count drops;
 * a queued or mined token stays (a signed transaction is not taken back), and the answer says so.
 *
 * @throws NotFoundError nothing_to_undo; ConflictError undo_window_passed
 */
export function undoLastCheckIn(deps: KioskDeps, p: { stationId: number }): Promise<{ checkInId: number; tokenStays: boolean }> {
  const { store } = deps
  const now = deps.now()
  return store.tx(async (tx) => {
    const station = await freshStation(tx, p.stationId)
    const last = await tx.checkIns.lastAtStation(station.id)
    if (!last) throw new NotFoundError('nothing_to_undo', 'This station has no check-in to undo')
    if (now - last.createdAt > UNDO_WINDOW_MS)
      throw new ConflictError('undo_window_passed', `The last check-in here was at ${new Date(last.createdAt).toISOString()}: only one made in the last 2 minutes can be undone`)
    await tx.checkIns.undo(last.id, now)
    const tokenStays = last.mintId !== null
    await tx.stationEvents.append(station.id, 'undo', { checkInId: last.id, tokenStays }, now)
    const summary = `undid check-in ${last.id}${tokenStays ? '; its token stays' : ''}`
    await staffRow(tx, station.id, { action: 'undo', summary, checkInId: last.id }, now)
    return { checkInId: last.id, tokenStays }
  })
}

/**
 * POST /kiosk/staff/retry: a failed (reverted) mint of one of this station's check-ins. A reverted
 * guestbook mint is never re-sent by the relayer (settleTx gives back what it used), so the retry
 * queues the same mint again as a new transaction, and the check-in follows that one.
 *
 * @throws NotFoundError tx_not_found; ConflictError tx_not_failed / check_in_undone / no_wallet
 */
export function retryCheckInTx(deps: KioskDeps, p: { stationId: number; txId: number }): Promise<{ txId: number; txnHash: string }> {
  const { store } = deps
  const now = deps.now()
  if (!deps.chains || !deps.config) throw new UnavailableError('chain_unavailable', 'This gateway cannot sign transactions')
  const chainDeps = { chains: deps.chains, config: deps.config }
  return store.tx(async (tx) => {
    const station = await freshStation(tx, p.stationId)
    const checkIn = await tx.checkIns.findByTx(p.txId)
    const row = await tx.chainTxs.get(p.txId)
    if (!checkIn || !row || checkIn.stationId !== station.id) throw new NotFoundError('tx_not_found', `No transaction ${p.txId} of this station's check-ins`)
    const status = txStatusOf(row)
    if (status !== 'failed') throw new ConflictError('tx_not_failed', `Transaction ${p.txId} is ${status}: only a failed one can be retried`)
    if (checkIn.undoneAt !== null) throw new ConflictError('check_in_undone', `Check-in ${checkIn.id} was undone`)
    // The address the attendee gave through the claim hand-off, else the chip's wallet on record.
    const claim = await tx.claims.findByTx(p.txId)
    const guest = checkIn.attendeeId === null ? undefined : await tx.attendees.get(checkIn.attendeeId)
    const wallet = claim?.recipient ?? guest?.wallet ?? (checkIn.chipUid === null ? null : (await tx.chips.get(checkIn.chipUid))?.wallet)
    if (!wallet) throw new ConflictError('no_wallet', `${checkIn.chipUid === null ? `Guest ${guest?.name}` : `Chip ${checkIn.chipUid}`} has no wallet to mint to`)
    const mint = await queueMint(tx, chainDeps, (await tx.guestbook.getEvent(checkIn.eventId))!, wallet as Address, checkIn.chipUid, null, now)
    await tx.checkIns.setMint(checkIn.id, mint.mintId, mint.txId)
    if (claim) await tx.claims.setRetried(claim.id, { transferId: null, guestbookMintId: mint.mintId, chainTxId: mint.txId })
    await watchTx(tx, mint.txId, { stationId: station.id, checkInId: checkIn.id, claimId: claim?.id ?? null }, { hash: mint.txnHash, now })
    await staffRow(tx, station.id, { action: 'retry', summary: `retried transaction ${p.txId} as ${mint.txId}`, checkInId: checkIn.id, txId: mint.txId }, now)
    return { txId: mint.txId, txnHash: mint.txnHash }
  }, { isolation: 'read committed' })
}

/** POST /kiosk/staff/test-chip: until then, accepted taps are shown and logged as `test`, never counted. */
export async function startTestChip(deps: KioskDeps, p: { stationId: number; seconds: number }): Promise<{ testUntil: number }> {
  const now = deps.now()
  const testUntil = now + p.seconds * 1000
  await deps.store.tx(async (tx) => {
    const station = await freshStation(tx, p.stationId)
    await tx.stations.setTestUntil(station.id, testUntil)
    await staffRow(tx, station.id, { action: 'test_chip', summary: `test-chip taps for ${p.seconds} s: they do not count` }, now)
  })
  return { testUntil }
}

/**
 * POST /kiosk/staff/dismiss: staff saw the replay or clone alert and dealt with it; the kiosk
 * goes back to idle. The alert stays on screen until this, so nobody misses it in a queue.
 */
export async function dismissAlert(deps: KioskDeps, p: { stationId: number }): Promise<void> {
  const now = deps.now()
  await deps.store.tx(async (tx) => {
    const station = await freshStation(tx, p.stationId)
    await staffRow(tx, station.id, { action: 'dismiss', summary: 'dismissed the alert on the check-in screen' }, now)
  })
}

/** A token's name for staff: its metadata's, else its id. */
async function productName(store: KioskDeps['store'], tokenRowId: number): Promise<string> {
  const token = (await store.tokens.get(tokenRowId))!
  try {
    const name = (JSON.parse(token.metadata ?? '{}') as { name?: unknown }).name
    if (typeof name === 'string' && name !== '') return name
  } catch {
    // An unreadable metadata still has a token id.
  }
  return `token ${token.tokenId}`
}

/** GET /kiosk/staff/state: counts, health and the recent feed (whole events). */
export async function staffState(deps: StaffStateDeps, p: { stationId: number }) {
  const { store } = deps
  const now = deps.now()
  const station = await freshStation(store, p.stationId)
  const statuses = deps.relayer?.status() ?? []
  const chains = deps.chains?.list() ?? []
  return {
    station: await kioskStation(store, station),
    counts: await kioskCounts(store, station, now),
    testUntil: station.testUntil !== null && station.testUntil > now ? new Date(station.testUntil).toISOString() : null,
    team: await teamCounts(store, station.teamId, now),
    health: {
      reader: (await store.stationEvents.lastOfKind(station.id, 'reader'))?.data ?? null,
      chains: chains.map((c) => ({ chainId: c.chainId, reachable: statuses.find((s) => s.chainId === c.chainId)?.reachable ?? null })),
      outboxPending: (await Promise.all(chains.map((c) => store.chainTxs.countOpen(c.chainId)))).reduce((n, open) => n + open, 0),
      kiosksConnected: deps.feed.subscribers(station.id),
    },
    claims: await Promise.all(
      (await store.claims.stats(station.id, now)).map(async ({ tokenId, guestbookEventId, ...counts }) => ({
        product: tokenId !== null ? await productName(store, tokenId) : ((await store.guestbook.getEvent(guestbookEventId!))?.name ?? `event ${guestbookEventId}`),
        tokenId: tokenId === null ? null : (await store.tokens.get(tokenId))!.tokenId,
        eventId: guestbookEventId,
        ...counts,
      })),
    ),
    recent: await store.stationEvents.recent(station.id, 50),
  }
}
