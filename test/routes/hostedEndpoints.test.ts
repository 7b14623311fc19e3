import { afterEach, describe, expect, test } from 'vitest'
import {
  type BackendGateway,
  call,
  CONTRACT,
  createBackendGateway,
  metadata,
  seedSunChip,
  seedSunProfile,
  seedTeam,
  sunTapUrl,
} from '../helpers/gateway.js'

const META = '5ACE7E50AB65D5D51FD5BF5A16B8205B'
const FILE = '97D1F3FCC8A6B3A4F1AE6F1E3B4BD5A0'
const OTHER_CONTRACT = '0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0'

const UID = { token: '04A20000000001', bare: '04A20000000002', other: '04B20000000001', unregistered: '04A200000000FF' }

let gw: BackendGateway
afterEach(async () => gw?.close())

/** Team A: two SUN chips (one linked to a token), two tokens; team B: one chip and one token of its own. */
async function setup() {
  gw = await createBackendGateway({ config: { rateLimit: { max: 100_000 } } })
  const a = await seedTeam(gw, {
    name: 'A',
    chips: [{ uid: UID.token }, { uid: UID.bare }],
    tokens: [
      {
        chainId: 31337,
        contractAddress: CONTRACT,
        tokenId: '7',
        chips: [UID.token],
        metadata: metadata({
          name: 'Golden Ticket',
          description: 'Admits one',
          image: 'https://img.example/ticket.png',
          attributes: [
            { trait_type: 'Colour', value: 'gold' },
            { trait_type: 'Colour', value: 'black' },
            { trait_type: 'Edition', value: 1 },
          ],
        }),
      },
      { chainId: 31337, contractAddress: CONTRACT, tokenId: '8', chips: [], metadata: metadata({ name: 'Plain', image: '' }) },
    ],
  })
  const b = await seedTeam(gw, {
    name: 'B',
    chips: [{ uid: UID.other }],
    tokens: [{ chainId: 31337, contractAddress: OTHER_CONTRACT, tokenId: '1', chips: [UID.other], metadata: metadata({ name: 'B thing' }) }],
  })
  await seedSunProfile(gw, { teamId: a.teamId, name: 'aes', metaKey: META, fileKey: FILE })
  for (const uid of [UID.token, UID.bare]) await seedSunChip(gw, { teamId: a.teamId, uid, profileName: 'aes' })
  return { a, b }
}

/** A hosted chip URL's query (`e`, `c`, then the hosted `d=101`), made by the chip's keys. */
const findQuery = (uid: string, counter: number, keys: { metaKey?: string; fileKey?: string } = {}) => {
  const url = sunTapUrl({ metaKey: META, fileKey: FILE, uid, counter, ...keys, base: '' })
  return `${url}&d=101`
}
const find = (query: string, headers: Record<string, string> = {}) => call(gw, { method: 'GET', url: `/chips/find${query}`, headers })
const key = (apiKey: string) => ({ 'x-service-api-key': apiKey })

describe('GET /chips/find', () => {
  test('a fresh chip URL: the chip, isValidTap, its token and a ref that /refs then answers', async () => {
    await setup()
    const res = await find(findQuery(UID.token, 5))
    expect(res.status).toBe(200)
    expect(res.headers['cache-control']).toBe('no-store')
    expect(res.body).toMatchObject({ uid: UID.token, isValidTap: true, linkedToken: { contractAddress: CONTRACT, chainId: 31337, tokenId: '7' } })
    const ref = await call(gw, { method: 'GET', url: `/refs/${res.body.ref}` })
    expect(ref.body).toMatchObject({ uid: UID.token, isValidRef: true })
    expect((await gw.store.chips.get(UID.token))?.lastCounter).toBe(5)
  })

  test('a chip with no token: linkedToken null; an API key may be sent, a wrong one is 401', async () => {
    const { a } = await setup()
    const ok = await find(findQuery(UID.bare, 1), key(a.apiKey))
    expect(ok.status).toBe(200)
    expect(ok.body).toMatchObject({ uid: UID.bare, isValidTap: true, linkedToken: null })
    const bad = await find(findQuery(UID.bare, 2), key('not-a-key'))
    expect(bad.status).toBe(401)
    // The refused request spent nothing: the same URL still verifies.
    expect((await find(findQuery(UID.bare, 2))).body.isValidTap).toBe(true)
  })

  test('a replayed URL answers isValidTap false with no ref, and the counter spent by /chips/find also refuses /tap', async () => {
    await setup()
    const query = findQuery(UID.token, 9)
    expect((await find(query)).body.isValidTap).toBe(true)
    const again = await find(query)
    expect(again.status).toBe(200)
    expect(again.body).toEqual({ uid: UID.token, isValidTap: false, linkedToken: { contractAddress: CONTRACT, chainId: 31337, tokenId: '7' } })
    // The same tap through the phone path is refused as a replay, and an older counter too.
    const tap = await gw.app.inject({ method: 'GET', url: `/tap${query.replace('&d=101', '')}` })
    expect(tap.statusCode).toBe(400)
    expect((await gw.store.tapLog.recent(1))[0]).toMatchObject({ accepted: 0, reason: 'counter_replay' })
    expect((await find(findQuery(UID.token, 3))).body.isValidTap).toBe(false)
    // And a URL /tap spent first is a replay at /chips/find.
    const spent = sunTapUrl({ metaKey: META, fileKey: FILE, uid: UID.token, counter: 12 })
    expect((await gw.app.inject({ method: 'GET', url: spent })).statusCode).not.toBe(400)
    expect((await find(`${spent.slice('/tap'.length)}&d=101`)).body.isValidTap).toBe(false)
  })

  test('20 simultaneous finds of one URL: exactly one isValidTap true, one ref minted', async () => {
    await setup()
    const query = findQuery(UID.token, 30)
    const answers = await Promise.all(Array.from({ length: 20 }, () => find(query)))
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200))
    expect(answers.filter((a) => a.body.isValidTap)).toHaveLength(1)
    expect(answers.filter((a) => a.body.ref !== undefined)).toHaveLength(1)
  })

  test('a forged c, a URL made with other keys, an unregistered chip: one 400 tap_refused, nothing spent', async () => {
    await setup()
    const good = findQuery(UID.token, 20)
    const c = /c=([0-9A-F]{16})/.exec(good)![1]!
    const forged = good.replace(`c=${c}`, `c=${c.slice(0, 15)}${c[15] === '0' ? '1' : '0'}`)
    const refusals = [forged, findQuery(UID.token, 21, { fileKey: 'F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0' }), findQuery(UID.unregistered, 1)]
    for (const query of refusals) {
      const res = await find(query)
      expect(res.status).toBe(400)
      expect(res.body).toMatchObject({ success: false, error: 'tap_refused' })
      expect(res.body.message).toMatch(/not accepted/)
    }
    expect((await gw.store.tapLog.recent(3)).map((r) => r.reason).sort()).toEqual(['mac_mismatch', 'mac_mismatch', 'unknown_chip'])
    // The forged attempts spent nothing: the genuine URL still verifies.
    expect((await find(good)).body.isValidTap).toBe(true)
  })

  test('missing or non-hex e or c: 400 validation_failed naming the field', async () => {
    await setup()
    for (const [query, field] of [
      ['?c=0011223344556677&d=101', 'e'],
      ['?e=00112233445566778899AABBCCDDEEFF&d=101', 'c'],
      ['?e=XYZ&c=0011223344556677', 'e'],
    ] as const) {
      const res = await find(query)
      expect(res.status).toBe(400)
      expect(res.body.error).toBe('validation_failed')
      expect(Object.keys(res.body.errors)).toContain(field)
    }
  })
})

describe('PATCH /chips', () => {
  const patch = (apiKey: string | null, payload: unknown) =>
    call(gw, { method: 'PATCH', url: '/chips', headers: apiKey ? key(apiKey) : {}, payload: payload as Record<string, unknown> })

  test("sets the team's chips' redirect URL, then a tap redirects there; null restores the tap page", async () => {
    const { a } = await setup()
    const res = await patch(a.apiKey, { tagUIDs: [UID.token, '04:a2:00:00:00:00:02', UID.token], updates: { redirectUrl: 'https://app.example/claim' } })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      success: true,
      updated: 2,
      chips: [
        { uid: UID.token, redirectUrl: 'https://app.example/claim' },
        { uid: UID.bare, redirectUrl: 'https://app.example/claim' },
      ],
    })
    const tap = await gw.app.inject({ method: 'GET', url: sunTapUrl({ metaKey: META, fileKey: FILE, uid: UID.token, counter: 1 }) })
    expect(tap.statusCode).toBe(302)
    expect(tap.headers.location).toMatch(/^https:\/\/app\.example\/claim\?serviceRef=/)
    expect((await patch(a.apiKey, { tagUIDs: [UID.token], updates: { redirectUrl: null } })).status).toBe(200)
    expect((await gw.store.chips.get(UID.token))?.redirectUrl).toBeNull()
    const page = await gw.app.inject({ method: 'GET', url: sunTapUrl({ metaKey: META, fileKey: FILE, uid: UID.token, counter: 2 }) })
    expect(page.statusCode).toBe(200)
  })

  test("all or nothing: an unknown UID or another team's chip is a 404 naming it, and nothing changes", async () => {
    const { a, b } = await setup()
    for (const stranger of [UID.unregistered, UID.other]) {
      const res = await patch(a.apiKey, { tagUIDs: [UID.token, stranger], updates: { redirectUrl: 'https://app.example/x' } })
      expect(res.status).toBe(404)
      expect(res.body).toMatchObject({ success: false, error: 'chip_not_found' })
      expect(res.body.message).toContain(stranger)
      expect((await gw.store.chips.get(UID.token))?.redirectUrl).toBeNull()
    }
    // The foreign chip is refused with the words an unknown one gets, and is untouched.
    const unknown = await patch(a.apiKey, { tagUIDs: [UID.unregistered], updates: { redirectUrl: 'https://app.example/x' } })
    const foreign = await patch(a.apiKey, { tagUIDs: [UID.other], updates: { redirectUrl: 'https://app.example/x' } })
    expect(foreign.body.message.replace(UID.other, 'UID')).toBe(unknown.body.message.replace(UID.unregistered, 'UID'))
    expect((await gw.store.chips.get(UID.other))?.redirectUrl).toBeNull()
    // Team B sets its own chip.
    expect((await patch(b.apiKey, { tagUIDs: [UID.other], updates: { redirectUrl: 'https://b.example/' } })).status).toBe(200)
  })

  test('no key 401; a bad UID, an empty list, a javascript: URL or no updates: 400', async () => {
    const { a } = await setup()
    expect((await patch(null, { tagUIDs: [UID.token], updates: { redirectUrl: 'https://app.example/' } })).status).toBe(401)
    for (const body of [
      { tagUIDs: ['04A2'], updates: { redirectUrl: 'https://app.example/' } },
      { tagUIDs: [], updates: { redirectUrl: 'https://app.example/' } },
      { tagUIDs: [UID.token], updates: { redirectUrl: 'javascript:alert(1)' } },
      { tagUIDs: [UID.token] },
    ]) {
      const res = await patch(a.apiKey, body)
      expect(res.status).toBe(400)
      expect(res.body.error).toBe('validation_failed')
    }
    expect((await gw.store.chips.get(UID.token))?.redirectUrl).toBeNull()
  })
})

describe('GET /items', () => {
  test("the team's tokens as items, oldest first, metadata mapped", async () => {
    const { a } = await setup()
    const res = await call(gw, { method: 'GET', url: '/items', headers: key(a.apiKey) })
    expect(res.status).toBe(200)
    expect(res.body).toHaveLength(2)
    expect(res.body[0]).toEqual({
      id: expect.any(Number),
      name: 'Golden Ticket',
      description: 'Admits one',
      imageUrl: 'https://img.example/ticket.png',
      attributes: [
        { name: 'Colour', values: ['gold', 'black'] },
        { name: 'Edition', values: ['1'] },
      ],
      contract: { address: CONTRACT, chainId: 31337 },
      tokenId: '7',
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    })
    expect(res.body[1]).toMatchObject({ name: 'Plain', imageUrl: null, tokenId: '8' })
  })

  test('one item and its chips; another team\'s item or an unknown id is 404; no key: every team\'s items, as the apps call them, but no chips; a bad key 401; a bad id 400', async () => {
    const { a, b } = await setup()
    const [golden, plain] = (await call(gw, { method: 'GET', url: '/items', headers: key(a.apiKey) })).body
    const one = await call(gw, { method: 'GET', url: `/items/${golden.id}`, headers: key(a.apiKey) })
    expect(one.body).toEqual(golden)
    const chips = await call(gw, { method: 'GET', url: `/items/${golden.id}/chips`, headers: key(a.apiKey) })
    expect(chips.body).toEqual([{ uid: UID.token, linkedToken: { contractAddress: CONTRACT, chainId: 31337, tokenId: '7' } }])
    expect((await call(gw, { method: 'GET', url: `/items/${plain.id}/chips`, headers: key(a.apiKey) })).body).toEqual([])

    const [theirs] = (await call(gw, { method: 'GET', url: '/items', headers: key(b.apiKey) })).body
    expect(theirs).toMatchObject({ name: 'B thing' })
    for (const url of [`/items/${theirs.id}`, `/items/${theirs.id}/chips`, '/items/999999', '/items/999999/chips']) {
      const res = await call(gw, { method: 'GET', url, headers: key(a.apiKey) })
      expect(res.status).toBe(404)
      expect(res.body.error).toBe('item_not_found')
    }
    // Without a key (as the apps call them): every team's items, each as its team's key sees it.
    const all = await call(gw, { method: 'GET', url: '/items' })
    expect(all.body).toEqual([golden, plain, theirs])
    expect((await call(gw, { method: 'GET', url: `/items/${theirs.id}` })).body).toEqual(theirs)
    // The chips' UIDs need the key.
    expect((await call(gw, { method: 'GET', url: `/items/${golden.id}/chips` })).status).toBe(401)
    expect((await call(gw, { method: 'GET', url: '/items/999999' })).status).toBe(404)
    expect((await call(gw, { method: 'GET', url: '/items', headers: key('not-a-key') })).status).toBe(401)
    expect((await call(gw, { method: 'GET', url: '/items/abc', headers: key(a.apiKey) })).status).toBe(400)
  })
})
