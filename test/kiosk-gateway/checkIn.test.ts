import { afterEach, describe, expect, test } from 'vitest'
import { setStationMode } from '../../src/kiosk/stationModes.js'
import { type BackendGateway, createBackendGateway, queryRows } from '../helpers/gateway.js'
import { secondGateway, seedCheckInTeam, STRANGER, stationTap, tapUrl, UIDS, WALLET } from './kioskFixture.js'

// Issue 10: the check-in is decided at the gateway, in the station tap path (POST /station/taps,
// the station socket and the in-process station all go through submitStationTap).

let gw: BackendGateway
afterEach(async () => gw?.close())

const count = async (table: string, where = '') => (await queryRows<{ n: number }>(gw.store, `SELECT count(*) AS n FROM ${table}${where}`))[0]!.n
const feed = (stationId: number) => gw.store.stationEvents.after(stationId, 0)
const taps = async (stationId: number) => (await feed(stationId)).filter((e) => e.kind === 'tap').map((e) => e.data)

describe('check-in at a station in check-in mode', () => {
  test('an accepted tap checks the chip in once, queues its mint to the wallet, and feeds tap + queued rows', async () => {
    gw = await createBackendGateway()
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
    // manual as 0/1 on both engines (a boolean column on PostgreSQL).
    const rows = await queryRows(
      gw.store,
      'SELECT event_id AS event, chip_uid AS chip, station_id AS station, CAST(manual AS INTEGER) AS manual, undone_at AS undone FROM check_ins',
    )
    expect(rows).toEqual([{ event: s.eventId, chip: UIDS[0], station: s.door.stationId, manual: 0, undone: null }])
    // The same mint as POST /events/mint/self: a guestbook_mints row to the chip's wallet, its tx in the outbox.
    const [mint] = await queryRows<{ recipient: string; chip: string; tx: number }>(gw.store, 'SELECT recipient, chip_uid AS chip, chain_tx_id AS tx FROM guestbook_mints')
    expect(mint).toMatchObject({ recipient: WALLET, chip: UIDS[0], tx: res.body.checkIn.checkIn.tx.id })
    expect(await gw.store.chainTxs.get(mint!.tx)).toMatchObject({ kind: 'guestbook_mint', status: 'queued' })
    const rowsOfFeed = (await feed(s.door.stationId)).filter((e) => e.kind !== 'mode')
    expect(rowsOfFeed.map((e) => e.kind)).toEqual(['tap', 'tx'])
    expect(rowsOfFeed[0]!.data).toMatchObject({ state: 'accepted', uid: UIDS[0], counter: 1, readerName: 'ACS ACR1252', checkIn: res.body.checkIn.checkIn })
    expect(rowsOfFeed[1]!.data).toEqual({ txId: mint!.tx, checkInId: res.body.checkIn.checkIn.id, status: 'queued', hash: res.body.checkIn.checkIn.tx.hash })
  })

  test('the same chip again, at another station, is "already" with the first time and station, and mints nothing', async () => {
    gw = await createBackendGateway()
    const s = await seedCheckInTeam(gw)
    const first = await stationTap(gw, s.door.token, UIDS[0]!, 1)
    gw.clock.now += 7 * 60_000
    const again = await stationTap(gw, s.side.token, UIDS[0]!, 2)
    expect(again.status).toBe(200)
    expect(again.body.checkIn).toMatchObject({
      state: 'already',
      checkIn: { id: first.body.checkIn.checkIn.id, at: first.body.checkIn.checkIn.at, stationName: 'Door A', stationId: s.door.stationId },
    })
    expect(await count('check_ins')).toBe(1)
    expect(await count('chain_txs', " WHERE kind = 'guestbook_mint'")).toBe(1)
    expect(await taps(s.side.stationId)).toEqual([expect.objectContaining({ state: 'already', uid: UIDS[0] })])
    expect((await feed(s.side.stationId)).some((e) => e.kind === 'tx')).toBe(false)
  })

  test('a chip without a wallet checks in and its token waits (tx null)', async () => {
    gw = await createBackendGateway()
    const s = await seedCheckInTeam(gw)
    const res = await stationTap(gw, s.door.token, UIDS[1]!, 1)
    expect(res.body.checkIn).toMatchObject({ state: 'accepted', checkIn: { tx: null } })
    expect(await count('guestbook_mints')).toBe(0)
  })

  test('two stations racing for one chip (two gateways on one store): exactly one check-in, one mint', async () => {
    gw = await createBackendGateway()
    const s = await seedCheckInTeam(gw)
    const other = await secondGateway(gw)
    try {
      const results = await Promise.all([stationTap(gw, s.door.token, UIDS[0]!, 1), stationTap(other, s.side.token, UIDS[0]!, 2)])
      const accepted = results.filter((r) => r.status === 200 && r.body.checkIn.state === 'accepted')
      expect(accepted).toHaveLength(1)
      const [loser] = results.filter((r) => r !== accepted[0])
      // Which tap commits first is the engine's: SQLite runs the first to arrive to its end; on PostgreSQL
      // counter 2's may commit first, and then counter 1 is no longer above the chip's: a replay, as on any
      // engine in that order. Either way the chip is checked in once.
      if (loser === results[0] && loser.status !== 200)
        expect(loser).toMatchObject({ status: 409, body: { success: false, error: 'counter_replay', detail: 'counter 1 is not above the last accepted counter 2' } })
      else expect(loser).toMatchObject({ status: 200, body: { checkIn: { state: 'already', checkIn: { id: accepted[0]!.body.checkIn.checkIn.id } } } })
      expect(await count('check_ins')).toBe(1)
      expect(await count('guestbook_mints')).toBe(1)
      // The rule itself, on two connections: the partial unique index lets one insert win.
      const station = (await gw.store.stations.get(s.side.stationId))!
      // One after the other: two SQLite connections of one process cannot wait for each other's write lock.
      const inserts: Array<number | null> = []
      for (const store of [gw.store, other.store])
        inserts.push(await store.tx((tx) => tx.checkIns.insert({ eventId: s.eventId, chipUid: UIDS[1]!, stationId: station.id, manual: false, now: 1 })))
      expect(inserts.filter((id) => id !== null)).toHaveLength(1)
    } finally {
      await other.close()
    }
  })

  test('a test-chip window: accepted, marked test, nothing counted', async () => {
    gw = await createBackendGateway()
    const s = await seedCheckInTeam(gw)
    await gw.store.stations.setTestUntil(s.door.stationId, gw.clock.now + 30_000)
    const res = await stationTap(gw, s.door.token, UIDS[0]!, 1)
    expect(res.body.checkIn).toEqual({ state: 'accepted', test: true, checkIn: null })
    expect(await count('check_ins')).toBe(0)
    expect(await taps(s.door.stationId)).toEqual([expect.objectContaining({ state: 'accepted', test: true })])
    gw.clock.now += 31_000
    expect((await stationTap(gw, s.door.token, UIDS[0]!, 2)).body.checkIn).toMatchObject({ state: 'accepted', test: false, checkIn: { id: expect.any(Number) } })
  })
})

describe('refusals and other modes in the feed', () => {
  test('a replayed URL is a replay alert, not a second visit; an unknown chip is unknown; a bad URL is refused', async () => {
    gw = await createBackendGateway()
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
    expect(await count('check_ins')).toBe(1)
  })

  test('a closed station verifies nothing: 409 station_closed, a closed row, no ref, no counter spent', async () => {
    gw = await createBackendGateway()
    const s = await seedCheckInTeam(gw)
    await setStationMode(gw.store, { stationId: s.door.stationId, mode: 'closed', now: gw.clock.now })
    const res = await stationTap(gw, s.door.token, UIDS[0]!, 1)
    expect(res).toMatchObject({ status: 409, body: { success: false, error: 'station_closed' } })
    expect((await gw.store.chips.get(UIDS[0]!))!.lastCounter).toBeNull()
    expect(await count('refs')).toBe(0)
    expect(await taps(s.door.stationId)).toEqual([expect.objectContaining({ state: 'closed' })])
    // Reopened without naming the event again: the same event.
    await setStationMode(gw.store, { stationId: s.door.stationId, mode: 'checkin', now: gw.clock.now })
    expect((await stationTap(gw, s.door.token, UIDS[0]!, 1)).body.checkIn).toMatchObject({ state: 'accepted', checkIn: { eventId: s.eventId } })
  })

  test('a station without a mode keeps answering as before, with a plain accepted row', async () => {
    gw = await createBackendGateway()
    const s = await seedCheckInTeam(gw)
    await setStationMode(gw.store, { stationId: s.door.stationId, mode: null, now: gw.clock.now })
    const res = await stationTap(gw, s.door.token, UIDS[0]!, 1)
    expect(res.body).toEqual({ success: true, refId: expect.any(String), uid: UIDS[0], counter: 1, mode: 'aes', authenticated: true, fileData: null })
    expect(await taps(s.door.stationId)).toEqual([{ state: 'accepted', uid: UIDS[0], counter: 1 }])
    expect(await count('check_ins')).toBe(0)
  })

  test('a check-in station needs an event of its own team; a claim station none', async () => {
    gw = await createBackendGateway()
    const s = await seedCheckInTeam(gw)
    await expect(setStationMode(gw.store, { stationId: s.door.stationId, mode: 'checkin', eventId: 999, now: gw.clock.now })).rejects.toThrow(/no guestbook event 999/)
    // A claim station needs no event: its taps claim the tapped chip's own token.
    expect((await setStationMode(gw.store, { stationId: s.door.stationId, mode: 'claim', now: gw.clock.now })).mode).toBe('claim')
  })
})
