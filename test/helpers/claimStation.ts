import { importData, parseImportFile } from '../../src/importer/importData.js'
import { loadGatewaySecret } from '../../src/keys/gatewaySecret.js'
import { createKioskToken } from '../../src/kiosk/kioskTokens.js'
import { setStaffPin } from '../../src/kiosk/staffAuth.js'
import { setStationMode } from '../../src/kiosk/stationModes.js'
import { createStation } from '../../src/stations/stations.js'
import type { PostgresStore, SqliteStore } from '../../src/db/store.js'
import type { ChainGateway } from './chainGateway.js'
import { queryRows, seedSunChip, seedSunProfile, sunTapUrl } from './gateway.js'

export const SHOP_META = '3B5E1F0A9C8D7E6F5A4B3C2D1E0F9A8B'
export const SHOP_FILE = 'C0FFEE00C0FFEE00C0FFEE00C0FFEE00'
export const SHOP_PIN = '1357'

/** The shop's chips: two products, a 2-tap product (claimable 60 s after registering), one chip linked to nothing. */
export const TEE = '04B1000000A001'
export const CAP = '04B1000000A002'
export const MUG = '04B1000000A003'
export const LAMP = '04B1000000A004'
export const TWO_TAP = '04B1000000A0F2'
export const BLANK = '04B1000000A0FF'
export const TWO_TAP_DELAY_S = 60

export const TEE_METADATA = (image: string) => ({
  name: 'Tapgate tee',
  collection: 'Tapgate shop',
  media_gallery: [],
  description: 'Organic cotton tee with an NFC tag in the hem.',
  image,
  attributes: [
    { trait_type: 'Size', value: 'M' },
    { trait_type: 'Colour', value: 'Ink' },
  ],
})

export type ClaimStation = {
  origin: string
  teamId: number
  stationId: number
  stationToken: string
  kioskToken: string
  kioskUrl: string
  staffUrl: string
  /** A product tap through the real station path (POST /station/taps) with the SUN URL the chip writes. */
  tap(uid: string, counter: number): Promise<{ status: number; body: Record<string, unknown> }>
  /** The newest claim opened at the station. */
  lastClaimId(): Promise<number>
  /** POST /kiosk/claims/:id/handoff as the kiosk does. */
  handoff(claimId: number): Promise<{ status: number; body: { url: string; svg: string; expiresAt: string } & Record<string, unknown> }>
  /** A JSON POST through inject (the phone's /c/* calls), its status and parsed body. */
  post(url: string, payload?: object, headers?: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }>
  /** The same with the station's kiosk token (/kiosk/claims/*). */
  kiosk(url: string, payload?: object): Promise<{ status: number; body: Record<string, unknown> }>
}

/**
 * A shop on the embedded chain: a team with a phygital contract the relayer deploys, tokens linked
 * to SUN chips (TEE's metadata carries `image`), a station in claim mode with a kiosk token and a
 * staff PIN. The gateway listens on 127.0.0.1 (the browser and the phone need a real socket).
 * Waits for the contract's deploy.
 */
export async function setUpClaimStation(gw: ChainGateway<SqliteStore | PostgresStore>, p: { image?: string; listen?: boolean } = {}): Promise<ClaimStation> {
  const { store, app } = gw
  const now = Date.now()
  const secret = loadGatewaySecret({ dataDir: gw.dataDir })
  const token = (tokenId: string, chips: string[], metadata: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    chainId: 31337,
    contract: 'Shop merch',
    tokenId,
    chips,
    metadata,
    ...extra,
  })
  const plain = (name: string) => ({ name, collection: 'Tapgate shop', description: `${name} from the shop.`, image: '', attributes: [], media_gallery: [] })
  const team = {
    name: 'Shop',
    chips: [TEE, CAP, MUG, LAMP, TWO_TAP, BLANK].map((uid) => ({ uid })),
    phygitalContracts: [{ name: 'Shop merch', symbol: 'SHOP', chainId: 31337 }],
    tokens: [
      token('1', [TEE], TEE_METADATA(p.image ?? '')),
      token('2', [CAP], plain('Tapgate cap')),
      token('3', [MUG], plain('Tapgate mug')),
      token('4', [LAMP], plain('Tapgate lamp')),
      token('5', [TWO_TAP], plain('Signed print'), { twoTapClaim: { delaySeconds: TWO_TAP_DELAY_S, windowSeconds: 3600 } }),
    ],
  }
  const summary = await importData(store, parseImportFile({ teams: [team] }), { config: gw.config, now, secret })
  await gw.settle()
  const teamId = summary.teams[0]!.id
  const at = { app, store, clock: { now } }
  await seedSunProfile(at, { teamId, name: 'shop tags', metaKey: SHOP_META, fileKey: SHOP_FILE })
  for (const uid of team.chips.map((c) => c.uid)) await seedSunChip(at, { teamId, uid, profileName: 'shop tags' })
  const station = await createStation(store, { teamId, name: 'Shop counter', now })
  await setStationMode(store, { stationId: station.stationId, mode: 'claim', now })
  const { token: kioskToken } = await createKioskToken(store, { stationId: station.stationId, now })
  await setStaffPin(store, { stationId: station.stationId, pin: SHOP_PIN, now })
  const post = async (url: string, payload?: object, headers: Record<string, string> = {}) => {
    const res = await app.inject({ method: 'POST', url, headers, ...(payload ? { payload } : {}) })
    return { status: res.statusCode, body: JSON.parse(res.body) as Record<string, unknown> }
  }
  const origin = p.listen === false ? 'http://127.0.0.1' : new URL(await app.listen({ port: 0, host: '127.0.0.1' })).origin
  return {
    origin,
    teamId,
    stationId: station.stationId,
    stationToken: station.token,
    kioskToken,
    kioskUrl: `${origin}/kiosk#token=${kioskToken}`,
    staffUrl: `${origin}/kiosk/staff#token=${kioskToken}`,
    async tap(uid, counter) {
      const url = sunTapUrl({ metaKey: SHOP_META, fileKey: SHOP_FILE, uid, counter, base: `${origin}/tap` })
      const res = await app.inject({ method: 'POST', url: '/station/taps', headers: { 'x-station-token': station.token }, payload: { rfUid: uid, url, readerName: 'ACS ACR1252 PICC' } })
      return { status: res.statusCode, body: JSON.parse(res.body) as Record<string, unknown> }
    },
    async lastClaimId() {
      // stationId is the gateway's own integer: no parameter needed for queryRows' either engine.
      const [row] = await queryRows<{ id: number | null }>(store, `SELECT max(id) AS id FROM claims WHERE station_id = ${Number(station.stationId)}`)
      if (row?.id == null) throw new Error('no claim was opened at the station')
      return row.id
    },
    async handoff(claimId) {
      const res = await app.inject({ method: 'POST', url: `/kiosk/claims/${claimId}/handoff`, headers: { 'x-kiosk-token': kioskToken } })
      return { status: res.statusCode, body: JSON.parse(res.body) as { url: string; svg: string; expiresAt: string } & Record<string, unknown> }
    },
    post,
    kiosk: (url, payload) => post(url, payload, { 'x-kiosk-token': kioskToken }),
  }
}
