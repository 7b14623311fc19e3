import { createHash } from 'node:crypto'
import { type Address, getAddress, keccak256, toHex } from 'viem'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { phygitalTokenAbi } from '../../contracts/artifacts/PhygitalToken.js'
import { importData, parseImportFile } from '../../src/importer/importData.js'
import { loadGatewaySecret } from '../../src/keys/gatewaySecret.js'
import type { ClaimSummary, StationEvent } from '../../src/wire/feedProtocol.js'
import type { PostgresStore, SqliteStore } from '../../src/db/store.js'
import { type ChainGateway, contractOf, createBackendChainGateway, holdRelayer, OTHER, USER } from '../helpers/chainGateway.js'
import { BLANK, CAP, type ClaimStation, LAMP, MUG, setUpClaimStation, SHOP_PIN, TEE, TWO_TAP, TWO_TAP_DELAY_S } from '../helpers/claimStation.js'
import { queryRows } from '../helpers/gateway.js'
import { BADGES, kioskTeam, setUpKiosk } from '../kiosk/kioskGateway.js'

let gw: ChainGateway<SqliteStore | PostgresStore>
let shop: ClaimStation

beforeAll(async () => {
  // The limits of /c/* have tests of their own (claimLinksRateLimit); here 200 parallel submissions
  // of one link must each reach the single-use check.
  gw = await createBackendChainGateway({ config: { rateLimit: { max: 10_000 } } })
  shop = await setUpClaimStation(gw, { listen: false })
}, 60_000)
afterAll(async () => {
  await gw?.close()
})

type Json = Record<string, unknown>
const post = async (url: string, payload?: object, headers: Record<string, string> = {}) => {
  const res = await gw.app.inject({ method: 'POST', url, headers, ...(payload ? { payload } : {}) })
  return { status: res.statusCode, body: JSON.parse(res.body) as Json }
}
const kiosk = (url: string, payload?: object) => post(url, payload, { 'x-kiosk-token': shop.kioskToken })
const feed = (stationId = shop.stationId): Promise<StationEvent[]> => gw.store.stationEvents.after(stationId, 0)
const claimRows = async (claimId: number, stationId = shop.stationId) =>
  (await feed(stationId)).flatMap((e) => (e.kind === 'claim' && e.data.claim.id === claimId ? [e.data.claim] : e.kind === 'tap' && e.data.claim?.id === claimId ? [e.data.claim] : []))
const txSteps = async (claimId: number, stationId = shop.stationId) =>
  (await feed(stationId)).flatMap((e) => (e.kind === 'tx' && e.data.claimId === claimId ? [e.data.status] : []))
const ownerOf = async (tokenId: bigint) =>
  gw.publicClient.readContract({ address: await contractOf(gw, shop.teamId), abi: phygitalTokenAbi, functionName: 'ownerOf', args: [tokenId] }) as Promise<Address>
const transfers = async () => (await queryRows<{ n: number }>(gw.store, 'SELECT count(*) AS n FROM transfers'))[0]!.n
const linkToken = (url: string) => new URL(url).pathname.split('/')[2]!

describe('a claim station on the embedded chain', () => {
  test('a product tap opens a claim: the card from metadata on the feed, the ref taken by the gateway, no OTP anywhere outside it', async () => {
    const tap = await shop.tap(TEE, 1)
    expect(tap.status).toBe(200)
    const claimId = await shop.lastClaimId()
    const [row] = (await feed()).filter((e) => e.kind === 'tap').slice(-1)
    expect(row).toMatchObject({ kind: 'tap', data: { state: 'product', uid: TEE } })
    const claim = (row!.data as { claim: ClaimSummary }).claim
    expect(claim).toMatchObject({
      id: claimId,
      kind: 'token',
      step: 'open',
      twoTap: false,
      via: null,
      tx: null,
      product: { name: 'Tapgate tee', description: 'Organic cotton tee with an NFC tag in the hem.', image: null, attributes: [{ trait: 'Size', value: 'M' }, { trait: 'Colour', value: 'Ink' }] },
    })
    // The gateway consumed the ref: whoever reads the station's answer cannot take the OTPs.
    const ref = await gw.app.inject({ method: 'GET', url: `/refs/${tap.body.refId as string}` })
    expect(JSON.parse(ref.body)).toMatchObject({ isValidRef: false })
    const { otpCode } = (await gw.store.claims.get(claimId))!
    expect(JSON.stringify(await feed())).not.toContain(otpCode)
    expect(JSON.stringify(tap.body)).not.toContain(otpCode)
  })

  test('the phone hand-off: a hashed one-time link, taken by the first phone; a bad checksum refused; a good address transfers on chain; reopened: used', async () => {
    await shop.tap(CAP, 1)
    const claimId = await shop.lastClaimId()
    const link = await shop.handoff(claimId)
    expect(link.status).toBe(200)
    expect(link.body.url).toMatch(/^http:\/\/[^/]+\/c\/[A-Za-z0-9_-]{22}$/)
    expect(link.body.svg).toMatch(/^<svg /)
    const token = linkToken(link.body.url)
    const stored = (await gw.store.claims.get(claimId))!
    expect(stored.linkHash).toBe(createHash('sha256').update(token).digest('hex'))
    expect(JSON.stringify(await queryRows(gw.store, 'SELECT * FROM claims'))).not.toContain(token)

    const page = await gw.app.inject({ method: 'GET', url: `/c/${token}` })
    expect(page.statusCode).toBe(200)
    expect(page.headers['content-security-policy']).toContain("default-src 'none'")
    expect(page.headers['cache-control']).toBe('no-store')

    const opened = await post(`/c/${token}/open`, {})
    expect(opened).toMatchObject({ status: 200, body: { claim: { kind: 'token', step: 'opened', product: { name: 'Tapgate cap' }, ens: false } } })
    const session = opened.body.session as string
    expect((await claimRows(claimId)).map((c) => c.step)).toEqual(['open', 'opened'])
    // The kiosk cannot take it back, and another phone cannot open it.
    expect((await kiosk(`/kiosk/claims/${claimId}/recipient`, { recipient: USER })).body.error).toBe('claim_not_open')
    expect(await post(`/c/${token}/open`, {})).toMatchObject({ status: 409, body: { error: 'claim_link_used' } })
    // The same phone reloads: its session opens it again.
    expect((await post(`/c/${token}/open`, { session })).status).toBe(200)

    const typo = USER.slice(0, 2) + USER.slice(2, 10).toLowerCase() + USER.slice(10, 20).toUpperCase() + USER.slice(20)
    expect(await post(`/c/${token}/recipient`, { session, recipient: typo })).toMatchObject({ status: 400, body: { error: 'invalid_recipient' } })
    expect(await post(`/c/${token}/recipient`, { session: 'A'.repeat(22), recipient: USER })).toMatchObject({ status: 403, body: { error: 'claim_session_mismatch' } })
    // Held: the answer reads the transaction after the commit that woke the relayer, and on the embedded
    // chain a free relayer had it mined first now and then (PostgreSQL, 2 runs in 14: 'confirmed').
    const relayer = await holdRelayer(gw)
    const sent = await post(`/c/${token}/recipient`, { session, recipient: USER }).finally(() => relayer.release())
    expect(sent).toMatchObject({ status: 200, body: { claim: { step: 'claimed', tx: { status: 'queued' } } } })
    await gw.settle()
    expect(await ownerOf(2n)).toBe(USER)
    expect(await post(`/c/${token}/status`, { session })).toMatchObject({ status: 200, body: { claim: { step: 'claimed', tx: { status: 'confirmed' } } } })
    expect(await txSteps(claimId)).toEqual(expect.arrayContaining(['queued', 'sent', 'confirmed']))
    // Reopened elsewhere: used. The kiosk's count went up.
    expect(await post(`/c/${token}/open`, {})).toMatchObject({ status: 409, body: { error: 'claim_link_used' } })
    expect(await gw.store.claims.countClaimed(shop.stationId)).toBe(1)
    // A second link for a claimed claim is refused.
    expect(await shop.handoff(claimId)).toMatchObject({ status: 409, body: { error: 'claim_used' } })
  })

  test('200 parallel submissions of one link give exactly one transfer', async () => {
    await shop.tap(MUG, 1)
    const claimId = await shop.lastClaimId()
    const token = linkToken((await shop.handoff(claimId)).body.url)
    const session = (await post(`/c/${token}/open`, {})).body.session as string
    const before = await transfers()
    const results = await Promise.all(Array.from({ length: 200 }, () => post(`/c/${token}/recipient`, { session, recipient: OTHER })))
    const statuses = results.map((r) => r.status)
    expect(statuses.filter((s) => s === 200)).toHaveLength(1)
    expect(results.filter((r) => r.status !== 200).every((r) => r.status === 409 && r.body.error === 'claim_link_used')).toBe(true)
    expect(await transfers()).toBe(before + 1)
    await gw.settle()
    expect(await ownerOf(3n)).toBe(OTHER)
  })

  test('a link past the OTP lifetime is expired (410), and so is the kiosk entry; a new tap opens a new claim', async () => {
    await shop.tap(LAMP, 1)
    const claimId = await shop.lastClaimId()
    const token = linkToken((await shop.handoff(claimId)).body.url)
    gw.clock.offsetMs += gw.config.otpTtlSeconds * 1000
    try {
      expect(await post(`/c/${token}/open`, {})).toMatchObject({ status: 410, body: { error: 'claim_link_expired' } })
      expect(await kiosk(`/kiosk/claims/${claimId}/recipient`, { recipient: USER })).toMatchObject({ status: 410, body: { error: 'claim_expired' } })
      expect(await shop.handoff(claimId)).toMatchObject({ status: 410 })
    } finally {
      gw.clock.offsetMs -= gw.config.otpTtlSeconds * 1000
    }
  })

  test('at the kiosk: a scanner-typed EIP-681 URI claims; the zero address is refused before anything is spent', async () => {
    await shop.tap(LAMP, 2)
    const claimId = await shop.lastClaimId()
    const zero = await kiosk(`/kiosk/claims/${claimId}/recipient`, { recipient: '0x0000000000000000000000000000000000000000' })
    expect(zero).toMatchObject({ status: 400, body: { error: 'recipient_cannot_receive' } })
    const { otpCode } = (await gw.store.claims.get(claimId))!
    expect((await gw.store.otps.get(otpCode))!.usedAt).toBeNull()
    expect((await gw.store.claims.get(claimId))!.step).toBe('open')
    const sent = await kiosk(`/kiosk/claims/${claimId}/recipient`, { recipient: `ethereum:${USER}@31337` })
    expect(sent).toMatchObject({ status: 200, body: { claim: { step: 'claimed', via: 'kiosk' } } })
    expect(sent.body.claim).not.toHaveProperty('recipient')
    await gw.settle()
    expect(await ownerOf(4n)).toBe(USER)
  })

  test('a 2-tap token: the first tap registers the address, a tap too early is `early`, a tap in time claims to the registered address', async () => {
    await shop.tap(TWO_TAP, 1)
    const first = await shop.lastClaimId()
    expect((await claimRows(first))[0]).toMatchObject({ twoTap: true, step: 'open' })
    const registered = await kiosk(`/kiosk/claims/${first}/recipient`, { recipient: OTHER })
    expect(registered).toMatchObject({ status: 200, body: { claim: { step: 'registered' } } })
    const allowedAt = Date.parse((registered.body.claim as ClaimSummary).allowedAt!)
    expect(allowedAt - Date.now()).toBeGreaterThan((TWO_TAP_DELAY_S - 5) * 1000)

    await shop.tap(TWO_TAP, 2)
    const early = await shop.lastClaimId()
    expect((await claimRows(early))[0]).toMatchObject({ step: 'early', allowedAt: new Date(allowedAt).toISOString() })

    gw.clock.offsetMs += (TWO_TAP_DELAY_S + 1) * 1000
    try {
      await shop.tap(TWO_TAP, 3)
      const second = await shop.lastClaimId()
      const rows = await claimRows(second)
      // The gateway knew the address: one tap row, already claimed.
      expect(rows).toHaveLength(1)
      expect(rows[0]).toMatchObject({ step: 'claimed', via: 'known', recipient: OTHER, tx: { status: 'queued' } })
      await gw.settle()
      expect(await ownerOf(5n)).toBe(OTHER)
    } finally {
      gw.clock.offsetMs -= (TWO_TAP_DELAY_S + 1) * 1000
    }
  })

  test('a 2-tap registration to an address that can never receive the token is refused before the OTP is spent', async () => {
    // Code that reverts on every call: the token's onERC721Received check fails.
    const refuser = getAddress(keccak256(toHex('claim refuser')).slice(0, 42))
    await gw.testClient.setCode({ address: refuser, bytecode: '0x60006000fd' })
    await shop.tap(TWO_TAP, 10)
    const claimId = await shop.lastClaimId()
    const refused = await kiosk(`/kiosk/claims/${claimId}/recipient`, { recipient: refuser })
    expect(refused).toMatchObject({ status: 400, body: { error: 'recipient_cannot_receive' } })
    expect((await gw.store.otps.get((await gw.store.claims.get(claimId))!.otpCode))!.usedAt).toBeNull()
    expect((await gw.store.claims.get(claimId))!.step).toBe('open')
    expect(await gw.store.claimRegistrations.findOpen((await gw.store.claims.get(claimId))!.tokenId!, Date.now())).toBeUndefined()
  })

  test("a chip with a wallet on record claims at once; a chip linked to no token is 'nothing'", async () => {
    await gw.store.chips.setWallet(TEE, USER)
    await shop.tap(TEE, 2)
    const claimId = await shop.lastClaimId()
    expect(await claimRows(claimId)).toEqual([expect.objectContaining({ step: 'claimed', via: 'known' })])
    await gw.settle()
    expect(await ownerOf(1n)).toBe(USER)

    const before = await shop.lastClaimId()
    await shop.tap(BLANK, 1)
    expect(await shop.lastClaimId()).toBe(before)
    expect((await feed()).at(-1)).toMatchObject({ kind: 'tap', data: { state: 'nothing', reason: 'chip_not_linked' } })
  })

  test('bad input: unknown claim, another station, a broken link token, no kiosk token', async () => {
    expect(await kiosk('/kiosk/claims/999999/handoff')).toMatchObject({ status: 404, body: { error: 'claim_not_found' } })
    expect(await kiosk('/kiosk/claims/abc/handoff')).toMatchObject({ status: 400 })
    expect(await post(`/kiosk/claims/${await shop.lastClaimId()}/handoff`)).toMatchObject({ status: 401 })
    expect(await post('/c/not-a-token/open', {})).toMatchObject({ status: 404, body: { error: 'claim_link_not_found' } })
    expect(await post(`/c/${'B'.repeat(22)}/open`, {})).toMatchObject({ status: 404, body: { error: 'claim_link_not_found' } })
    expect(await kiosk(`/kiosk/claims/${await shop.lastClaimId()}/recipient`, { recipient: 'not an address' })).toMatchObject({ status: 400, body: { error: 'invalid_recipient' } })
    expect(await kiosk(`/kiosk/claims/${await shop.lastClaimId()}/recipient`, { recipient: 'alice.eth' })).toMatchObject({ status: 400 })
  })
})

describe('check in now, collect later', () => {
  test('a check-in without a wallet opens a guestbook claim; the phone collects the token through the link, and the check-in follows the mint', async () => {
    const secret = loadGatewaySecret({ dataDir: gw.dataDir })
    const summary = await importData(gw.store, parseImportFile({ teams: [kioskTeam()] }), { config: gw.config, now: Date.now(), secret })
    await gw.settle()
    const door = await setUpKiosk(gw, { now: () => Date.now(), teamId: summary.teams[0]!.id })
    expect((await door.tap(BADGES[3]!, 1)).status).toBe(200)
    const tapRow = (await feed(door.stationId)).filter((e) => e.kind === 'tap').at(-1)!
    expect(tapRow.data).toMatchObject({ state: 'accepted', checkIn: { tx: null }, claim: { kind: 'guestbook', step: 'open', product: { name: 'Opening night' } } })
    const claimId = (tapRow.data as { claim: ClaimSummary }).claim.id
    const link = await post(`/kiosk/claims/${claimId}/handoff`, undefined, { 'x-kiosk-token': door.kioskToken })
    const token = linkToken(link.body.url as string)
    const session = (await post(`/c/${token}/open`, {})).body.session as string
    expect(await post(`/c/${token}/recipient`, { session, recipient: OTHER })).toMatchObject({ status: 200, body: { claim: { kind: 'guestbook', step: 'claimed' } } })
    await gw.settle()
    const checkIn = (await gw.store.checkIns.findActive(door.eventId, BADGES[3]!))!
    expect(checkIn.chainTxId).not.toBeNull()
    const steps = (await feed(door.stationId)).flatMap((e) => (e.kind === 'tx' && e.data.checkInId === checkIn.id ? [e.data.status] : []))
    expect(steps).toEqual(expect.arrayContaining(['queued', 'confirmed']))
    expect(await post(`/c/${token}/status`, { session })).toMatchObject({ body: { claim: { tx: { status: 'confirmed' } } } })
  })
})

describe('the staff view of a claim station', () => {
  test('claims per product with links shown, opened, used and expired; retry refuses a confirmed transaction', async () => {
    const login = await post('/kiosk/staff/session', { pin: SHOP_PIN }, { 'x-kiosk-token': shop.kioskToken })
    const headers = { 'x-kiosk-token': shop.kioskToken, 'x-staff-session': login.body.session as string }
    const state = await gw.app.inject({ method: 'GET', url: '/kiosk/staff/state', headers })
    expect(state.statusCode).toBe(200)
    const claims = (JSON.parse(state.body) as { claims: Record<string, unknown>[] }).claims
    const byName = Object.fromEntries(claims.map((c) => [c.product, c]))
    expect(byName['Tapgate cap']).toMatchObject({ kind: 'token', tokenId: '2', taps: 1, claimed: 1, linksShown: 1, linksOpened: 1, linksUsed: 1, linksExpired: 0 })
    expect(byName['Tapgate lamp']).toMatchObject({ taps: 2, claimed: 1, linksShown: 1, linksOpened: 0, linksUsed: 0 })
    expect(byName['Signed print']).toMatchObject({ taps: 4, registered: 1, claimed: 1 })
    const confirmed = (await gw.store.claims.get((await shop.lastClaimId()) - 1))!.chainTxId
    const retry = await post('/kiosk/staff/retry', { txId: confirmed ?? 1 }, headers)
    expect(retry.status).toBeGreaterThanOrEqual(400)
    expect(['tx_not_failed', 'tx_not_found']).toContain(retry.body.error)
  })
})
