import type { FastifyInstance } from 'fastify'
import WebSocket from 'ws'
import { buildApp } from '../../src/app.js'
import { connectPostgres } from '../../src/db/pg/connect.js'
import { createPostgresStore } from '../../src/db/pg/store.js'
import { openStore, type Store } from '../../src/db/store.js'
import type { KioskServerMessage } from '../../src/wire/feedProtocol.js'
import { createKioskToken } from '../../src/kiosk/kioskTokens.js'
import { setStationMode } from '../../src/kiosk/stationModes.js'
import { createStation } from '../../src/stations/stations.js'
import { type BackendGateway, call, GUESTBOOK, metadata, seedSunChip, seedSunProfile, seedTeam, sunTapUrl, type GatewayParts, type TestGateway } from '../helpers/gateway.js'

export const META = '5ACE7E50AB65D5D51FD5BF5A16B8205B'
export const FILE = '97D1F3FCC8A6B3A4F1AE6F1E3B4BD5A0'
export const WALLET = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8'
export const UIDS = ['04C1A000000001', '04C1A000000002', '04C1A000000003', '04C1A000000004']
export const STRANGER = '04C1A0000000FF'

type Gw = GatewayParts<'app' | 'store' | 'config' | 'clock'>

/**
 * A team with SUN chips (the first has a wallet), a guestbook event on a contract this gateway
 * deploys (so a check-in's mint really queues), and two stations in check-in mode for it.
 */
export async function seedCheckInTeam(gw: Gw, opts: { externalGuestbook?: boolean } = {}) {
  const contract = opts.externalGuestbook
    ? { name: 'Guests', symbol: 'GST', chainId: 31337, address: GUESTBOOK }
    : { name: 'Guests', symbol: 'GST', chainId: 31337 }
  const { teamId, apiKey } = await seedTeam(gw, {
    name: 'Kiosk team',
    chips: UIDS.map((uid, i) => (i === 0 ? { uid, wallet: WALLET } : { uid })),
    guestbookContracts: [{ ...contract, events: [{ name: 'Opening night', tokenId: '1', metadata: metadata() }, { name: 'Afterparty', tokenId: '2', metadata: metadata() }] }],
  })
  await seedSunProfile(gw, { teamId, name: 'aes', metaKey: META, fileKey: FILE })
  for (const uid of UIDS) await seedSunChip(gw, { teamId, uid, profileName: 'aes' })
  const [event, other] = await gw.store.guestbook.listEvents(teamId)
  const door = await gw.store.tx((tx) => createStation(tx, { teamId, name: 'Door A', now: gw.clock.now }))
  const side = await gw.store.tx((tx) => createStation(tx, { teamId, name: 'Door B', now: gw.clock.now }))
  for (const s of [door, side]) await setStationMode(gw.store, { stationId: s.stationId, mode: 'checkin', eventId: event!.id, now: gw.clock.now })
  const kiosk = (await createKioskToken(gw.store, { stationId: door.stationId, now: gw.clock.now })).token
  return { teamId, apiKey, eventId: event!.id, otherEventId: other!.id, door, side, kiosk }
}

/**
 * A second gateway process on `gw`'s storage (another gateway, or `gw` after a restart): its own store
 * on the same SQLite file or PostgreSQL database, its own app on `gw`'s clock. Close it before `gw`.
 * @example
 * const other = await secondGateway(gw)
 * try { await stationTap(other, token, uid, 1) } finally { await other.close() }
 */
export async function secondGateway(gw: Pick<BackendGateway, 'config' | 'clock' | 'dataDir' | 'databaseUrl'>): Promise<{ app: FastifyInstance; store: Store; close: () => Promise<void> }> {
  const store = gw.databaseUrl ? createPostgresStore(() => connectPostgres({ url: gw.databaseUrl! })) : openStore({ dataDir: gw.dataDir })
  const app = await buildApp({ config: gw.config, store, now: () => gw.clock.now }).catch(async (error: unknown) => {
    await store.close()
    throw error
  })
  return {
    app,
    store,
    close: async () => {
      await app.close()
      await store.close()
    },
  }
}

export const tapUrl = (uid: string, counter: number, keys: { metaKey?: string; fileKey?: string } = {}) =>
  sunTapUrl({ metaKey: keys.metaKey ?? META, fileKey: keys.fileKey ?? FILE, uid, counter, base: 'https://tap.example.com/tap' })

export function stationTap(gw: Pick<TestGateway, 'app'>, token: string, uid: string, counter: number, extra: { url?: string; readerName?: string } = {}) {
  return call(gw, {
    method: 'POST',
    url: '/station/taps',
    headers: { 'x-station-token': token },
    payload: { rfUid: uid, url: extra.url ?? tapUrl(uid, counter), ...(extra.readerName ? { readerName: extra.readerName } : {}) },
  })
}

/** A kiosk socket on a listening gateway that records every message it gets. */
export type KioskClient = {
  ws: WebSocket
  messages: KioskServerMessage[]
  /** Resolves with the first message (from the start) that matches. */
  waitFor: (match: (m: KioskServerMessage) => boolean, timeoutMs?: number) => Promise<KioskServerMessage>
  closed: Promise<{ code: number; reason: string }>
  events: () => Extract<KioskServerMessage, { type: 'event' }>[]
}

/** `options`: the handshake's, e.g. `{ origin }` as the kiosk page's browser sends it. */
export async function openKiosk(baseUrl: string, hello: Record<string, unknown> | null, options: WebSocket.ClientOptions = {}): Promise<KioskClient> {
  const ws = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}/kiosk/ws`, options)
  const messages: KioskServerMessage[] = []
  const waiters = new Set<() => void>()
  ws.on('message', (data) => {
    messages.push(JSON.parse(String(data)) as KioskServerMessage)
    for (const w of waiters) w()
  })
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })))
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve())
    ws.once('error', reject)
  })
  if (hello) ws.send(JSON.stringify({ type: 'hello', ...hello }))
  const waitFor = (match: (m: KioskServerMessage) => boolean, timeoutMs = 3000) =>
    new Promise<KioskServerMessage>((resolve, reject) => {
      const check = () => {
        const found = messages.find(match)
        if (!found) return
        waiters.delete(check)
        clearTimeout(timer)
        resolve(found)
      }
      const timer = setTimeout(() => {
        waiters.delete(check)
        reject(new Error(`no matching kiosk message in ${timeoutMs} ms; got ${JSON.stringify(messages).slice(0, 2000)}`))
      }, timeoutMs)
      waiters.add(check)
      check()
    })
  const events = () => messages.filter((m): m is Extract<KioskServerMessage, { type: 'event' }> => m.type === 'event')
  return { ws, messages, waitFor, closed, events }
}
