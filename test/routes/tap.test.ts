import { Writable } from 'node:stream'
import { afterEach, describe, expect, test } from 'vitest'
import type { ConfigInput } from '../../src/config.js'
import type { TapLogRow } from '../../src/db/tapLog.js'
import {
  an10922Input,
  deriveBoltCardKeys,
  deriveSdmBackendMetaKey,
  deriveSdmBackendTagKey,
  diversifyAn10922,
  formatNtag21xMirror,
  generateSunMessage,
  NDEF_URI_TEXT_OFFSET,
} from '../../src/sun/index.js'
import { TapRejectedError, type TapRejectReason } from '../../src/taps/tapErrors.js'
import {
  type BackendGateway,
  call,
  CONTRACT,
  createBackendGateway,
  GUESTBOOK,
  metadata,
  queryRows,
  seedSunChip,
  seedSunProfile,
  seedTeam,
  sunTapUrl,
} from '../helpers/gateway.js'

const META = '5ACE7E50AB65D5D51FD5BF5A16B8205B'
const FILE = '97D1F3FCC8A6B3A4F1AE6F1E3B4BD5A0'
const LRP_META = '00000000000000000000000000000000'
const LRP_FILE = '11111111111111111111111111111111'
const WRONG = 'F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0'

const UID = {
  plain: '04A10000000001',
  token: '04A10000000002',
  redirect: '04A10000000003',
  lrp: '04A10000000004',
  ntag21x: '04A10000000005',
  unregistered: '04A100000000FF',
}

let gw: BackendGateway
afterEach(async () => gw?.close())

/** A team with AES chips (one with a token and events, one with its own redirect), an LRP chip and an NTAG 21x chip. */
async function setup(opts: { withLrp?: boolean; config?: ConfigInput; teamRedirect?: string; tokenName?: string; logStream?: NodeJS.WritableStream } = {}) {
  gw = await createBackendGateway({ config: { rateLimit: { max: 100_000 }, ...opts.config }, logStream: opts.logStream })
  const { teamId } = await seedTeam(gw, {
    name: 'A',
    ...(opts.teamRedirect ? { redirectUrl: opts.teamRedirect } : {}),
    chips: [
      { uid: UID.plain },
      { uid: UID.token },
      { uid: UID.redirect, redirectUrl: 'https://shop.example/landing?campaign=nfc&x=a%20b#top' },
      { uid: UID.lrp },
      { uid: UID.ntag21x, kind: 'ntag21x' },
    ],
    tokens: [
      {
        chainId: 31337,
        contractAddress: CONTRACT,
        tokenId: '7',
        chips: [UID.token],
        metadata: metadata({ name: opts.tokenName ?? 'Golden Ticket', image: 'https://img.example/ticket.png?size=2&fmt=png' }),
      },
    ],
    proofEvents: [{ proofEventId: 9, name: 'Launch party', chips: [UID.token] }],
    guestbookContracts: [
      { name: 'GB', symbol: 'GB', chainId: 31337, address: GUESTBOOK, events: [{ name: 'Opening night', tokenId: '1', metadata: metadata(), chips: [UID.token] }] },
    ],
  })
  await seedSunProfile(gw, { teamId, name: 'aes', metaKey: META, fileKey: FILE })
  for (const uid of [UID.plain, UID.token, UID.redirect]) await seedSunChip(gw, { teamId, uid, profileName: 'aes' })
  if (opts.withLrp !== false) {
    await seedSunProfile(gw, { teamId, name: 'lrp', mode: 'lrp', metaKey: LRP_META, fileKey: LRP_FILE })
    await seedSunChip(gw, { teamId, uid: UID.lrp, profileName: 'lrp' })
  }
  return { teamId }
}

/** An AES chip's URL under the test keys. */
const aesUrl = (uid: string | null, counter: number | null, extra: { fileData?: string; metaKey?: string; fileKey?: string } = {}) =>
  sunTapUrl({ metaKey: META, fileKey: FILE, uid, counter, ...extra })

const tap = (url: string, headers: Record<string, string> = {}) => gw.app.inject({ method: 'GET', url, headers })

const lastLog = async (): Promise<TapLogRow> => (await gw.store.tapLog.recent(1))[0]!

/** The ref id an accepted tap minted, read back from the tap log. */
const lastRefId = async (): Promise<string> => {
  const row = await lastLog()
  expect(row).toMatchObject({ accepted: 1, reason: 'accepted' })
  return row.refId!
}

/** The one page (and status) the public gets for every refusal. */
const REFUSED_STATUS = 400
const VERDICT = 'This tap was not accepted. Tap the chip again; if it is still not accepted, please ask staff for help.'

/**
 * A refused phone tap: the public sees the plain verdict only; the reason (and `status`, the
 * staff-facing status the station gets) and the details are in the tap log.
 */
async function expectRejected(url: string, reason: TapRejectReason, status: number) {
  const res = await tap(url)
  expect(res.statusCode).toBe(REFUSED_STATUS)
  expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
  expect(res.headers['cache-control']).toBe('no-store')
  expect(res.body).toContain(`<p id="verdict" role="alert">${VERDICT}</p>`)
  expect(res.body).not.toContain(reason)
  expect(res.body).not.toContain('Details')
  expect(new TapRejectedError(reason, '').statusCode).toBe(status)
  expect(await lastLog()).toMatchObject({ accepted: 0, reason, source: 'phone', refId: null })
  return lastLog()
}

describe('GET /tap: accepted taps', () => {
  test('counter 0 on a fresh chip: the tap page with the UID and serviceRef, a phone ref, a tap log row', async () => {
    await setup()
    const res = await tap(aesUrl(UID.plain, 0))
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(res.headers['cache-control']).toBe('no-store')
    expect(res.headers['referrer-policy']).toBe('no-referrer')
    expect(res.headers['content-security-policy']).toContain("default-src 'none'")
    const refId = await lastRefId()
    expect(res.body).toContain(`<code id="uid">${UID.plain}</code>`)
    expect(res.body).toContain(`<code id="serviceRef" data-service-ref="${refId}">${refId}</code>`)
    expect(res.body).toContain('No token is linked to this chip.')
    expect(res.body).not.toContain('<script')
    expect(await lastLog()).toMatchObject({ chipUid: UID.plain, source: 'phone', authenticated: 1, counter: 0, detail: 'aes' })
    expect(await gw.store.refs.get(refId)).toMatchObject({ chipUid: UID.plain, source: 'phone', authenticated: 1, counter: 0, consumedAt: null })
    expect((await gw.store.chips.get(UID.plain))!.lastCounter).toBe(0)
  })

  test('the tap page shows the linked token (name, image) and the proof and guestbook events', async () => {
    await setup()
    const res = await tap(aesUrl(UID.token, 1))
    expect(res.statusCode).toBe(200)
    expect(res.body).toContain('<p id="token-name">Golden Ticket</p>')
    expect(res.body).toContain('<img src="https://img.example/ticket.png?size=2&amp;fmt=png" alt="Golden Ticket"')
    expect(res.body).toContain(`Token 7 of <code>${CONTRACT}</code> on chain 31337`)
    expect(res.body).toContain('<li>Launch party <small>(active)</small></li>')
    expect(res.body).toContain('<li>Opening night <small>(guestbook)</small></li>')
  })

  test('every value on the tap page is escaped: a token named <script>', async () => {
    await setup({ tokenName: `<script>alert("x")</script> & 'friends'` })
    const res = await tap(aesUrl(UID.token, 1))
    expect(res.statusCode).toBe(200)
    expect(res.body).not.toContain('<script')
    expect(res.body).toContain('<p id="token-name">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;friends&#39;</p>')
    expect(res.body).toContain('alt="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;friends&#39;"')
  })

  test('a chip with a redirect URL: 302 with serviceRef appended to its own query (and fragment kept)', async () => {
    await setup({ teamRedirect: 'https://team.example/welcome' })
    const res = await tap(aesUrl(UID.redirect, 5))
    expect(res.statusCode).toBe(302)
    const refId = await lastRefId()
    expect(res.headers.location).toBe(`https://shop.example/landing?campaign=nfc&x=a%20b&serviceRef=${refId}#top`)
    expect(new URL(res.headers.location as string).searchParams.get('serviceRef')).toBe(refId)
    expect(res.headers['cache-control']).toBe('no-store')
    expect(res.body).toBe('')
  })

  test("a chip without one falls back to its team's redirect URL", async () => {
    await setup({ teamRedirect: 'https://team.example/welcome' })
    const res = await tap(aesUrl(UID.plain, 1))
    expect(res.statusCode).toBe(302)
    expect(res.headers.location).toBe(`https://team.example/welcome?serviceRef=${await lastRefId()}`)
  })

  test('the ref of a tap is valid exactly once through GET /refs/:id', async () => {
    await setup({ teamRedirect: 'https://team.example/welcome' })
    const res = await tap(aesUrl(UID.token, 3))
    const refId = new URL(res.headers.location as string).searchParams.get('serviceRef')!
    const first = await call(gw, { url: `/refs/${refId}` })
    expect(first.status).toBe(200)
    expect(first.body).toMatchObject({ uid: UID.token, isValidRef: true, linkedToken: { tokenId: '7', otp: expect.any(String) } })
    const second = await call(gw, { url: `/refs/${refId}` })
    expect(second.body).toMatchObject({ uid: UID.token, isValidRef: false })
    expect(second.body.linkedToken.otp).toBeUndefined()
  })

  test('LRP mode', async () => {
    await setup()
    const res = await tap(sunTapUrl({ metaKey: LRP_META, fileKey: LRP_FILE, mode: 'lrp', uid: UID.lrp, counter: 12 }))
    expect(res.statusCode).toBe(200)
    expect(await lastLog()).toMatchObject({ chipUid: UID.lrp, counter: 12, authenticated: 1, detail: 'lrp' })
  })

  test('encrypted file data (MAC input from d through &c=)', async () => {
    await setup()
    const url = aesUrl(UID.plain, 2, { fileData: '0123456789ABCDEF'.repeat(4) })
    expect(url).toMatch(/\?e=[0-9A-F]{32}&d=[0-9A-F]{64}&c=[0-9A-F]{16}$/)
    expect((await tap(url)).statusCode).toBe(200)
    expect(await lastLog()).toMatchObject({ chipUid: UID.plain, counter: 2, accepted: 1 })
  })

  test('an NTAG 21x mirror is accepted for an ntag21x chip, unauthenticated in the tap log, the ref and the page', async () => {
    await setup()
    const res = await tap(`/tap?uid=${formatNtag21xMirror({ uid: UID.ntag21x, counter: 42 })}`)
    expect(res.statusCode).toBe(200)
    expect(res.body).toContain('cannot prove it is genuine')
    const refId = await lastRefId()
    expect(await lastLog()).toMatchObject({ chipUid: UID.ntag21x, authenticated: 0, counter: 42, detail: 'ntag21x' })
    expect(await gw.store.refs.get(refId)).toMatchObject({ authenticated: 0, counter: 42 })
    // Its counter still guards against replays.
    await expectRejected(`/tap?uid=${UID.ntag21x}x00002A`, 'counter_replay', 409)
  })

  test('the three key diversification schemes each accept a tap end to end', async () => {
    await setup()
    const teamId = (await seedTeam(gw, {
      name: 'Diversified',
      chips: [{ uid: '04D1000000000A' }, { uid: '04D1000000000B' }, { uid: '04D1000000000C' }],
    })).teamId
    const master = '00112233445566778899AABBCCDDEEFF'
    const [an, sdm, bolt] = ['04D1000000000A', '04D1000000000B', '04D1000000000C']
    await seedSunProfile(gw, { teamId, name: 'an10922', keyScheme: 'an10922', metaKey: META, masterKey: master })
    await seedSunProfile(gw, { teamId, name: 'sdm', keyScheme: 'sdm_backend', masterKey: master })
    await seedSunProfile(gw, { teamId, name: 'bolt', keyScheme: 'boltcard', masterKey: master, layout: { piccParam: 'p', macParam: 'c' } })
    await seedSunChip(gw, { teamId, uid: an!, profileName: 'an10922' })
    await seedSunChip(gw, { teamId, uid: sdm!, profileName: 'sdm' })
    await seedSunChip(gw, { teamId, uid: bolt!, profileName: 'bolt', keyVersion: 3 })

    const anUrl = sunTapUrl({ metaKey: META, fileKey: diversifyAn10922({ masterKey: master, m: an10922Input({ uid: an! }) }), uid: an!, counter: 1 })
    const sdmUrl = sunTapUrl({
      metaKey: deriveSdmBackendMetaKey({ masterKey: master }),
      fileKey: deriveSdmBackendTagKey({ masterKey: master, uid: sdm!, keyNo: 2 }),
      uid: sdm!,
      counter: 1,
      params: { picc: 'picc_data', mac: 'cmac', enc: 'enc' },
    })
    const boltKeys = deriveBoltCardKeys({ issuerKey: master, uid: bolt!, version: 3 })
    const boltUrl = sunTapUrl({ metaKey: boltKeys.k1, fileKey: boltKeys.k2, uid: bolt!, counter: 1, params: { picc: 'p', mac: 'c' } })
    for (const [uid, url] of [[an, anUrl], [sdm, sdmUrl], [bolt, boltUrl]] as const) {
      expect((await tap(url)).statusCode, uid).toBe(200)
      expect(await lastLog()).toMatchObject({ chipUid: uid, accepted: 1, authenticated: 1, counter: 1 })
    }
    // The chip's own keys matter: another chip's diversified file key fails the MAC.
    const foreign = sunTapUrl({ metaKey: META, fileKey: diversifyAn10922({ masterKey: master, m: an10922Input({ uid: sdm! }) }), uid: an!, counter: 2 })
    await expectRejected(foreign, 'mac_mismatch', 403)
  })

  test('the URL is rebuilt from publicBaseUrl, so an SDM offset layout (counted over the whole URL) verifies', async () => {
    await setup({ config: { publicBaseUrl: 'https://tap.example.com/' } })
    const teamId = (await gw.store.teams.getByName('A'))!.id
    const base = 'https://tap.example.com/tap?e='
    // Offsets count the NDEF file: 7 header bytes, then the URL without its abbreviated "https://" (code 04).
    const piccOffset = NDEF_URI_TEXT_OFFSET + base.length - 'https://'.length
    const macOffset = piccOffset + 32 + '&c='.length
    await seedSunProfile(gw, { teamId, name: 'offsets', metaKey: META, fileKey: FILE, layout: { piccOffset, macInputOffset: macOffset, macOffset } })
    await seedSunChip(gw, { teamId, uid: UID.plain, profileName: 'offsets' })
    const msg = generateSunMessage({ metaKey: META, fileKey: FILE, uid: UID.plain, counter: 8 })
    const path = `/tap?e=${msg.piccData}&c=${msg.sdmmac}`
    expect((await tap(path, { host: 'internal:8787' })).statusCode).toBe(200)
    expect(await lastLog()).toMatchObject({ chipUid: UID.plain, counter: 8, accepted: 1 })
  })

  test('without publicBaseUrl the URL is rebuilt from the request protocol and Host', async () => {
    await setup()
    const teamId = (await gw.store.teams.getByName('A'))!.id
    const base = 'http://tap.example.com/tap?e='
    const piccOffset = NDEF_URI_TEXT_OFFSET + base.length - 'http://'.length
    const macOffset = piccOffset + 32 + '&c='.length
    await seedSunProfile(gw, { teamId, name: 'offsets', metaKey: META, fileKey: FILE, layout: { piccOffset, macInputOffset: macOffset, macOffset } })
    await seedSunChip(gw, { teamId, uid: UID.plain, profileName: 'offsets' })
    const msg = generateSunMessage({ metaKey: META, fileKey: FILE, uid: UID.plain, counter: 8 })
    const path = `/tap?e=${msg.piccData}&c=${msg.sdmmac}`
    expect((await tap(path, { host: 'tap.example.com' })).statusCode).toBe(200)
  })

  test('the tap path is configurable', async () => {
    await setup({ config: { tapPath: '/t/nfc' } })
    expect((await tap(aesUrl(UID.plain, 1, {}).replace('/tap?', '/t/nfc?'))).statusCode).toBe(200)
    expect((await tap(aesUrl(UID.plain, 2))).statusCode).toBe(404)
  })

  test('HEAD does not spend a tap', async () => {
    await setup()
    const url = aesUrl(UID.plain, 1)
    // Not routed (GET only): 405 with Allow: GET, and nothing verified.
    expect((await gw.app.inject({ method: 'HEAD', url })).statusCode).toBe(405)
    expect(await gw.store.tapLog.recent()).toEqual([])
    expect((await tap(url)).statusCode).toBe(200)
  })
})

describe('GET /tap: refused taps get an HTML page with the reason and a 4xx', () => {
  test('malformed: not hex, truncated, no SUN parameters', async () => {
    await setup()
    await expectRejected(`/tap?e=${'G'.repeat(32)}&c=${'0'.repeat(16)}`, 'malformed', 400)
    await expectRejected(aesUrl(UID.plain, 1).slice(0, -3), 'malformed', 400)
    await expectRejected('/tap', 'malformed', 400)
    await expectRejected('/tap?hello=world', 'malformed', 400)
  })

  test('not_sun_message: PICCData under the wrong meta key', async () => {
    await setup()
    // Fixed chip randomness, so the wrong key's garbage is the same every run (and not a plausible PICCDataTag).
    const url = sunTapUrl({ metaKey: WRONG, fileKey: FILE, uid: UID.plain, counter: 1, random: Buffer.alloc(5, 0x5a) })
    await expectRejected(url, 'not_sun_message', 400)
  })

  test('mac_mismatch: the wrong file key, or tampered file data', async () => {
    await setup()
    await expectRejected(aesUrl(UID.plain, 1, { fileKey: WRONG }), 'mac_mismatch', 403)
    expect(await lastLog()).toMatchObject({ chipUid: UID.plain, teamId: (await gw.store.teams.getByName('A'))!.id })
    const good = aesUrl(UID.plain, 2, { fileData: '00'.repeat(16) })
    const tampered = good.replace(/&d=([0-9A-F])/, (_m, c: string) => `&d=${c === '0' ? '1' : '0'}`)
    expect(tampered).not.toBe(good)
    await expectRejected(tampered, 'mac_mismatch', 403)
    // Nothing was accepted, so the genuine URL still works.
    expect((await tap(good)).statusCode).toBe(200)
  })

  test('a lower-cased URL is refused as mangled before any crypto runs, and says so', async () => {
    await setup()
    const row = await expectRejected(aesUrl(UID.plain, 1, { fileData: 'AB'.repeat(16) }).toLowerCase(), 'malformed', 400)
    expect(row.detail).toContain('lower-cased')
  })

  test('mode_mismatch: an LRP message for an AES-pinned profile', async () => {
    // Only the AES profile: with an LRP profile too, that profile would decrypt it and find the chip is not its own.
    await setup({ withLrp: false })
    await expectRejected(sunTapUrl({ metaKey: META, fileKey: FILE, mode: 'lrp', uid: UID.plain, counter: 1 }), 'mode_mismatch', 400)
  })

  test('unknown_chip: a valid message from a chip that is not registered', async () => {
    await setup()
    const row = await expectRejected(aesUrl(UID.unregistered, 1), 'unknown_chip', 404)
    expect(row).toMatchObject({ chipUid: UID.unregistered, teamId: null, detail: expect.stringContaining(UID.unregistered) })
  })

  test('counter_replay: the same URL twice, and an older counter after a newer one (naming both numbers)', async () => {
    await setup()
    const url = aesUrl(UID.plain, 5)
    expect((await tap(url)).statusCode).toBe(200)
    const replay = await expectRejected(url, 'counter_replay', 409)
    expect(replay.detail).toContain('counter 5 is not above the last accepted counter 5')
    expect((await tap(aesUrl(UID.plain, 9))).statusCode).toBe(200)
    const older = await expectRejected(aesUrl(UID.plain, 7), 'counter_replay', 409)
    expect(older.detail).toContain('counter 7 is not above the last accepted counter 9')
    expect(await lastLog()).toMatchObject({ chipUid: UID.plain, counter: 7 })
    expect((await gw.store.chips.get(UID.plain))!.lastCounter).toBe(9)
  })

  test('counter_limit: a chip at the 24-bit end of its counter', async () => {
    await setup()
    await expectRejected(aesUrl(UID.plain, 0xffffff), 'counter_limit', 409)
    expect((await tap(aesUrl(UID.plain, 0xfffffe))).statusCode).toBe(200)
  })

  test('no_counter: a message that mirrors the UID only', async () => {
    await setup()
    await expectRejected(aesUrl(UID.plain, null), 'no_counter', 400)
  })

  test('counter-only PICCData (tag 0x40) cannot name the chip', async () => {
    await setup()
    const row = await expectRejected(aesUrl(null, 4), 'malformed', 400)
    expect(row.detail).toContain('mirrors no UID')
  })

  test('no_mac: an NTAG 21x mirror for an NTAG 424 DNA chip', async () => {
    await setup()
    await expectRejected(`/tap?uid=${formatNtag21xMirror({ uid: UID.plain, counter: 1 })}`, 'no_mac', 400)
  })

  test('a tap log row for every accepted and refused tap, with its reason', async () => {
    await setup()
    const taps: [string, string][] = [
      [aesUrl(UID.plain, 1), 'accepted'],
      [aesUrl(UID.plain, 1), 'counter_replay'],
      [aesUrl(UID.plain, 2, { fileKey: WRONG }), 'mac_mismatch'],
      [aesUrl(UID.unregistered, 1), 'unknown_chip'],
      ['/tap?e=XYZ', 'malformed'],
      [aesUrl(UID.plain, null), 'no_counter'],
      [`/tap?uid=${UID.ntag21x}x000001`, 'accepted'],
      [sunTapUrl({ metaKey: LRP_META, fileKey: LRP_FILE, mode: 'lrp', uid: UID.lrp, counter: 1 }), 'accepted'],
    ]
    for (const [url] of taps) await tap(url)
    const rows = (await gw.store.tapLog.recent(100)).reverse()
    expect(rows.map((r) => r.reason)).toEqual(taps.map(([, reason]) => reason))
    for (const row of rows) {
      expect(row.source).toBe('phone')
      expect(row.accepted).toBe(row.reason === 'accepted' ? 1 : 0)
      expect(row.refId === null).toBe(row.reason !== 'accepted')
      if (row.reason !== 'accepted') expect(row.detail).toEqual(expect.any(String))
    }
    expect(await queryRows(gw.store, 'SELECT count(*) AS n FROM refs')).toEqual([{ n: 3 }])
  })
})

describe('GET /tap: what the public learns from a refusal', () => {
  test('every refusal is the same page with the same status: no UID, counter, PICCData, chip kind or reason', async () => {
    await setup()
    expect((await tap(aesUrl(UID.plain, 5))).statusCode).toBe(200)
    const probes: [string, TapRejectReason | 'accepted'][] = [
      // An NTAG 21x mirror naming an unregistered UID, a registered NTAG 424 DNA, and a 21x chip with an old counter.
      [`/tap?uid=${formatNtag21xMirror({ uid: UID.unregistered, counter: 1 })}`, 'unknown_chip'],
      [`/tap?uid=${formatNtag21xMirror({ uid: UID.plain, counter: 1 })}`, 'no_mac'],
      [`/tap?uid=${UID.ntag21x}x000000`, 'accepted'],
      [`/tap?uid=${UID.ntag21x}x000000`, 'counter_replay'],
      // A plain mirror with a made-up MAC: registered or not.
      [`/tap?uid=${UID.plain}&ctr=000009&cmac=0000000000000000`, 'mac_mismatch'],
      [`/tap?uid=${UID.unregistered}&ctr=000009&cmac=0000000000000000`, 'unknown_chip'],
      [aesUrl(UID.plain, 5), 'counter_replay'],
      [aesUrl(UID.plain, 6, { fileKey: WRONG }), 'mac_mismatch'],
      [aesUrl(UID.unregistered, 1), 'unknown_chip'],
      ['/tap?e=XYZ', 'malformed'],
    ]
    const refused = new Set<string>()
    for (const [url, reason] of probes) {
      const res = await tap(url)
      expect((await lastLog()).reason, url).toBe(reason)
      if (reason === 'accepted') continue
      expect(res.statusCode, url).toBe(REFUSED_STATUS)
      refused.add(res.body)
      for (const secret of [UID.plain, UID.unregistered, UID.ntag21x, 'PICCData', 'counter', 'NTAG', reason]) expect(res.body, url).not.toContain(secret)
    }
    expect(refused.size).toBe(1)
  })

  test('the reason of a refusal goes to the server log (the detail to the tap log), not the page', async () => {
    const chunks: string[] = []
    const stream = new Writable({
      write(chunk: Buffer | string, _encoding, callback) {
        chunks.push(chunk.toString())
        callback()
      },
    })
    await setup({ logStream: stream, config: { logLevel: 'info' } })
    const res = await tap(aesUrl(UID.unregistered, 1))
    expect(res.body).not.toContain(UID.unregistered)
    for (let i = 0; i < 50 && !chunks.join('').includes('"tap refused"'); i++) await new Promise((resolve) => setTimeout(resolve, 10))
    const line = JSON.parse(chunks.join('').split('\n').find((l) => l.includes('"tap refused"'))!)
    expect(line).toMatchObject({ reason: 'unknown_chip', uid: UID.unregistered })
    expect(await lastLog()).toMatchObject({ reason: 'unknown_chip', detail: expect.stringContaining(UID.unregistered) })
  })
})

describe('GET /tap: limits and logs', () => {
  test('is rate limited like the other public endpoints', async () => {
    await setup({ config: { rateLimit: { max: 2 } } })
    expect((await tap('/tap?e=1')).statusCode).toBe(400)
    expect((await tap('/tap?e=2')).statusCode).toBe(400)
    const limited = await call(gw, { url: aesUrl(UID.plain, 1) })
    expect(limited.status).toBe(429)
    expect(limited.body).toMatchObject({ success: false, error: 'rate_limited' })
    // A limited request never reached verification: the chip's counter is untouched.
    expect((await gw.store.chips.get(UID.plain))!.lastCounter).toBeNull()
  })

  test('no ref id reaches the logs: not from the redirect Location, not from the tap page', async () => {
    const chunks: string[] = []
    const stream = new Writable({
      write(chunk: Buffer | string, _encoding, callback) {
        chunks.push(chunk.toString())
        callback()
      },
    })
    await setup({ config: { logLevel: 'trace' }, logStream: stream, teamRedirect: 'https://team.example/welcome' })
    const redirected = await tap(aesUrl(UID.plain, 1))
    expect(redirected.statusCode).toBe(302)
    await gw.store.teams.setRedirectUrl((await gw.store.teams.getByName('A'))!.id, null)
    const page = await tap(aesUrl(UID.plain, 2))
    expect(page.statusCode).toBe(200)
    await tap(aesUrl(UID.plain, 2))
    const refIds = (await gw.store.tapLog
      .recent())
      .map((r) => r.refId)
      .filter((id): id is string => id !== null)
    expect(refIds).toHaveLength(2)
    expect(redirected.headers.location).toContain(refIds[1])
    expect(page.body).toContain(refIds[0])

    const completed = () => chunks.join('').split('\n').filter((line) => line.includes('"request completed"')).length
    for (let i = 0; i < 50 && completed() < 3; i++) await new Promise((resolve) => setTimeout(resolve, 10))
    expect(completed()).toBe(3)
    const text = chunks.join('')
    // The tap URL itself is redacted: one refused for load would still be unspent.
    expect(text).toContain('"url":"/tap[redacted]"')
    expect(text).not.toContain(aesUrl(UID.plain, 1).split('?')[1]!)
    for (const refId of refIds) expect(text, 'a ref id leaked into the logs').not.toContain(refId)
    expect(text).not.toContain('serviceRef')
    expect(text.toLowerCase()).not.toContain('location')
  })

  test('the OpenAPI document lists /tap with its HTML responses', async () => {
    await setup()
    const doc = await call(gw, { url: '/openapi.json' })
    expect(doc.status).toBe(200)
    expect(Object.keys(doc.body.paths['/tap'].get.responses['200'].content)).toEqual(['text/html'])
  })
})
