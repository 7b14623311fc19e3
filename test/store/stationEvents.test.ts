import { setTimeout as sleep } from 'node:timers/promises'
import { expect, it } from 'vitest'
import { describeStores } from '../helpers/stores.js'

describeStores('stationEvents', ({ store }) => {
  const seed = async () => {
    const teamId = await store().teams.insert({ name: 'Team', redirectUrl: null, now: 1 })
    const door = await store().stations.insert({ teamId, name: 'Door', prefix: 'tgst_d', hash: 'h-d', now: 1 })
    const bar = await store().stations.insert({ teamId, name: 'Bar', prefix: 'tgst_b', hash: 'h-b', now: 1 })
    return { door, bar }
  }
  const at = (ms: number) => new Date(ms).toISOString()

  it('appends events and reads them by station, after an id, newest, newest of a kind and the last few', async () => {
    const { door, bar } = await seed()
    expect(await store().stationEvents.maxId()).toBe(0)
    expect(await store().stationEvents.last(door)).toBeUndefined()
    const t = 1_700_000_000_000
    const a = await store().stationEvents.append(door, 'mode', { mode: 'checkin', eventId: null, eventName: null }, t)
    const b = await store().stationEvents.append(door, 'staff', { action: 'login', summary: 'staff session opened' }, t + 1)
    const c = await store().stationEvents.append(bar, 'reader', { readers: ['ACR122U'], cardPresent: false, pcscd: true }, t + 2)
    const d = await store().stationEvents.append(door, 'staff', { action: 'undo', summary: 'undid check-in 3', checkInId: 3 }, t + 3)
    expect([b, c, d]).toEqual([a + 1, a + 2, a + 3])
    const A = { id: a, stationId: door, kind: 'mode', at: at(t), data: { mode: 'checkin', eventId: null, eventName: null } }
    const B = { id: b, stationId: door, kind: 'staff', at: at(t + 1), data: { action: 'login', summary: 'staff session opened' } }
    const C = { id: c, stationId: bar, kind: 'reader', at: at(t + 2), data: { readers: ['ACR122U'], cardPresent: false, pcscd: true } }
    const D = { id: d, stationId: door, kind: 'staff', at: at(t + 3), data: { action: 'undo', summary: 'undid check-in 3', checkInId: 3 } }
    expect(await store().stationEvents.after(door, 0)).toEqual([A, B, D])
    expect(await store().stationEvents.after(door, a)).toEqual([B, D])
    expect(await store().stationEvents.after(door, 0, 2)).toEqual([A, B])
    expect(await store().stationEvents.after(door, d)).toEqual([])
    expect(await store().stationEvents.after(bar, 0)).toEqual([C])
    expect(await store().stationEvents.last(door)).toEqual(D)
    expect(await store().stationEvents.lastOfKind(door, 'staff')).toEqual(D)
    expect(await store().stationEvents.lastOfKind(door, 'mode')).toEqual(A)
    expect(await store().stationEvents.lastOfKind(door, 'tap')).toBeUndefined()
    expect(await store().stationEvents.recent(door, 2)).toEqual([B, D])
    expect(await store().stationEvents.recent(door, 10)).toEqual([A, B, D])
    expect(await store().stationEvents.maxId()).toBe(d)
  })

  it('refuses an event of an unknown station (the foreign key), storing nothing', async () => {
    await seed()
    await expect(store().stationEvents.append(999, 'staff', { action: 'login', summary: 'x' }, 1)).rejects.toThrow(/foreign key|FOREIGN KEY/)
    expect(await store().stationEvents.maxId()).toBe(0)
  })

  /*
   * A kiosk resumes from the last id it saw ("events after id N"), so a station's ids must become
   * visible in id order. Transaction A appends (id 1) and stays open; B appends to the same station
   * and commits. A reader that saw B's id before A committed would resume after it and never get A's.
   */
  it('never shows a station event before a lower id of that station that is not committed yet', async () => {
    const { door } = await seed()
    let appended!: () => void
    let release!: () => void
    const isAppended = new Promise<void>((resolve) => (appended = resolve))
    const released = new Promise<void>((resolve) => (release = resolve))
    const a = store().tx(async (tx) => {
      const id = await tx.stationEvents.append(door, 'staff', { action: 'login', summary: 'A' }, 1)
      appended()
      await released
      return id
    })
    await isAppended
    const b = store().tx((tx) => tx.stationEvents.append(door, 'staff', { action: 'login', summary: 'B' }, 2))
    await sleep(150)
    const seen: number[] = []
    let lastId = 0
    const read = async () => {
      const events = await store().stationEvents.after(door, lastId)
      seen.push(...events.map((e) => e.id))
      lastId = events.at(-1)?.id ?? lastId
    }
    const early = read()
    await sleep(50)
    release()
    const ids = await Promise.all([a, b])
    await early
    await read()
    expect(ids[1]).toBeGreaterThan(ids[0])
    expect(seen).toEqual(ids)
  })

  it('a reader following a station while 20 transactions append to it gets every event once, in id order', async () => {
    const { door, bar } = await seed()
    let done = false
    const seen: number[] = []
    const follow = (async () => {
      let lastId = 0
      while (!done) {
        const events = await store().stationEvents.after(door, lastId)
        seen.push(...events.map((e) => e.id))
        lastId = events.at(-1)?.id ?? lastId
        await sleep(1)
      }
    })()
    const appends = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        store().tx(async (tx) => {
          // Another station's row in between: ids are drawn from one sequence for every station.
          if (i % 3 === 0) await tx.stationEvents.append(bar, 'staff', { action: 'login', summary: `bar ${i}` }, i)
          const id = await tx.stationEvents.append(door, 'staff', { action: 'login', summary: `door ${i}` }, i)
          await sleep(Math.random() * 15)
          return id
        }),
      ),
    )
    done = true
    await follow
    // What committed after the reader's last look.
    seen.push(...(await store().stationEvents.after(door, seen.at(-1) ?? 0)).map((e) => e.id))
    expect(seen).toEqual([...appends].sort((x, y) => x - y))
  })
})
