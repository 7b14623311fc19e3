import type { GuestbookEventRow } from '../db/guestbook.js'
import type { OtpType } from '../db/otps.js'
import type { ProofEventRow, ProofEventStatus } from '../db/proofEvents.js'
import type { RefRow } from '../db/refs.js'
import type { Store, Repositories } from '../db/store.js'
import type { TokenRow } from '../db/tokens.js'
import type { Tx } from '../db/types.js'
import { NotFoundError } from '../errors.js'
import { issueOtp, type OtpTarget } from '../otps/issueOtp.js'

export type QueryRefParameters = {
  refId: string
  /** Team of the API key sent with the query, if any. */
  callerTeamId: number | null
  includeMetadata: boolean
  now: number
  otpTtlMs: number
}

export type RefView = {
  uid: string
  isValidRef: boolean
  otp?: string
  linkedToken?: {
    contractAddress: string
    chainId: number
    tokenId: string
    otp?: string
    ownerAddress?: string
    metadata?: Record<string, unknown>
  }
  proofEvents: { id: number; proofEventId: number; status: ProofEventStatus; otp?: string }[]
  guestbookEvents: {
    id: number
    name: string
    contractAddress: string | null
    chainId: number
    tokenId: string
    otp?: string
  }[]
}

type Targets = { token: TokenRow | undefined; proofEvents: ProofEventRow[]; guestbookEvents: GuestbookEventRow[] }

/** Codes issued by a winning first query, keyed by what they authorize. */
type Codes = { chip?: string; token?: string; proofEvents: Map<number, string>; guestbookEvents: Map<number, string> }

/**
 * Answers GET /refs/:id. Only the first query of a ref is valid and issues
 * OTPs; a Links Module ref is only consumed by its own team's key.
 *
 * The conditional UPDATE inside BEGIN IMMEDIATE decides the winner, so
 * exactly one query wins even across server processes on one data dir.
 * Consuming queries share commits with their neighbours (store.batch).
 *
 * @throws NotFoundError for an unknown ref
 */
export async function queryRef(store: Store, p: QueryRefParameters): Promise<RefView> {
  const ref = await store.refs.get(p.refId)
  if (!ref) throw new NotFoundError('ref_not_found', 'No ref with this id')
  const mayConsume = ref.consumedAt === null && (ref.linksModule === 0 || p.callerTeamId === ref.teamId)
  if (!mayConsume) return render(ref, await loadTargets(store, ref.chipUid), null, p.includeMetadata)

  return store.batch(async (tx) => {
    const targets = await loadTargets(tx, ref.chipUid)
    if (!await tx.refs.consume(ref.id, p.now)) return render(ref, targets, null, p.includeMetadata)
    return render(ref, targets, await issueOtps(tx, ref, targets, p), p.includeMetadata)
  })
}

async function loadTargets(store: Repositories, chipUid: string): Promise<Targets> {
  return {
    token: await store.tokens.findByChip(chipUid),
    proofEvents: await store.proofEvents.listByChip(chipUid),
    guestbookEvents: await store.guestbook.listEventsByChip(chipUid),
  }
}

async function issueOtps(tx: Tx, ref: RefRow, targets: Targets, p: QueryRefParameters): Promise<Codes> {
  const issue = (type: OtpType, target: OtpTarget) => issueOtp(tx, ref, type, target, { now: p.now, ttlMs: p.otpTtlMs })
  const codes: Codes = { proofEvents: new Map(), guestbookEvents: new Map() }
  if (targets.token) codes.token = await issue('PHYGITAL_CLAIM', { token: targets.token })
  for (const event of targets.proofEvents)
    if (event.status === 'active') codes.proofEvents.set(event.id, await issue('PROOF_EVENT', { proofEventId: event.id }))
  for (const event of targets.guestbookEvents)
    codes.guestbookEvents.set(event.id, await issue('GUESTBOOK_EVENT', { guestbookEventId: event.id }))
  // A chip with nothing linked still proves a tap: its code is bound to the chip.
  if (!targets.token && targets.proofEvents.length === 0 && targets.guestbookEvents.length === 0)
    codes.chip = await issue('PHYGITAL_CLAIM', {})
  return codes
}

function render(ref: RefRow, targets: Targets, codes: Codes | null, includeMetadata: boolean): RefView {
  const { token } = targets
  const view: RefView = {
    uid: ref.chipUid,
    isValidRef: codes !== null,
    proofEvents: targets.proofEvents.map((e) => ({
      id: e.id,
      proofEventId: e.proofEventId,
      status: e.status,
      ...optional('otp', codes?.proofEvents.get(e.id)),
    })),
    guestbookEvents: targets.guestbookEvents.map((e) => ({
      id: e.id,
      name: e.name,
      contractAddress: e.contractAddress,
      chainId: e.chainId,
      tokenId: e.tokenId,
      ...optional('otp', codes?.guestbookEvents.get(e.id)),
    })),
  }
  if (codes?.chip) view.otp = codes.chip
  if (token)
    view.linkedToken = {
      contractAddress: token.contractAddress,
      chainId: token.chainId,
      tokenId: token.tokenId,
      ...optional('otp', codes?.token),
      ...(includeMetadata && token.metadata ? { metadata: JSON.parse(token.metadata) as Record<string, unknown> } : {}),
    }
  return view
}

const optional = <K extends string, V>(key: K, value: V | undefined) =>
  (value === undefined ? {} : { [key]: value }) as { [P in K]?: V }
