import { afterEach, describe, expect, test } from 'vitest'
import { PIN_LOCK_MAX_MS, PIN_LOCK_MS, setStaffPin } from '../../src/kiosk/staffAuth.js'
import { type BackendGateway, call, createBackendGateway, type TestGateway } from '../helpers/gateway.js'
import { secondGateway, seedCheckInTeam } from './kioskFixture.js'

// Issue 17 §6: a staff PIN lock that reset after 5 minutes let 1,440 guesses a day through. Each
// lock in a row now lasts twice the one before (up to a day) until the right PIN, survives a
// restart, and each lock is in the staff feed. The gateway's clock is injected (gw.clock).

let gw: BackendGateway
afterEach(async () => gw?.close())

const PIN = '482913'
const MIN = 60_000

type App = Pick<TestGateway, 'app'>
const session = (app: App, kiosk: string, pin: string) => call(app, { method: 'POST', url: '/kiosk/staff/session', headers: { 'x-kiosk-token': kiosk }, payload: { pin } })

/** Five wrong PINs from an unlocked state: the fifth answers 423; returns how long the lock is. */
async function lockOut(app: App, kiosk: string): Promise<number> {
  for (let i = 1; i < 5; i++) expect((await session(app, kiosk, '0000')).status).toBe(401)
  const fifth = await session(app, kiosk, '0000')
  expect(fifth).toMatchObject({ status: 423, body: { error: 'pin_locked' } })
  return Date.parse(fifth.body.lockedUntil as string) - gw.clock.now
}

const lockSummaries = async (stationId: number) =>
  (await gw.store.stationEvents.after(stationId, 0)).flatMap((e) => (e.kind === 'staff' && e.data.action === 'locked' ? [e.data.summary] : []))

describe('staff PIN locks grow', () => {
  test('each lock in a row doubles (5, 10, 20 minutes); each is in the staff feed; the right PIN starts over at 5', async () => {
    gw = await createBackendGateway()
    const s = await seedCheckInTeam(gw)
    await setStaffPin(gw.store, { stationId: s.door.stationId, pin: PIN, now: gw.clock.now })
    const lengths: number[] = []
    for (let i = 0; i < 3; i++) {
      lengths.push(await lockOut(gw, s.kiosk))
      // Still locked a moment before the end, the right PIN included.
      gw.clock.now += lengths.at(-1)! - 1
      expect((await session(gw, s.kiosk, PIN)).status).toBe(423)
      gw.clock.now += 1
    }
    expect(lengths).toEqual([5 * MIN, 10 * MIN, 20 * MIN])
    expect(await lockSummaries(s.door.stationId)).toEqual([
      '5 wrong PINs: locked for 5 minutes',
      '5 wrong PINs: locked for 10 minutes (lock 2 in a row)',
      '5 wrong PINs: locked for 20 minutes (lock 3 in a row)',
    ])
    // The staff view's state carries the feed, locks included.
    const staffSession = (await session(gw, s.kiosk, PIN)).body.session as string
    const state = await call(gw, { method: 'GET', url: '/kiosk/staff/state', headers: { 'x-kiosk-token': s.kiosk, 'x-staff-session': staffSession } })
    expect(JSON.stringify(state.body)).toContain('locked for 20 minutes (lock 3 in a row)')
    // The right PIN opened a session: the next lock is the first again.
    expect(await lockOut(gw, s.kiosk)).toBe(PIN_LOCK_MS)
  }, 30_000)

  test('a restart keeps the lock and its count: the next lock is still twice as long', async () => {
    gw = await createBackendGateway()
    const s = await seedCheckInTeam(gw)
    await setStaffPin(gw.store, { stationId: s.door.stationId, pin: PIN, now: gw.clock.now })
    expect(await lockOut(gw, s.kiosk)).toBe(5 * MIN)
    // A second gateway process on the same store, as after a restart.
    const restarted = await secondGateway(gw)
    try {
      expect((await session(restarted, s.kiosk, PIN)).status).toBe(423)
      gw.clock.now += 5 * MIN
      expect(await lockOut(restarted, s.kiosk)).toBe(10 * MIN)
    } finally {
      await restarted.close()
    }
  }, 30_000)

  test('the lock stops growing at 24 hours; setting the PIN again clears it and the count', async () => {
    gw = await createBackendGateway()
    const s = await seedCheckInTeam(gw)
    await setStaffPin(gw.store, { stationId: s.door.stationId, pin: PIN, now: gw.clock.now })
    // Eight locks in a row already (5 wrong PINs each would take 40 slow hashes to get here).
    await gw.store.staffAuth.setTries(s.door.stationId, { failedTries: 0, lockedUntil: null, consecutiveLocks: 8 })
    const lengths: number[] = []
    for (let i = 0; i < 3; i++) {
      lengths.push(await lockOut(gw, s.kiosk))
      gw.clock.now += lengths.at(-1)!
    }
    // 5 · 2^8 minutes, then the cap.
    expect(lengths.map((ms) => ms / MIN)).toEqual([1280, 1440, 1440])
    expect(lengths.at(-1)).toBe(PIN_LOCK_MAX_MS)
    expect((await lockSummaries(s.door.stationId)).slice(-3)).toEqual([
      '5 wrong PINs: locked for 21 h 20 min (lock 9 in a row)',
      '5 wrong PINs: locked for 24 hours (lock 10 in a row)',
      '5 wrong PINs: locked for 24 hours (lock 11 in a row)',
    ])
    await lockOut(gw, s.kiosk)
    // Staff locked out: `tapgate station staff-pin` sets the PIN again, which ends the lock and its count.
    await setStaffPin(gw.store, { stationId: s.door.stationId, pin: PIN, now: gw.clock.now })
    expect((await session(gw, s.kiosk, PIN)).status).toBe(200)
    expect(await lockOut(gw, s.kiosk)).toBe(PIN_LOCK_MS)
  }, 60_000)
})
