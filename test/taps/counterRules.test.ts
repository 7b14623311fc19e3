import { afterEach, describe, expect, test } from 'vitest'
import type { ConfigInput } from '../../src/config.js'
import type { TapLogRow } from '../../src/db/tapLog.js'
import { formatNtag21xMirror } from '../../src/sun/index.js'
import { createStation } from '../../src/stations/stations.js'
import { type BackendGateway, call, createBackendGateway, queryRows, seedSunChip, seedSunProfile, seedTeam, sunTapUrl } from '../helpers/gateway.js'

const META = '5ACE7E50AB65D5D51FD5BF5A16B8205B'
const FILE = '97D1F3FCC8A6B3A4F1AE6F1E3B4BD5A0'

const UID = {
  /** NTAG 21x, registered without saying whether it mirrors a counter. */
  undeclared: '04C30000000001',
  /** NTAG 21x registered with `counterMirror: true`. */
  counter: '04C30000000002',
  /** NTAG 21x registered with `counterMirror: false`: it mirrors its UID only. */
  uidOnly: '04C30000000003',
  ntag424: '04C30000000004',
}

let gw: BackendGateway
afterEach(async () => gw?.close())

async function setup(config: ConfigInput = {}) {
  gw = await createBackendGateway({ config: { rateLimit: { max: 100_000 }, ...config } })
  const { teamId } = await seedTeam(gw, {
    name: 'A',
    chips: [
      { uid: UID.undeclared, kind: 'ntag21x' },
      { uid: UID.counter, kind: 'ntag21x', counterMirror: true },
      { uid: UID.uidOnly, kind: 'ntag21x', counterMirror: false },
      { uid: UID.ntag424 },
    ],
  })
  await seedSunProfile(gw, { teamId, name: 'aes', metaKey: META, fileKey: FILE })
  await seedSunChip(gw, { teamId, uid: UID.ntag424, profileName: 'aes' })
  const { token } = await gw.store.tx((tx) => createStation(tx, { teamId, name: 'desk', now: gw.clock.now }))
  return { teamId, token }
}

/** The URL an NTAG 21x writes: `uid=UIDxCOUNTER`, or `uid=UID` without a counter mirror. */
const mirror = (uid: string, counter: number | null) => `/tap?uid=${formatNtag21xMirror({ uid, counter })}`

const tap = (url: string) => gw.app.inject({ method: 'GET', url })
const lastLog = async (): Promise<TapLogRow> => (await gw.store.tapLog.recent(1))[0]!
const refCount = async () => (await queryRows<{ n: number }>(gw.store, 'SELECT count(*) AS n FROM refs'))[0]!.n

/** A station's view (staff-facing): the specific code and status. */
const station = (token: string, uid: string, url: string) =>
  call(gw, { method: 'POST', url: '/station/taps', headers: { 'x-station-token': token }, payload: { rfUid: uid, url: `https://gw.example${url}` } })

describe('NTAG 21x: a chip with a counter mirror must present one', () => {
  test('registered with counterMirror: true, a mirror without a counter is refused (no_counter) from the first tap, and mints no ref', async () => {
    await setup()
    for (let i = 0; i < 3; i++) {
      expect((await tap(mirror(UID.counter, null))).statusCode).not.toBe(200)
      expect(await lastLog()).toMatchObject({ chipUid: UID.counter, accepted: 0, reason: 'no_counter', counter: null })
    }
    expect(await refCount()).toBe(0)
    expect((await tap(mirror(UID.counter, 1))).statusCode).toBe(200)
    expect(await refCount()).toBe(1)
  })

  test('not declared: once the chip has presented a counter, a mirror without one is refused', async () => {
    await setup()
    expect((await tap(mirror(UID.undeclared, 7))).statusCode).toBe(200)
    expect((await tap(mirror(UID.undeclared, null))).statusCode).not.toBe(200)
    expect(await lastLog()).toMatchObject({ chipUid: UID.undeclared, accepted: 0, reason: 'no_counter' })
    expect(await refCount()).toBe(1)
    expect((await gw.store.chips.get(UID.undeclared))!.lastCounter).toBe(7)
  })

  test('registered with counterMirror: false, UID-only taps are accepted, and a mirrored counter is refused without touching the chip', async () => {
    await setup()
    expect((await tap(mirror(UID.uidOnly, null))).statusCode).toBe(200)
    expect(await lastLog()).toMatchObject({ chipUid: UID.uidOnly, accepted: 1, authenticated: 0, counter: null })
    // A forged counter must not turn the UID-only chip into one that needs a counter (it would lock it out).
    expect((await tap(mirror(UID.uidOnly, 0xfffffe))).statusCode).not.toBe(200)
    expect(await lastLog()).toMatchObject({ chipUid: UID.uidOnly, accepted: 0, reason: 'malformed', detail: expect.stringContaining('counterMirror') })
    expect((await gw.store.chips.get(UID.uidOnly))!.lastCounter).toBeNull()
    expect((await tap(mirror(UID.uidOnly, null))).statusCode).toBe(200)
  })
})

describe('counterMirror in the import file', () => {
  test('kept as declared, changed only when given, and refused for an NTAG 424 DNA', async () => {
    await setup()
    expect((await gw.store.chips.get(UID.counter))!.counterMirror).toBe(1)
    expect((await gw.store.chips.get(UID.uidOnly))!.counterMirror).toBe(0)
    expect((await gw.store.chips.get(UID.undeclared))!.counterMirror).toBeNull()
    await seedTeam(gw, { name: 'A', chips: [{ uid: UID.counter, kind: 'ntag21x' }, { uid: UID.uidOnly, kind: 'ntag21x', counterMirror: null }] })
    expect((await gw.store.chips.get(UID.counter))!.counterMirror).toBe(1)
    expect((await gw.store.chips.get(UID.uidOnly))!.counterMirror).toBeNull()
    await expect(seedTeam(gw, { name: 'A', chips: [{ uid: UID.ntag424, counterMirror: false }] })).rejects.toThrow(
      expect.objectContaining({ errors: { 'teams.0.chips.0.counterMirror': expect.stringContaining('NTAG 21x chips only') } }),
    )
  })
})

describe('counter jumps (taps.maxCounterJump)', () => {
  test('a forged ctr=FFFFFE is refused (409 counter_jump) without advancing the counter, logged with both counters, and the genuine chip keeps working', async () => {
    const { token } = await setup()
    expect((await tap(mirror(UID.undeclared, 10))).statusCode).toBe(200)
    const res = await station(token, UID.undeclared, mirror(UID.undeclared, 0xfffffe))
    expect(res.status).toBe(409)
    expect(res.body).toMatchObject({ success: false, error: 'counter_jump' })
    expect(await lastLog()).toMatchObject({
      chipUid: UID.undeclared,
      accepted: 0,
      reason: 'counter_jump',
      counter: 0xfffffe,
      detail: expect.stringMatching(/counter 16777214 .*last accepted counter 10.*1000/),
    })
    expect((await gw.store.chips.get(UID.undeclared))!.lastCounter).toBe(10)
    // Also on the phone path.
    expect((await tap(mirror(UID.undeclared, 5000))).statusCode).not.toBe(200)
    expect(await lastLog()).toMatchObject({ reason: 'counter_jump', counter: 5000 })
    expect((await tap(mirror(UID.undeclared, 11))).statusCode).toBe(200)
    expect((await tap(mirror(UID.undeclared, 1011))).statusCode).toBe(200)
    expect((await gw.store.chips.get(UID.undeclared))!.lastCounter).toBe(1011)
  })

  test("a chip's first tap counts from 0: a forged first counter far up is refused too", async () => {
    await setup()
    expect((await tap(mirror(UID.counter, 0xfffffe))).statusCode).not.toBe(200)
    expect(await lastLog()).toMatchObject({ reason: 'counter_jump' })
    expect((await gw.store.chips.get(UID.counter))!.lastCounter).toBeNull()
    expect((await tap(mirror(UID.counter, 3))).statusCode).toBe(200)
  })

  test('the window is configurable', async () => {
    await setup({ taps: { maxCounterJump: 5 } })
    expect((await tap(mirror(UID.counter, 10))).statusCode).not.toBe(200)
    expect((await tap(mirror(UID.counter, 5))).statusCode).toBe(200)
    expect((await tap(mirror(UID.counter, 11))).statusCode).not.toBe(200)
    expect(await lastLog()).toMatchObject({ reason: 'counter_jump', counter: 11 })
    expect((await tap(mirror(UID.counter, 10))).statusCode).toBe(200)
  })

  test('NTAG 424 DNA: no window by default (the MAC proves the counter); taps.ntag424MaxCounterJump turns one on', async () => {
    await setup()
    const url = (counter: number) => sunTapUrl({ metaKey: META, fileKey: FILE, uid: UID.ntag424, counter })
    expect((await tap(url(1))).statusCode).toBe(200)
    expect((await tap(url(50_000))).statusCode).toBe(200)
    await gw.close()

    const { token } = await setup({ taps: { ntag424MaxCounterJump: 100 } })
    expect((await tap(url(1))).statusCode).toBe(200)
    const res = await station(token, UID.ntag424, url(102))
    expect(res.body).toMatchObject({ error: 'counter_jump' })
    expect(res.status).toBe(409)
    expect((await gw.store.chips.get(UID.ntag424))!.lastCounter).toBe(1)
    expect((await tap(url(101))).statusCode).toBe(200)
  })
})
