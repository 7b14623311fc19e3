import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, test } from 'vitest'
import { createTestGateway, type TestGateway } from '../helpers/gateway.js'
import { type KioskClient, openKiosk, seedCheckInTeam, stationTap, tapUrl, UIDS } from './kioskFixture.js'

// Issue 18, "a tap and what it causes commit together": the verified tap (counter, ref, tap log)
// and its check-in (check_ins, the mint's outbox row and nonce, guestbook_mints, feed rows) are one
// transaction. The check-in's half is made to fail with a trigger in this test's own SQLite file (a
// real failure inside a real transaction, where a crash between two commits would otherwise fall):
// the tap must roll back with it, so the station's retry of the same URL is not a replay.

let gw: TestGateway
const clients: KioskClient[] = []
afterEach(async () => {
  for (const c of clients.splice(0)) c.ws.terminate()
  await gw?.close()
})

const count = (sql: string) => (gw.store.db.prepare(sql).get() as { n: number }).n
const OTHER_WALLET = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC'

// The seed's guestbook deploy is already in the outbox: the relayer's next nonce before any tap.
async function relayerNonce() {
  const sender = gw.store.db.prepare('SELECT sender FROM chain_txs ORDER BY id LIMIT 1').pluck().get() as string
  return { sender, next: await gw.store.chainTxs.peekNonce(31337, sender) }
}
const mints = () => gw.store.db.prepare("SELECT nonce FROM chain_txs WHERE kind = 'guestbook_mint'").all()

function failCheckInsOf(uid: string) {
  gw.store.db.exec(`CREATE TRIGGER fail_check_in BEFORE INSERT ON check_ins WHEN NEW.chip_uid = '${uid}' BEGIN SELECT RAISE(ABORT, 'check-in refused by the test'); END`)
}

describe('a tap and its check-in commit together', () => {
  test('a check-in that fails takes its tap with it: no counter spent, no ref, no tap log row, no mint, no nonce; the retry checks in', async () => {
    gw = await createTestGateway()
    const s = await seedCheckInTeam(gw)
    failCheckInsOf(UIDS[0]!)
    const before = await relayerNonce()
    const url = tapUrl(UIDS[0]!, 1)
    const failed = await stationTap(gw, s.door.token, UIDS[0]!, 1, { url })
    expect(failed.status).toBe(500)
    expect((await gw.store.chips.get(UIDS[0]!))!.lastCounter).toBeNull()
    expect(count('SELECT count(*) AS n FROM refs')).toBe(0)
    expect(count('SELECT count(*) AS n FROM tap_log WHERE accepted = 1')).toBe(0)
    expect(count('SELECT count(*) AS n FROM check_ins')).toBe(0)
    expect(mints()).toEqual([])
    expect(await gw.store.chainTxs.peekNonce(31337, before.sender)).toBe(before.next)
    expect(count('SELECT count(*) AS n FROM guestbook_mints')).toBe(0)
    expect(count("SELECT count(*) AS n FROM station_events WHERE kind IN ('tap', 'tx')")).toBe(0)

    // The station keeps an unanswered tap and sends it again: the same URL, now accepted and checked in.
    gw.store.db.exec('DROP TRIGGER fail_check_in')
    const retry = await stationTap(gw, s.door.token, UIDS[0]!, 1, { url })
    expect(retry.status).toBe(200)
    expect(retry.body.checkIn).toMatchObject({ state: 'accepted', checkIn: { tx: { status: 'queued' } } })
    expect((await gw.store.chips.get(UIDS[0]!))!.lastCounter).toBe(1)
    expect(mints()).toEqual([{ nonce: before.next }])
    expect(count('SELECT count(*) AS n FROM tap_log WHERE accepted = 1')).toBe(1)
  })

  test('in one group commit, a failed check-in rolls back only its own tap: the other chip checks in, its mint takes the released nonce', async () => {
    gw = await createTestGateway()
    const s = await seedCheckInTeam(gw)
    await gw.store.chips.setWallet(UIDS[1]!, OTHER_WALLET)
    failCheckInsOf(UIDS[0]!)
    const before = await relayerNonce()
    // Sent together, the two taps share one BEGIN IMMEDIATE … COMMIT (store.batch): whichever order they run in, no nonce is skipped or used twice.
    const [failed, ok] = await Promise.all([stationTap(gw, s.door.token, UIDS[0]!, 1), stationTap(gw, s.side.token, UIDS[1]!, 1)])
    expect(failed.status).toBe(500)
    expect(ok.status).toBe(200)
    expect(ok.body.checkIn).toMatchObject({ state: 'accepted', checkIn: { stationId: s.side.stationId, tx: { status: 'queued' } } })
    expect((await gw.store.chips.get(UIDS[0]!))!.lastCounter).toBeNull()
    expect((await gw.store.chips.get(UIDS[1]!))!.lastCounter).toBe(1)
    expect(gw.store.db.prepare('SELECT chip_uid FROM refs').all()).toEqual([{ chip_uid: UIDS[1] }])
    expect(gw.store.db.prepare('SELECT chip_uid FROM check_ins').all()).toEqual([{ chip_uid: UIDS[1] }])
    expect(gw.store.db.prepare('SELECT recipient FROM guestbook_mints').all()).toEqual([{ recipient: OTHER_WALLET }])
    expect(mints()).toEqual([{ nonce: before.next }])
    expect(await gw.store.chainTxs.peekNonce(31337, before.sender)).toBe(before.next + 1)
  })

  test("a tap that rolled back with its check-in announces nothing: no feed notification, the door's kiosk gets no message; the retry's commit does", async () => {
    gw = await createTestGateway()
    await gw.app.listen({ host: '127.0.0.1', port: 0 })
    const s = await seedCheckInTeam(gw)
    const page = await openKiosk(`http://127.0.0.1:${(gw.app.server.address() as AddressInfo).port}`, { token: s.kiosk })
    clients.push(page)
    await page.waitFor((m) => m.type === 'welcome')
    // The real hub, counted: the after-commit notification is the kiosk's push.
    const feed = gw.app.services.feed
    const notify = feed.changed.bind(feed)
    let notified = 0
    feed.changed = () => {
      notified++
      notify()
    }
    failCheckInsOf(UIDS[0]!)
    const url = tapUrl(UIDS[0]!, 1)
    expect((await stationTap(gw, s.door.token, UIDS[0]!, 1, { url })).status).toBe(500)
    // Longer than the hub's poll: a row written and rolled back must not reach the kiosk that way either.
    await new Promise((resolve) => setTimeout(resolve, 700))
    expect(notified).toBe(0)
    expect(page.events()).toEqual([])

    gw.store.db.exec('DROP TRIGGER fail_check_in')
    expect((await stationTap(gw, s.door.token, UIDS[0]!, 1, { url })).status).toBe(200)
    expect(notified).toBe(1)
    const tap = await page.waitFor((m) => m.type === 'event' && m.event.kind === 'tap')
    expect(tap).toMatchObject({ event: { data: { state: 'accepted' } }, counts: { event: 1, station: 1 } })
  })
})
