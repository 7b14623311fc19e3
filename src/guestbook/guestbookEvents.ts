import type { GuestbookEventRow } from '../db/guestbook.js'
import type { Store, Repositories } from '../db/store.js'
import type { TokenKey } from '../db/tokens.js'
import { ConflictError, NotFoundError, ValidationError } from '../errors.js'
import { GuestbookMetadata } from '../schemas/metadata.js'
import { parseJsonField } from '../validation/issuesToErrors.js'
import { contractView, eventView, type GuestbookContractView, type GuestbookEventView } from './guestbookViews.js'

const contractNotFound = () => new NotFoundError('contract_not_found', 'No guestbook contract with this id')
const eventNotFound = () => new NotFoundError('event_not_found', 'No guestbook event matches')

export async function teamContract(store: Repositories, teamId: number, contractId: number) {
  const contract = await store.guestbook.getContract(contractId)
  if (!contract || contract.teamId !== teamId) throw contractNotFound()
  return contract
}

/** GET /events/contracts */
export async function listGuestbookContracts(store: Repositories, p: { teamId: number }): Promise<GuestbookContractView[]> {
  return (await store.guestbook.listContracts(p.teamId)).map(contractView)
}

/**
 * POST /events: a guestbook event is one ERC-1155 token id of a team's contract.
 * A pending (not yet deployed) contract may already receive events.
 */
export function createGuestbookEvent(
  store: Store,
  p: { teamId: number; contractId: number; name: string; tokenId: string; metadata: string; now: number },
): Promise<{ id: number }> {
  const metadata = parseJsonField(p.metadata, GuestbookMetadata, 'metadata')
  return store.tx(async (tx) => {
    await teamContract(tx, p.teamId, p.contractId)
    if (await tx.guestbook.findEventInContract(p.contractId, p.tokenId))
      throw new ConflictError('event_exists', `The contract already has an event for tokenId ${p.tokenId}`)
    const id = await tx.guestbook.insertEvent({
      teamId: p.teamId,
      contractId: p.contractId,
      name: p.name,
      tokenId: p.tokenId,
      metadata: JSON.stringify(metadata),
      now: p.now,
    })
    return { id }
  })
}

/** GET /events, optionally only one contract's. */
export async function listGuestbookEvents(store: Store, p: { teamId: number; contractId?: number }): Promise<GuestbookEventView[]> {
  if (p.contractId !== undefined) await teamContract(store, p.teamId, p.contractId)
  return (await store.guestbook.listEvents(p.teamId, p.contractId)).map(eventView)
}

export type EventSelector = { eventId?: number } & Partial<TokenKey>

/** Finds a team's event by id, or by its contract address, chain and token id. */
export async function findGuestbookEvent(store: Repositories, teamId: number, selector: EventSelector): Promise<GuestbookEventRow> {
  let event: GuestbookEventRow | undefined
  if (selector.eventId !== undefined) event = await store.guestbook.getEvent(selector.eventId)
  else if (selector.chainId !== undefined && selector.contractAddress !== undefined && selector.tokenId !== undefined)
    event = await store.guestbook.findEventByTokenOrPlanned(selector.chainId, selector.contractAddress, selector.tokenId)
  else
    throw new ValidationError('Identify the event by eventId, or by tokenId, contractAddress and chainId', {
      eventId: 'Required when tokenId, contractAddress and chainId are not all given',
    })
  if (!event || event.teamId !== teamId) throw eventNotFound()
  return event
}

/** PATCH /events/metadata */
export async function updateGuestbookEventMetadata(
  store: Store,
  p: { teamId: number; selector: EventSelector; metadata: string; now: number },
): Promise<void> {
  const metadata = parseJsonField(p.metadata, GuestbookMetadata, 'metadata')
  await store.tx(async (tx) => {
    const event = await findGuestbookEvent(tx, p.teamId, p.selector)
    await tx.guestbook.setEventMetadata(event.id, JSON.stringify(metadata), p.now)
  })
}

/**
 * POST /events/assign/legacy: all chips must be the team's, or nothing is
 * assigned. Assigning twice is harmless.
 */
export async function assignGuestbookEvent(
  store: Store,
  p: { teamId: number; eventId: number; uids: string[]; now: number },
): Promise<void> {
  await store.tx(async (tx) => {
    const event = await tx.guestbook.getEvent(p.eventId)
    if (!event || event.teamId !== p.teamId) throw eventNotFound()
        const unknown: string[] = []
        for (const uid of p.uids) if ((await tx.chips.get(uid))?.teamId !== p.teamId) unknown.push(uid)
    if (unknown.length > 0)
      throw new NotFoundError('chip_not_found', `No chip registered to this team has UID ${[...new Set(unknown)].join(', ')}`)
    for (const uid of p.uids) await tx.guestbook.assignChip(event.id, uid, p.now)
  })
}
