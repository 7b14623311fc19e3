/**
 * Issue 26's acceptance, through the bin (`tapgate serve` on a seeded data dir, the embedded chain, over
 * loopback): every row of the issue's table sent exactly as written there with TAPGATE_COMPAT=iyk, and
 * read back as the apps read it; the same requests with the spec's names on a gateway without the
 * setting; and two small apps written as hosted-API apps are (fetch, axios) running a whole flow.
 */
import type { ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { call, createTestGateway, metadata, seedSunChip, seedSunProfile, seedTeam, sunTapUrl } from '../helpers/gateway.js'
import { cliPath, type Server, startServe, stopChild } from '../helpers/processes.js'
import { until } from '../helpers/until.js'
import { createAxiosApp, messageOf } from './axiosApp.js'
import { createFetchApp, type HostedRef } from './fetchApp.js'

const META = '5ACE7E50AB65D5D51FD5BF5A16B8205B'
const FILE = '97D1F3FCC8A6B3A4F1AE6F1E3B4BD5A0'
/** The example chip: 04A893CAAA1190 is 1311252620644752. Then one chip per app. */
const CHIP = { uid: '04A893CAAA1190', decimal: '1311252620644752' }
const FETCH_CHIP = '04A30000000011'
const AXIOS_CHIP = '04A30000000012'
const WALLET = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8'
const OTHER = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC'
const THIRD = '0x90F79bf6EB2c4f870365E785982E1f101E93b906'

const children: ChildProcess[] = []
const dirs: string[] = []
afterAll(async () => {
  for (const child of children) await stopChild(child)
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
})

type Gateway = { server: Server; apiKey: string; tapUrl: (uid: string) => string }

/** A data dir with one team (SUN chips, a token per chip on a contract the gateway deploys, a proof event, a guestbook event), served by the bin. */
async function serve(env: Record<string, string>): Promise<Gateway> {
  const gw = await createTestGateway()
  dirs.push(gw.dataDir)
  const chips = [CHIP.uid, FETCH_CHIP, AXIOS_CHIP]
  const { teamId, apiKey } = await seedTeam(gw, {
    name: 'Venue',
    chips: chips.map((uid) => ({ uid })),
    phygitalContracts: [{ name: 'Merch', symbol: 'MRC', chainId: 31337 }],
    tokens: chips.map((uid, i) => ({ chainId: 31337, contract: 'Merch', tokenId: String(i + 1), chips: [uid], metadata: metadata({ name: `Hoodie ${i + 1}`, attributes: [{ trait_type: 'Size', value: 'M' }] }) })),
    proofEvents: [{ proofEventId: 501, name: 'Launch night', status: 'active', chips }],
    guestbookContracts: [{ name: 'Guestbook', symbol: 'GB', chainId: 31337, events: [{ name: 'Day 1', tokenId: '1', metadata: metadata(), chips }] }],
  })
  await seedSunProfile(gw, { teamId, name: 'aes', metaKey: META, fileKey: FILE })
  for (const uid of chips) await seedSunChip(gw, { teamId, uid, profileName: 'aes' })
  const dataDir = gw.dataDir
  await gw.app.close()
  await gw.store.close()
  const server = await startServe({
    cwd: dataDir,
    env: { TAPGATE_DATA_DIR: dataDir, PORT: '0', TAPGATE_LOG_LEVEL: 'warn', ...env },
    command: [process.execPath, cliPath, 'serve', '--no-demo'],
    track: (child) => children.push(child),
  })
  // The team as an organiser leaves it before the app goes live: its guestbook deployed (a ref names
  // a guestbook's address only once its deploy is mined).
  await until('the guestbook deployed', async () => {
    const res = await fetch(`${server.url}/events/contracts`, { headers: { 'x-service-api-key': apiKey } })
    const contracts = (await res.json()) as { status: string }[]
    return contracts.length > 0 && contracts.every((c) => c.status === 'confirmed') ? true : undefined
  })
  const counters = new Map<string, number>()
  const tapUrl = (uid: string) => {
    const counter = (counters.get(uid) ?? 0) + 1
    counters.set(uid, counter)
    return `${server.url}${sunTapUrl({ metaKey: META, fileKey: FILE, uid, counter })}`
  }
  return { server, apiKey, tapUrl }
}

async function send(gw: Gateway, path: string, init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}) {
  const res = await fetch(path.startsWith('http') ? path : `${gw.server.url}${path}`, {
    method: init.method ?? 'GET',
    headers: { ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    redirect: 'manual',
  })
  const type = res.headers.get('content-type') ?? ''
  // Read field by field as the apps read it, untyped like call()'s (test/helpers/gateway.ts).
  const body: Awaited<ReturnType<typeof call>>['body'] = type.includes('json') ? await res.json() : await res.text()
  return { status: res.status, location: res.headers.get('location'), body }
}

/** The names the two kinds of client use: the hosted API's (compat=iyk) and the spec's. */
const HOSTED = { key: 'x-iyk-api-key', code: 'x-iyk-code', uid: CHIP.decimal, refParam: 'iykRef', events: 'poapEvents', eventId: 'poapEventId' } as const
const SPEC = { key: 'x-service-api-key', code: 'x-service-code', uid: CHIP.uid, refParam: 'serviceRef', events: 'proofEvents', eventId: 'proofEventId' } as const

/** Every row of the issue's table, in the order an app meets them, with `names`' headers and fields. */
async function everyRow(gw: Gateway, names: typeof HOSTED | typeof SPEC) {
  const key = { [names.key]: gw.apiKey }

  // PATCH /chips + key, {tagUIDs: ["1311252620644752"], updates: {redirectUrl}} → 2xx JSON
  const patched = await send(gw, '/chips', { method: 'PATCH', headers: key, body: { tagUIDs: [names.uid], updates: { redirectUrl: 'https://app.example/claim' } } })
  expect(patched.status, JSON.stringify(patched.body)).toBe(200)
  expect(patched.body).toMatchObject({ success: true })

  // A chip tap redirected to the app: the app reads ?iykRef=<ref id>
  const tap = await send(gw, gw.tapUrl(CHIP.uid))
  expect(tap.status).toBe(302)
  const refId = new URL(tap.location!).searchParams.get(names.refParam)
  expect(refId).toMatch(/\S/)
  expect(tap.location).toMatch(/^https:\/\/app\.example\/claim\?/)

  // GET /refs/:id with the key and the includes → uid, isValidRef, linkedToken.otp, poapEvents[0], guestbookEvents[0]
  const ref = await send(gw, `/refs/${refId}?includeOwner=true&includeMetadata=true`, { headers: key })
  expect(ref.status).toBe(200)
  expect(ref.body).toMatchObject({ uid: names.uid, isValidRef: true, linkedToken: { otp: expect.any(String) } })
  const proofEvent = ref.body[names.events][0]
  expect(proofEvent).toMatchObject({ [names.eventId]: 501, otp: expect.any(String), status: 'active' })
  const guestbookEvent = ref.body.guestbookEvents[0]
  expect(guestbookEvent).toMatchObject({ contractAddress: expect.stringMatching(/^0x[0-9a-fA-F]{40}$/), tokenId: '1', chainId: 31337, otp: expect.any(String) })
  // … and with no key at all, as a chip redirect's page asks
  const bare = await send(gw, `/refs/${new URL((await send(gw, gw.tapUrl(CHIP.uid))).location!).searchParams.get(names.refParam)}`)
  expect(bare.body).toMatchObject({ uid: names.uid, isValidRef: true })

  // GET /otps/:id (+ key) → as the spec
  const otp = await send(gw, `/otps/${proofEvent.otp}`, { headers: key })
  expect(otp.body).toMatchObject({ otp: proofEvent.otp, isExpired: false, type: 'PROOF_EVENT', proofEvent: { proofEventId: 501, status: 'active' } })

  // POST /phygitals/transfer/pullable + code, {recipient} → initialTxHash
  const pulled = await send(gw, '/phygitals/transfer/pullable', { method: 'POST', headers: { [names.code]: ref.body.linkedToken.otp }, body: { recipient: WALLET } })
  expect(pulled.status, JSON.stringify(pulled.body)).toBe(200)
  expect(pulled.body.initialTxHash).toMatch(/^0x[0-9a-f]{64}$/)

  // POST /events/mint/self + code, {recipient} → txnHash
  const minted = await send(gw, '/events/mint/self', { method: 'POST', headers: { [names.code]: guestbookEvent.otp }, body: { recipient: WALLET } })
  expect(minted.status, JSON.stringify(minted.body)).toBe(200)
  expect(minted.body.txnHash).toMatch(/^0x[0-9a-f]{64}$/)

  // GET /events?contractId=N + key → [].contract.{contractAddress, tokenId}
  const contracts = await send(gw, '/events/contracts', { headers: key })
  const guestbook = contracts.body.find((c: { name: string }) => c.name === 'Guestbook')
  const events = await send(gw, `/events?contractId=${guestbook.id}`, { headers: key })
  expect(events.body).toEqual([expect.objectContaining({ contract: expect.objectContaining({ contractAddress: guestbookEvent.contractAddress, tokenId: '1' }) })])

  // POST /poap-events/mint + code, {poapEventId, recipient, deviceId?} → success; again → 400 whose message says so
  const poap = await send(gw, '/poap-events/mint', { method: 'POST', headers: { [names.code]: proofEvent.otp }, body: { poapEventId: 501, recipient: WALLET, deviceId: 'ipad-7' } })
  expect(poap.status, JSON.stringify(poap.body)).toBe(200)
  expect(poap.body.success).toBe(true)
  const again = (await send(gw, `/refs/${new URL((await send(gw, gw.tapUrl(CHIP.uid))).location!).searchParams.get(names.refParam)}`)).body[names.events][0].otp
  const second = await send(gw, '/poap-events/mint', { method: 'POST', headers: { [names.code]: again }, body: { poapEventId: 501, recipient: WALLET } })
  expect(second.status).toBe(400)
  expect(second.body.message).toMatch(/already minted/i)

  // GET /chips/find?e=…&c=…&d=101 (+ key) → {uid, isValidTap, linkedToken}, or an error's message
  const url = new URL(gw.tapUrl(CHIP.uid))
  const query = `?e=${url.searchParams.get('e')}&c=${url.searchParams.get('c')}&d=101`
  const found = await send(gw, `/chips/find${query}`, { headers: key })
  expect(found.body).toMatchObject({ uid: names.uid, isValidTap: true, linkedToken: { contractAddress: expect.any(String), chainId: 31337, tokenId: '1' } })
  expect((await send(gw, `/chips/find${query}`, { headers: key })).body).toMatchObject({ uid: names.uid, isValidTap: false })
  const forged = await send(gw, `/chips/find${query.replace(/c=[0-9A-F]{16}/, 'c=0000000000000000')}`, { headers: key })
  expect(forged.status).toBe(400)
  expect(forged.body.message).toMatch(/\S/)

  // GET /items → [{id, name, description, imageUrl, attributes: [{name, values}], contract: {address, chainId}, createdAt}]
  const items = await send(gw, '/items')
  expect(items.body).toHaveLength(3)
  expect(items.body[0]).toMatchObject({
    id: expect.any(Number),
    name: 'Hoodie 1',
    description: expect.any(String),
    imageUrl: expect.any(String),
    attributes: [{ name: 'Size', values: ['M'] }],
    contract: { address: found.body.linkedToken.contractAddress, chainId: 31337 },
    createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
  })
  // GET /items/:id/chips → [{uid, linkedToken: {tokenId, …}}], with the app's key (chip UIDs are not public)
  const itemChips = await send(gw, `/items/${items.body[0].id}/chips`, { headers: key })
  expect(itemChips.body).toEqual([{ uid: names.uid, linkedToken: expect.objectContaining({ tokenId: '1' }) }])

  return { errorBody: second.body }
}

describe('with TAPGATE_COMPAT=iyk: every row of the table as apps send it', () => {
  let gw: Gateway
  beforeAll(async () => {
    gw = await serve({ TAPGATE_COMPAT: 'iyk' })
  }, 60_000)

  test('each row answers what the app reads; the already-minted error is the hosted shape', { timeout: 60_000 }, async () => {
    const { errorBody } = await everyRow(gw, HOSTED)
    expect(errorBody).toEqual({ statusCode: 400, error: 'Bad Request', message: expect.stringMatching(/already minted/i), success: false, code: 'already_minted' })
  })

  test('an app written with fetch runs a whole flow: tap URL → /chips/find → ref → transfer → proof event mint → items', { timeout: 60_000 }, async () => {
    const app = createFetchApp(gw.server.url, gw.apiKey)
    const found = await app.findChip(gw.tapUrl(FETCH_CHIP))
    expect(found).toMatchObject({ uid: BigInt(`0x${FETCH_CHIP}`).toString(), isValidTap: true, linkedToken: { tokenId: '2' } })
    const ref: HostedRef = await app.getRef(found.ref!)
    expect(ref.isValidRef).toBe(true)
    expect((await app.claimToken(ref.linkedToken!.otp!, WALLET)).initialTxHash).toMatch(/^0x/)
    expect(await app.mintPoap(ref.poapEvents[0]!.otp!, ref.poapEvents[0]!.poapEventId, OTHER)).toMatchObject({ success: true })
    // The token reaches the wallet: a later tap's ref names its owner.
    const owner = await until('the claimed token on chain', async () => {
      const again = await app.getRef((await app.findChip(gw.tapUrl(FETCH_CHIP))).ref!)
      return again.linkedToken?.ownerAddress?.toLowerCase() === WALLET.toLowerCase() ? again.linkedToken.ownerAddress : undefined
    })
    expect(owner.toLowerCase()).toBe(WALLET.toLowerCase())
    expect((await app.items()).map((i) => i.name)).toEqual(['Hoodie 1', 'Hoodie 2', 'Hoodie 3'])
    // A replayed URL: the app shows "not a fresh tap" from isValidTap, not an error.
    const used = gw.tapUrl(FETCH_CHIP)
    await app.findChip(used)
    expect((await app.findChip(used)).isValidTap).toBe(false)
  })

  test('an app written with axios runs the same flow, and shows the message of a second mint', { timeout: 60_000 }, async () => {
    const app = createAxiosApp(gw.server.url, gw.apiKey)
    const found = await app.findChip(gw.tapUrl(AXIOS_CHIP))
    expect(found).toMatchObject({ isValidTap: true, linkedToken: { tokenId: '3' } })
    const ref = await app.getRef(found.ref!)
    expect(ref.uid).toBe(BigInt(`0x${AXIOS_CHIP}`).toString())
    expect((await app.claimToken(ref.linkedToken!.otp!, OTHER)).initialTxHash).toMatch(/^0x/)
    expect(await app.mintPoap(ref.poapEvents[0]!.otp!, 501, THIRD)).toMatchObject({ success: true })
    const next = await app.getRef((await app.findChip(gw.tapUrl(AXIOS_CHIP))).ref!)
    const refused = await app.mintPoap(next.poapEvents[0]!.otp!, 501, THIRD).then(() => 'minted', messageOf)
    expect(refused).toMatch(/already minted/i)
    expect((await app.items())[2]).toMatchObject({ name: 'Hoodie 3', contract: { chainId: 31337 } })
  })
})

describe('without the setting: the same requests with the spec\'s names', () => {
  test('each row answers with the spec\'s names; errors in the spec\'s shape; the endpoints the spec lacks under their tag', { timeout: 90_000 }, async () => {
    const gw = await serve({})
    const { errorBody } = await everyRow(gw, SPEC)
    expect(errorBody).toEqual({ success: false, error: 'already_minted', message: expect.stringMatching(/already minted/i) })
    const openapi = await send(gw, '/openapi.json')
    const tagged = Object.entries(openapi.body.paths as Record<string, Record<string, { tags?: string[] }>>).flatMap(([path, ops]) =>
      Object.entries(ops).filter(([, op]) => op.tags?.includes('hosted API compatibility')).map(([method]) => `${method} ${path}`),
    )
    expect(tagged.sort()).toEqual(['get /chips/find', 'get /items', 'get /items/{id}', 'get /items/{id}/chips', 'patch /chips', 'post /poap-events/mint'])
  })
})
