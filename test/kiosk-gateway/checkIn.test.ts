import { afterEach, describe, expect, test } from 'vitest'
import { buildApp } from '../../src/app.js'
import { openStore } from '../../src/db/store.js'
import { setStationMode } from '../../src/kiosk/stationModes.js'
import { createTestGateway, type TestGateway } from '../helpers/gateway.js'
import { seedCheckInTeam, STRANGER, stationTap, tapUrl, UIDS, WALLET } from './kioskFixture.js'

// Issue 10: the check-in is decided at the gateway, in the station tap path (POST /station/taps,
// the station socket and the in-process station all go through submitStationTap).

let gw: TestGateway
afterEach(async () => gw?.close())

const feed = (stationId: number) => gw.store.stationEvents.after(stationId, 0)
const taps = async (stationId: number) => (await feed(stationId)).filter((e) => e.kind === 'tap').map((e) => e.data)

describe('check-in at a station in check-in mode', () => {
  test('an accepted tap checks the chip in once, queues its mint to the wallet, and feeds tap + queued rows', async () => {
    gw = await createTestGateway()
    const s = await seedCheckInTeam(gw)
    const res = await stationTap(gw, s.door.token, UIDS[0]!, 1, { readerName: 'ACS ACR1252' })
    expect(res.status).toBe(200)
    // The station's answer keeps its shape, plus what the tap did.
    expect(res.body).toMatchObject({ success: true, refId: expect.any(String), uid: UIDS[0], counter: 1, mode: 'aes' })
    expect(res.body.checkIn).toEqual({
      state: 'accepted',
      test: false,
      checkIn: {
        id: expect.any(Number),
        eventId: s.eventId,
        eventName: 'Opening night',
        at: new Date(gw.clock.now).toISOString(),
        stationId: s.door.stationId,
        stationName: 'Door A',
        manual: false,
        tx: { id: expect.any(Number), status: 'queued', hash: expect.stringMatching(/^0x[0-9a-f]{64}$/) },
      },
    })
    const rows = gw.store.db.prepare('SELECT * FROM check_ins').all()
    expect(rows).toEqual([expect.objectContaining({ event_id: s.eventId, chip_uid: UIDS[0], station_id: s.door.stationId, manual: 0, undone_at: null })])
    // The same mint as POST /events/mint/self: a guestbook_mints row to the chip's wallet, its tx in the outbox.
    const mint = gw.store.db.prepare('SELECT * FROM guestbook_mints').get() as { recipient: string; chip_uid: string; chain_tx_id: number }
    expect(mint).toMatchObject({ recipient: WALLET, chip_uid: UIDS[0], chain_tx_id: res.body.checkIn.checkIn.tx.id })
    expect(await gw.store.chainTxs.get(mint.chain_tx_id)).toMatchObject({ kind: 'guestbook_mint', status: 'queued' })
    const rowsOfFeed = (await feed(s.door.stationId)).filter((e) => e.kind !== 'mode')
    expect(rowsOfFeed.map((e) => e.kind)).toEqual(['tap', 'tx'])
    expect(rowsOfFeed[0]!.data).toMatchObject({ state: 'accepted', uid: UIDS[0], counter: 1, readerName: 'ACS ACR1252', checkIn: res.body.checkIn.checkIn })
    expect(rowsOfFeed[1]!.data).toEqual({ txId: mint.chain_tx_id, checkInId: res.body.checkIn.checkIn.id, status: 'queued', hash: res.body.checkIn.checkIn.tx.hash })
  })

  test('the same chip again, at another station, is "already" with the first time and station, and mints nothing', async () => {
    gw = await createTestGateway()
    const s = await seedCheckInTeam(gw)
    const first = await stationTap(gw, s.door.token, UIDS[0]!, 1)
    gw.clock.now += 7 * 60_000
    const again = await stationTap(gw, s.side.token, UIDS[0]!, 2)
    expect(again.status).toBe(200)
    expect(again.body.checkIn).toMatchObject({
      state: 'already',
      checkIn: { id: first.body.checkIn.checkIn.id, at: first.body.checkIn.checkIn.at, stationName: 'Door A', stationId: s.door.stationId },
    })
    expect(gw.store.db.prepare('SELECT count(*) AS n FROM check_ins').get()).toEqual({ n: 1 })
    expect(gw.store.db.prepare("SELECT count(*) AS n FROM chain_txs WHERE kind = 'guestbook_mint'").get()).toEqual({ n: 1 })
    expect(await taps(s.side.stationId)).toEqual([expect.objectContaining({ state: 'already', uid: UIDS[0] })])
    expect((await feed(s.side.stationId)).some((e) => e.kind === 'tx')).toBe(false)
  })

  test('a chip without a wallet checks in and its token waits (tx null)', async () => {
    gw = await createTestGateway()
    const s = await seedCheckInTeam(gw)
    const res = await stationTap(gw, s.door.token, UIDS[1]!, 1)
    expect(res.body.checkIn).toMatchObject({ state: 'accepted', checkIn: { tx: null } })
    expect(gw.store.db.prepare('SELECT count(*) AS n FROM guestbook_mints').get()).toEqual({ n: 0 })
  })

  test('two stations racing for one chip (two gateways on one data dir): exactly one check-in, one mint', async () => {
    gw = await createTestGateway()
    const s = await seedCheckInTeam(gw)
    const store2 = openStore({ dataDir: gw.dataDir })
    const app2 = await buildApp({ config: gw.config, store: store2, now: () => gw.clock.now })
    try {
      const results = await Promise.all([stationTap(gw, s.door.token, UIDS[0]!, 1), stationTap({ app: app2 }, s.side.token, UIDS[0]!, 2)])
      expect(results.map((r) => r.status)).toEqual([200, 200])
      expect(results.map((r) => r.body.checkIn.state).sort()).toEqual(['accepted', 'already'])
      expect(new Set(results.map((r) => r.body.checkIn.checkIn.id)).size).toBe(1)
      expect(gw.store.db.prepare('SELECT count(*) AS n FROM check_ins').get()).toEqual({ n: 1 })
      expect(gw.store.db.prepare('SELECT count(*) AS n FROM guestbook_mints').get()).toEqual({ n: 1 })
      // The rule itself, on two connections: the partial unique index lets one insert win.
      const station = (await gw.store.stations.get(s.side.stationId))!
      // One after the other: two connections of one process cannot wait for each other's write lock.
      const inserts: Array<number | null> = []
      for (const store of [gw.store, store2])
        inserts.push(await store.tx((tx) => tx.checkIns.insert({ eventId: s.eventId, chipUid: UIDS[1]!, stationId: station.id, manual: false, now: 1 })))
      expect(inserts.filter((id) => id !== null)).toHaveLength(1)
    } finally {
      await app2.close()
      await store2.close()
    }
  })

  test('a test-chip window: accepted, marked test, nothing counted', async () => {
    gw = await createTestGateway()
    const s = await seedCheckInTeam(gw)
    await gw.store.stations.setTestUntil(s.door.stationId, gw.clock.now + 30_000)
    const res = await stationTap(gw, s.door.token, UIDS[0]!, 1)
    expect(res.body.checkIn).toEqual({ state: 'accepted', test: true, checkIn: null })
    expect(gw.store.db.prepare('SELECT count(*) AS n FROM check_ins').get()).toEqual({ n: 0 })
    expect(await taps(s.door.stationId)).toEqual([expect.objectContaining({ state: 'accepted', test: true })])
    gw.clock.now += 31_000
    expect((await stationTap(gw, s.door.token, UIDS[0]!, 2)).body.checkIn).toMatchObject({ state: 'accepted', test: false, checkIn: { id: expect.any(Number) } })
  })
})

describe('refusals and other modes in the feed', () => {
  test('a replayed URL is a replay alert, not a second visit; an unknown chip is unknown; a bad URL is refused', async () => {
    gw = await createTestGateway()
    const s = await seedCheckInTeam(gw)
    const url = tapUrl(UIDS[1]!, 5)
    expect((await stationTap(gw, s.door.token, UIDS[1]!, 5, { url })).body.checkIn.state).toBe('accepted')
    const replay = await stationTap(gw, s.door.token, UIDS[1]!, 5, { url })
    expect(replay.body).toMatchObject({ success: false, error: 'counter_replay' })
    // A clone: the MAC of another key.
    const clone = await stationTap(gw, s.door.token, UIDS[2]!, 1, { url: tapUrl(UIDS[2]!, 1, { fileKey: 'F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0' }) })
    expect(clone.body).toMatchObject({ success: false, error: 'mac_mismatch' })
    const unknown = await stationTap(gw, s.door.token, STRANGER, 1)
    expect(unknown.body).toMatchObject({ success: false, error: 'unknown_chip' })
    const garbage = await stationTap(gw, s.door.token, UIDS[3]!, 1, { url: 'https://tap.example.com/tap?x=1' })
    expect(garbage.status).toBe(400)
    expect((await taps(s.door.stationId)).map((t) => [t.state, t.reason ?? null])).toEqual([
      ['accepted', null],
      ['replay', 'counter_replay'],
      ['replay', 'mac_mismatch'],
      ['unknown', 'unknown_chip'],
      ['refused', garbage.body.error],
    ])
    expect(gw.store.db.prepare('SELECT count(*) AS n FROM check_ins').get()).toEqual({ n: 1 })
  })

  test('a closed station verifies nothing: 409 station_closed, a closed row, no ref, no counter spent', async () => {
    gw = await createTestGateway()
    const s = await seedCheckInTeam(gw)
    await setStationMode(gw.store, { stationId: s.door.stationId, mode: 'closed', now: gw.clock.now })
    const res = await stationTap(gw, s.door.token, UIDS[0]!, 1)
    expect(res).toMatchObject({ status: 409, body: { success: false, error: 'station_closed' } })
    expect((await gw.store.chips.get(UIDS[0]!))!.lastCounter).toBeNull()
    expect(gw.store.db.prepare('SELECT count(*) AS n FROM refs').get()).toEqual({ n: 0 })
    expect(await taps(s.door.stationId)).toEqual([expect.objectContaining({ state: 'closed' })])
    // Reopened without naming the event again: the same event.
    await setStationMode(gw.store, { stationId: s.door.stationId, mode: 'checkin', now: gw.clock.now })
    expect((await stationTap(gw, s.door.token, UIDS[0]!, 1)).body.checkIn).toMatchObject({ state: 'accepted', checkIn: { eventId: s.eventId } })
  })

  test('a station without a mode keeps answering as before, with a plain accepted row', async () => {
    gw = await createTestGateway()
    const s = await seedCheckInTeam(gw)
    await setStationMode(gw.store, { stationId: s.door.stationId, mode: null, now: gw.clock.now })
    const res = await stationTap(gw, s.door.token, UIDS[0]!, 1)
    expect(res.body).toEqual({ success: true, refId: expect.any(String), uid: UIDS[0], counter: 1, mode: 'aes', authenticated: true, fileData: null })
    expect(await taps(s.door.stationId)).toEqual([{ state: 'accepted', uid: UIDS[0], counter: 1 }])
    expect(gw.store.db.prepare('SELECT count(*) AS n FROM check_ins').get()).toEqual({ n: 0 })
  })

  test('a check-in station needs an event of its own team; a claim station none', async () => {
    gw = await createTestGateway()
    const s = await seedCheckInTeam(gw)
    await expect(setStationMode(gw.store, { stationId: s.door.stationId, mode: 'checkin', eventId: 999, now: gw.clock.now })).rejects.toThrow(/no guestbook event 999/)
    // A claim station needs no event: its taps claim the tapped chip's own token.
    expect((await setStationMode(gw.store, { stationId: s.door.stationId, mode: 'claim', now: gw.clock.now })).mode).toBe('claim')
  })
})
