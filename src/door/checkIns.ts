import type { Address } from 'viem'
import type { Chains } from '../chain/chains.js'
import type { Config } from '../config.js'
import type { AttendeeRow } from '../db/attendees.js'
import type { CheckInDetail } from '../db/checkIns.js'
import type { StationRow } from '../db/stations.js'
import type { Repositories, Store } from '../db/store.js'
import type { Tx } from '../db/types.js'
import { attendeeView } from './attendeeView.js'
import { BaseError } from '../errors.js'
import { queueMint } from '../guestbook/guestbookChain.js'
import type { CheckInSummary } from '../wire/feedProtocol.js'
import { txStatusOf } from '../feed/txProgress.js'

/** What a check-in needs beyond the store: the chain signers to queue its mint (absent: it counts, and mints nothing). */
export type CheckInDeps = { store: Store; chains?: Chains; config?: Config; now: () => number }

export async function checkInSummary(store: Repositories, checkIn: CheckInDetail): Promise<CheckInSummary> {
  const tx = checkIn.chainTxId === null ? undefined : await store.chainTxs.get(checkIn.chainTxId)
  const attendee = checkIn.attendeeId === null ? undefined : await store.attendees.get(checkIn.attendeeId)
  const event = attendee && (await store.guestbook.getEvent(checkIn.eventId))
  return {
    id: checkIn.id,
    eventId: checkIn.eventId,
    eventName: checkIn.eventName,
    at: new Date(checkIn.createdAt).toISOString(),
    stationId: checkIn.stationId,
    stationName: checkIn.stationName,
    manual: checkIn.manual === 1,
    // A chip's check-in at an event without a guest list keeps its shape from before the lists.
    ...(attendee && event ? { attendee: attendeeView(attendee, event) } : {}),
    ...(checkIn.attendeeId !== null || checkIn.leftAt !== null ? { leftAt: checkIn.leftAt === null ? null : new Date(checkIn.leftAt).toISOString() } : {}),
    tx: tx ? { id: tx.id, status: txStatusOf(tx), hash: tx.txHash } : null,
  }
}

export type CheckInResult = {
  state: 'accepted' | 'already'
  checkIn: CheckInDetail
  /** The mint this check-in queued (the caller wakes the relayer for its chain after the commit). */
  queued: { txId: number; hash: string; chainId: number } | null
  /** Why no mint was queued although the chip has a wallet (e.g. the guestbook is not ours to mint). */
  mintSkipped?: string
}

/**
 * Checks a chip (or a guest from the list, with or without a chip) in to the station's event, inside the caller's transaction (`tx`, BEGIN IMMEDIATE): the
 * partial unique indexes on (event, chip) and (event, guest) decide, so of two stations racing for one
 * chip, or for two chips of one guest, exactly one inserts and the other finds it (`already`, with the
 * first one's time and station). A new check-in with a wallet (the guest's, else the chip's) queues the event's guestbook mint through the same code as
 * POST /events/mint/self (queueMint): signed into the outbox in this transaction, sent by the
 * relayer after the commit; the check-in never waits for the chain. A chip that already has the
 * event's token (an earlier check-in that was undone, a mint through the API) is linked to that
 * mint instead. Appends nothing to the feed: the caller says what happened (a tap, a manual one).
 */
export async function checkInChip(
  tx: Tx,
  deps: Omit<CheckInDeps, 'store'>,
  p: { station: StationRow; uid: string | null; attendee?: AttendeeRow | null; manual: boolean; now: number },
): Promise<CheckInResult> {
  const eventId = p.station.eventId!
  const attendee = p.attendee ?? null
  const id = await tx.checkIns.insert({ eventId, chipUid: p.uid, attendeeId: attendee?.id ?? null, stationId: p.station.id, manual: p.manual, now: p.now })
  if (id === null) {
    const found = (attendee && (await tx.checkIns.findActiveByAttendee(eventId, attendee.id))) || (p.uid !== null ? await tx.checkIns.findActive(eventId, p.uid) : undefined)
    return { state: 'already', checkIn: found!, queued: null }
  }

  let queued: CheckInResult['queued'] = null
  let mintSkipped: string | undefined
  const earlier = p.uid === null ? undefined : await tx.transfers.guestbookMintOfChip(eventId, p.uid)
  const wallet = attendee?.wallet ?? (p.uid === null ? null : ((await tx.chips.get(p.uid))?.wallet ?? null))
  if (earlier) await tx.checkIns.setMint(id, earlier.id, earlier.chainTxId)
  else if (wallet !== null && deps.chains && deps.config) {
    const event = (await tx.guestbook.getEvent(eventId))!
    try {
      // queueMint refuses (already_minted, contract_not_managed) before it writes anything.
      const mint = await queueMint(tx, { chains: deps.chains, config: deps.config }, event, wallet as Address, p.uid, null, p.now)
      await tx.checkIns.setMint(id, mint.mintId, mint.txId)
      queued = { txId: mint.txId, hash: mint.txnHash, chainId: mint.chainId }
    } catch (error) {
      if (!(error instanceof BaseError)) throw error
      mintSkipped = `${error.code}: ${error.message}`
    }
  }
  return { state: 'accepted', checkIn: (await tx.checkIns.get(id))!, queued, mintSkipped }
}
