/*
 * The check-in page fed by the station software itself: a virtual badge placed on a virtual
 * reader, read by the Station over APDUs, sent over its WebSocket link (GatewayLink → GET
 * /station/ws), verified and checked in at the gateway, shown by the page.
 */
import fs from 'node:fs'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { GatewayLink } from '../../station/link/gatewayLink.js'
import { Station } from '../../station/station.js'
import { VirtualNtag424 } from '../../station/virtual-card/ntag424.js'
import { createVirtualReader } from '../../station/virtual-card/virtualReader.js'
import { createTestGateway, GUESTBOOK, makeTempDir, seedTeam, type TestGateway } from '../helpers/gateway.js'
import { closeKioskContext, HAS_CHROMIUM, kioskContext, type KioskContext, launchChromium, shot } from './browser.js'
import { BADGES, FILE, type Kiosk, kioskTeam, META, setUpKiosk } from './kioskGateway.js'

const READER = 'Virtual NTAG 424 reader'
const quiet = { info: () => {}, warn: () => {}, error: () => {} }

let browser: Browser
let gw: TestGateway
let ctx: KioskContext
let kiosk: Kiosk
let page: Page
let station: Station
let queueDir: string | undefined

beforeAll(async () => {
  if (!HAS_CHROMIUM) return
  browser = await launchChromium()
  gw = await createTestGateway({ config: { rateLimit: { max: 100_000 } } })
  const { teamId } = await seedTeam(gw, kioskTeam({ guestbookAddress: GUESTBOOK }))
  gw.clock.now = Date.now()
  kiosk = await setUpKiosk(gw, { now: () => gw.clock.now, teamId })
  ctx = await kioskContext(browser, kiosk.origin)
  page = await ctx.newPage()
  await page.goto(kiosk.kioskUrl)
  await page.waitForSelector('#result[data-state="idle"]')
}, 60_000)

afterAll(async () => {
  await station?.close()
  if (queueDir) fs.rmSync(queueDir, { recursive: true, force: true })
  await closeKioskContext(ctx)
  await browser?.close()
  await gw?.close()
})

const state = () => page.locator('#result').getAttribute('data-state')
const count = () => page.locator('#count').getAttribute('data-count')

describe.skipIf(!HAS_CHROMIUM)('the check-in page fed by a station', () => {
  test('a badge on the reader, through the station and its WebSocket link, shows accepted within a second; a badge pulled mid-read shows retry and counts nothing', async () => {
    const reader = createVirtualReader(READER)
    queueDir = makeTempDir('tapgate-kiosk-queue-')
    const link = new GatewayLink({ gateway: kiosk.origin, token: kiosk.stationToken, queueDir, log: quiet, initialBackoffMs: 20, maxBackoffMs: 200 })
    station = new Station({ source: reader, sink: link, log: quiet })
    // The station reports its reader on connect: the page stops saying it waits for one.
    await expect.poll(() => page.locator('#reader').innerText()).toContain('ready')

    const badge = new VirtualNtag424({ uid: BADGES[0]!, metaKey: META, fileKey: FILE })
    const verdict = new Promise<{ verdict: { accepted: boolean } }>((resolve) => station.once('verdict', resolve))
    const placed = Date.now()
    reader.place(badge)
    await page.waitForSelector('#result[data-state="accepted"]', { timeout: 1_000 })
    const shownAfterMs = Date.now() - placed
    expect((await verdict).verdict.accepted).toBe(true)
    reader.remove()
    expect(shownAfterMs).toBeLessThan(1_000)
    await expect.poll(count).toBe('1')
    await shot(page, 'kiosk-station-accepted')

    // Pulled mid-read: the station reads nothing whole, the page asks to hold it longer.
    const pulled = new VirtualNtag424({ uid: BADGES[1]!, metaKey: META, fileKey: FILE })
    pulled.removeAfter(0)
    const removed = new Promise((resolve) => station.once('removed', resolve))
    reader.place(pulled)
    await removed
    await expect.poll(state).toBe('retry')
    await shot(page, 'kiosk-station-retry')
    expect(await count()).toBe('1')
    expect(gw.store.db.prepare('SELECT count(*) AS n FROM check_ins').get()).toEqual({ n: 1 })
  })
})
