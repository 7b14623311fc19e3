import { type BackendGateway, metadata, seedTeam, type TeamSeed } from '../helpers/gateway.js'

/**
 * The guest list tests' team: "Venue", one guestbook contract with one event ("Opening"), and whatever
 * else `extra` adds (chips to bind); its API key and the event's id.
 */
export async function seedGuestEvent(gw: BackendGateway, extra: Partial<TeamSeed> = {}): Promise<{ teamId: number; apiKey: string; eventId: number }> {
  const { teamId, apiKey } = await seedTeam(gw, {
    name: 'Venue',
    guestbookContracts: [{ name: 'Guests', symbol: 'GST', chainId: 31337, events: [{ name: 'Opening', tokenId: '1', metadata: metadata() }] }],
    ...extra,
  })
  return { teamId, apiKey, eventId: (await gw.store.guestbook.listEvents(teamId))[0]!.id }
}
