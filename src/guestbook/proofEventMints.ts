import type { Address } from 'viem'
import type { ChainDeps } from '../chain/chainDeps.js'
import type { ProofEventRow } from '../db/proofEvents.js'
import type { GuestbookEventRow } from '../db/guestbook.js'
import { isUniqueViolation } from '../db/storeErrors.js'
import type { Tx } from '../db/types.js'
import { BadRequestError, BaseError, ConflictError, NotFoundError } from '../errors.js'
import { checkOtp, spendOtp } from '../otps/spendOtp.js'
import { defaultGuestbookChain, type QueuedMint, queueGuestbookDeploy, queueMint } from './guestbookChain.js'

/**
 * POST /poap-events/mint: the OTP a tap gave for a proof event (GET /refs/:id, proofEvents[].otp)
 * mints that event's attendance token to `recipient`, once per event and recipient (and, as a
 * guestbook mint, once per chip). The token is an event of a guestbook the gateway deploys for the
 * team's proof events at the first mint (proof_event_contracts), token id = the proof event's id:
 * the mint, its give-backs on a revert, pausing and metadata are the guestbook's own (GET /events
 * lists it, PATCH /events/metadata sets its image).
 *
 * The hosted API answers an attendance token already minted with 400, and apps show its message:
 * so does this endpoint (`already_minted`), where the guestbook's own mint answers 409.
 *
 * @throws BadRequestError otp_wrong_event (the OTP is another event's), already_minted;
 *   ConflictError event_not_active, otp_used, otp_expired; Unauthorized/Forbidden as spendOtp
 */
export async function mintProofEvent(deps: ChainDeps, p: { code: string | undefined; poapEventId: number; recipient: Address }): Promise<QueuedMint> {
  const unspent = await checkOtp(deps.store, { code: p.code, type: 'PROOF_EVENT', now: deps.now() })
  mintable(await deps.store.proofEvents.get(unspent.proofEventId!), p.poapEventId)
  const now = deps.now()
  for (let attempt = 1; ; attempt++) {
    try {
      return await deps.store.tx(async (tx) => {
        const otp = await spendOtp(tx, { code: p.code, type: 'PROOF_EVENT', usedFor: 'proof-event-mint', now })
        const event = mintable(await tx.proofEvents.get(otp.proofEventId!), p.poapEventId)
        return queueMint(tx, deps, await attendanceEvent(tx, deps, event, now), p.recipient, otp.chipUid, otp.code, now)
      })
    } catch (error) {
      // Lost the race to set up the event: the winner has committed it, so the next attempt mints into it.
      if (error instanceof SetupRaceLost && attempt < SETUP_ATTEMPTS) continue
      if (error instanceof BaseError && error.code === 'already_minted') throw new BadRequestError('already_minted', `Already minted: ${error.message}`)
      throw error
    }
  }
}

/** First mints of one event at once, on any gateway: each loser tries again, after the winner's commit. */
const SETUP_ATTEMPTS = 3

/** Another transaction set up the proof event's guestbook event (or its contract) first. */
class SetupRaceLost extends ConflictError {
  constructor() {
    super('busy', 'Another mint of this proof event is being set up; try again')
  }
}

function mintable(event: ProofEventRow | undefined, poapEventId: number): ProofEventRow {
  if (!event) throw new NotFoundError('event_not_found', 'The proof event of this OTP no longer exists')
  if (event.proofEventId !== poapEventId)
    throw new BadRequestError('otp_wrong_event', `This OTP is for proof event ${event.proofEventId}, not ${poapEventId}`)
  if (event.status !== 'active') throw new ConflictError('event_not_active', `Proof event ${event.proofEventId} is ${event.status}, not active`)
  return event
}

/** The guestbook event the proof event's tokens are minted as; made (and its guestbook queued for deploy) at the first mint. */
async function attendanceEvent(tx: Tx, deps: ChainDeps, event: ProofEventRow, now: number): Promise<GuestbookEventRow> {
  if (event.guestbookEventId !== null) return (await tx.guestbook.getEvent(event.guestbookEventId))!
  const chain = defaultGuestbookChain(deps, 'to mint attendance tokens on')
  try {
    let contractId = await tx.proofEvents.contractOf(event.teamId, chain.chainId)
    if (contractId === undefined) {
      ;({ contractId } = await queueGuestbookDeploy(tx, chain, deps.config, { teamId: event.teamId, name: 'Proof events', symbol: 'PROOF', now }))
      await tx.proofEvents.setContract(event.teamId, chain.chainId, contractId)
    }
    const name = event.name || `Proof event ${event.proofEventId}`
    const metadata = { name, collection: 'Proof events', description: '', image: '', attributes: [{ trait_type: 'proof event', value: event.proofEventId }] }
    const id = await tx.guestbook.insertEvent({ teamId: event.teamId, contractId, name, tokenId: String(event.proofEventId), metadata: JSON.stringify(metadata), now })
    if (!(await tx.proofEvents.setGuestbookEvent(event.id, id))) throw new SetupRaceLost()
    return (await tx.guestbook.getEvent(id))!
  } catch (error) {
    // On PostgreSQL a concurrent first mint's insert of the same contract or event is a unique
    // violation, not always a serialization failure (which the store retries): a CI run saw 409.
    if (isUniqueViolation(error)) throw new SetupRaceLost()
    throw error
  }
}
