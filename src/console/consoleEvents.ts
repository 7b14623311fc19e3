import { attendeeEvent } from '../attendees/importAttendees.js'
import type { ChainDeps } from '../chain/chainDeps.js'
import type { GuestbookContractRow, GuestbookEventRow } from '../db/guestbook.js'
import type { Repositories } from '../db/store.js'
import { type DoorStats, checkedInOf, doorStats } from '../door/doorStats.js'
import { setEventDoorSettings } from '../door/eventDoorSettings.js'
import { BaseError } from '../errors.js'
import { defaultGuestbookChain, deployGuestbook, findDefaultGuestbookChain } from '../guestbook/guestbookChain.js'
import { createGuestbookEvent } from '../guestbook/guestbookEvents.js'

/** An event as the console lists it: its guest list's counts and its door settings. */
export type ConsoleEvent = {
  id: number
  name: string
  /** Guests on the list. */
  guests: number
  /** As the door's numbers count them (checkedInOf): guests with a check-in, or chips at an event without a list. */
  checkedIn: number
  reentry: boolean
  publicNames: 'first' | 'full'
  admitUnpaid: boolean
}

/** The symbol of the guestbook the console deploys for a team that has none. */
const CONSOLE_GUESTBOOK_SYMBOL = 'GUEST'
/** Two events made at once can pick the same token id; the later insert is refused and picks again, this many times in all. */
const TOKEN_ID_TRIES = 3

async function eventView(store: Repositories, event: GuestbookEventRow): Promise<ConsoleEvent> {
  const [counts, guests] = await Promise.all([store.checkIns.doorCounts(event.id), store.attendees.countEvent(event.id)])
  return {
    id: event.id,
    name: event.name,
    guests,
    checkedIn: checkedInOf(counts, guests),
    reentry: event.reentry === 1,
    publicNames: event.publicNames,
    admitUnpaid: event.admitUnpaid === 1,
  }
}

/** The team's guestbook events (`GET /events`'s), with their guests and door settings. */
export async function consoleEvents(store: Repositories, p: { teamId: number }): Promise<ConsoleEvent[]> {
  return Promise.all((await store.guestbook.listEvents(p.teamId)).map((event) => eventView(store, event)))
}

/**
 * The guestbook a console event goes on: the team's first, or the first on the default chain
 * (the embedded one when it runs) when the team has several. The guestbook the gateway keeps for
 * the team's proof events is not one: its token ids are the proof events' ids. A team without one
 * gets `<team name> guestbook` deployed (queued) through POST /events/contracts's deployGuestbook.
 *
 * @throws BadRequestError chain_not_configured (a guestbook to deploy, and no chain)
 */
async function teamGuestbook(deps: ChainDeps, team: { id: number; name: string }): Promise<GuestbookContractRow> {
  const { store } = deps
  const own: GuestbookContractRow[] = []
  for (const contract of await store.guestbook.listContracts(team.id))
    if ((await store.proofEvents.contractOf(team.id, contract.chainId)) !== contract.id) own.push(contract)
  if (own.length > 0) {
    const preferred = findDefaultGuestbookChain(deps)?.chainId
    return own.find((c) => c.chainId === preferred) ?? own[0]!
  }
  const chain = defaultGuestbookChain(deps, 'to deploy a guestbook on')
  const { contractId } = await deployGuestbook(deps, { teamId: team.id, name: `${team.name} guestbook`, symbol: CONSOLE_GUESTBOOK_SYMBOL, chainId: chain.chainId })
  return (await store.guestbook.getContract(contractId))!
}

/** The token id after the contract's highest (token ids are decimal uint256 strings); 1 on a contract without events. */
async function nextTokenId(store: Repositories, teamId: number, contractId: number): Promise<string> {
  let highest = 0n
  for (const event of await store.guestbook.listEvents(teamId, contractId)) if (BigInt(event.tokenId) > highest) highest = BigInt(event.tokenId)
  return String(highest + 1n)
}

/**
 * An event made in the console from a name alone: a guestbook event (POST /events's
 * createGuestbookEvent) on the team's guestbook (teamGuestbook), the contract's next free token id,
 * and the least metadata a guestbook event takes (the name, the guestbook's name as its collection;
 * PATCH /events/metadata sets an image and the rest later).
 *
 * @throws BadRequestError chain_not_configured; ConflictError event_exists (token ids taken TOKEN_ID_TRIES times over)
 */
export async function createConsoleEvent(deps: ChainDeps, p: { team: { id: number; name: string }; name: string }): Promise<ConsoleEvent> {
  const { store } = deps
  const contract = await teamGuestbook(deps, p.team)
  const metadata = JSON.stringify({ name: p.name, collection: contract.name, description: '', image: '', attributes: [] })
  for (let attempt = 1; ; attempt++) {
    const tokenId = await nextTokenId(store, p.team.id, contract.id)
    try {
      const { id } = await createGuestbookEvent(store, { teamId: p.team.id, contractId: contract.id, name: p.name, tokenId, metadata, now: deps.now() })
      return eventView(store, (await store.guestbook.getEvent(id))!)
    } catch (error) {
      if (attempt < TOKEN_ID_TRIES && error instanceof BaseError && error.code === 'event_exists') continue
      throw error
    }
  }
}

/**
 * `event set` on one of the team's events (setEventDoorSettings: an absent setting stays; none at all
 * is 400 nothing_to_set), answered as the console lists the event.
 *
 * @throws NotFoundError event_not_found (another team's); BadRequestError nothing_to_set
 */
export async function setConsoleEventDoor(
  deps: Pick<ChainDeps, 'store' | 'now'>,
  p: { teamId: number; eventId: number; reentry?: boolean; publicNames?: 'first' | 'full'; admitUnpaid?: boolean },
): Promise<ConsoleEvent> {
  const { store } = deps
  // The team's own event first: another team's is a 404 whatever the body says (as PATCH /events/:eventId/door).
  const event = await attendeeEvent(store, p.eventId, p.teamId)
  await setEventDoorSettings(store, { eventId: event.id, reentry: p.reentry, publicNames: p.publicNames, admitUnpaid: p.admitUnpaid, now: deps.now() })
  return eventView(store, (await store.guestbook.getEvent(event.id))!)
}

/**
 * The door's numbers of one of the team's events (the staff view's, GET /kiosk/staff/stats, which
 * reaches the same doorStats through its station's event).
 *
 * @throws NotFoundError event_not_found (another team's)
 */
export async function consoleEventNumbers(deps: Pick<ChainDeps, 'store' | 'now'>, p: { teamId: number; eventId: number }): Promise<DoorStats> {
  const event = await attendeeEvent(deps.store, p.eventId, p.teamId)
  return doorStats(deps.store, event.id, deps.now())
}
