import type { Browser, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest'
import { setStationMode } from '../../src/kiosk/stationModes.js'
import { createTestGateway, GUESTBOOK, seedTeam, type TestGateway } from '../helpers/gateway.js'
import { audit, closeKioskContext, HAS_CHROMIUM, kioskContext, type KioskContext, launchChromium, pageText, shot } from './browser.js'
import { BADGES, EVENT_NAME, type Kiosk, kioskTeam, setUpKiosk, STATION_NAME, UNREGISTERED } from './kioskGateway.js'

let browser: Browser
let gw: TestGateway
let ctx: KioskContext
let kiosk: Kiosk

beforeAll(async () => {
  if (HAS_CHROMIUM) browser = await launchChromium()
})
afterAll(async () => browser?.close())

async function start(): Promise<Page> {
  gw = await createTestGateway({ config: { rateLimit: { max: 100_000 } } })
  const { teamId } = await seedTeam(gw, kioskTeam({ guestbookAddress: GUESTBOOK }))
  // The gateway's clock runs from a fixed day; the page compares times with its own clock.
  gw.clock.now = Date.now()
  kiosk = await setUpKiosk(gw, { now: () => gw.clock.now, teamId })
  ctx = await kioskContext(browser, kiosk.origin)
  const page = await ctx.newPage()
  await page.goto(kiosk.kioskUrl)
  await expect.poll(() => state(page)).toBe('idle')
  return page
}

afterEach(async () => {
  await closeKioskContext(ctx)
  await gw?.close()
})

const state = (page: Page) => page.locator('#result').getAttribute('data-state')
const count = (page: Page) => page.locator('#count').getAttribute('data-count')
/** Moves the gateway's clock with the wall clock, so each tap is "now" for the page. */
const tick = () => (gw.clock.now = Date.now())

/** The page's check for one screen: screenshot, icon and words present, WCAG contrast and targets, nothing personal. */
async function checkScreen(page: Page, name: string) {
  await shot(page, `kiosk-${name}`)
  const icon = await page.locator('#result svg.icon').getAttribute('data-icon')
  expect(icon, `${name}: an icon`).toBeTruthy()
  expect((await page.locator('#result .word').innerText()).length, `${name}: a word`).toBeGreaterThan(3)
  const a = await audit(page)
  expect(a.checked, name).toBeGreaterThan(5)
  expect(a.lowContrast, `${name}: text contrast`).toEqual([])
  expect(a.lowContrastIcons, `${name}: icon contrast`).toEqual([])
  expect(a.smallTargets, `${name}: target sizes`).toEqual([])
  const text = await pageText(page)
  for (const uid of [...BADGES, UNREGISTERED]) expect(text.toUpperCase()).not.toContain(uid)
  expect(text).not.toMatch(/0x[0-9a-f]{40}(?![0-9a-f])/i)
  return { icon: icon!, sound: (await page.locator('#result').getAttribute('data-sound'))! }
}

describe.skipIf(!HAS_CHROMIUM)('the check-in page (/kiosk)', () => {
  test('every state has its own icon, word, colour and sound, meets contrast ≥ 4.5:1 and 44 px targets, and shows no UID', async () => {
    const page = await start()
    const seen = new Map<string, { icon: string; sound: string; bg: string }>()
    const record = async (name: string) => {
      expect(await state(page)).toBe(name)
      const { icon, sound } = await checkScreen(page, name)
      const bg = await page.locator('#result').evaluate((el) => getComputedStyle(el).backgroundColor)
      seen.set(name, { icon, sound, bg })
    }
    await expect.poll(() => page.locator('#event-name').innerText()).toBe(EVENT_NAME)
    await expect.poll(() => page.locator('#result [role=status]').innerText()).toContain('Tap your badge')
    await record('idle')
    const link = await kiosk.stationLink()

    link.status({ readers: ['ACS ACR1252 PICC'], cardPresent: true, pcscd: true })
    await expect.poll(() => state(page)).toBe('reading')
    await record('reading')

    tick()
    const first = await kiosk.tap(BADGES[0]!, 1)
    expect(first.status, JSON.stringify(first.body)).toBe(200)
    await expect.poll(() => state(page)).toBe('accepted')
    await expect.poll(() => page.locator('#result [role=status]').innerText()).toContain('checked in')
    await record('accepted')
    link.status({ readers: ['ACS ACR1252 PICC'], cardPresent: false, pcscd: true })

    tick()
    await kiosk.tap(BADGES[0]!, 2)
    await expect.poll(() => state(page)).toBe('already')
    await record('already')

    // The first tap's URL again: a copy, not a second visit.
    tick()
    const replay = await kiosk.submit(BADGES[0]!, first.url)
    expect(replay.body.error).toBe('counter_replay')
    await expect.poll(() => state(page)).toBe('replay')
    await expect.poll(() => page.locator('#result [role=alert]').innerText()).toContain("can't be used")
    await expect.poll(() => page.locator('#result [role=status]').innerText()).toBe('')
    await record('replay')
    // A replay alert stays until staff dismiss it: past the 4 s after which other results go back to idle.
    await new Promise((resolve) => setTimeout(resolve, 4_500))
    expect(await state(page)).toBe('replay')
    expect(await kiosk.dismissAlert()).toBe(200)
    await expect.poll(() => state(page)).toBe('idle')

    tick()
    const unknown = await kiosk.tap(UNREGISTERED, 1)
    expect(unknown.body.error).toBe('unknown_chip')
    await expect.poll(() => state(page)).toBe('unknown')
    await expect.poll(() => page.locator('#result [role=alert]').innerText()).toContain('not registered')
    await record('unknown')

    tick()
    link.pulled('ACS ACR1252 PICC')
    await expect.poll(() => state(page)).toBe('retry')
    await record('retry')

    link.status({ readers: [], cardPresent: false, pcscd: true })
    // The retry result runs out first; then the reader's state shows, and stays.
    await expect.poll(() => state(page), { timeout: 8000 }).toBe('no-reader')
    await expect.poll(() => page.locator('#reader').innerText()).toBe('No reader')
    await record('no-reader')
    link.status({ readers: ['ACS ACR1252 PICC'], cardPresent: false, pcscd: true })
    await expect.poll(() => state(page)).toBe('idle')

    tick()
    await setStationMode(gw.store, { stationId: kiosk.stationId, mode: 'closed', now: gw.clock.now })
    gw.app.services.feed.changed()
    await expect.poll(() => state(page)).toBe('closed')
    await record('closed')

    // The link lost (and held lost): the page's own resting state.
    await page.routeWebSocket(/\/kiosk\/ws$/, (ws) => ws.close({ code: 1013, reason: 'held by the test' }))
    for (const ws of gw.app.websocketServer.clients) ws.terminate()
    await expect.poll(() => state(page)).toBe('offline')
    await record('offline')
    link.close()

    // Told apart without colour: every state has its own icon shape, and its own background.
    const states = [...seen.keys()]
    expect(states).toHaveLength(10)
    expect(new Set(states.map((s) => seen.get(s)!.icon)).size).toBe(10)
    expect(new Set(states.map((s) => seen.get(s)!.bg)).size).toBe(10)
    expect(Object.fromEntries(states.map((s) => [s, seen.get(s)!.sound]))).toMatchObject({
      accepted: 'chime',
      already: 'twoTones',
      replay: 'threeLow',
      unknown: 'threeLow',
      retry: 'oneLow',
      reading: 'tick',
    })
  })

  test('already says when and where: "Already checked in at HH:MM at Door A"', async () => {
    const page = await start()
    tick()
    const first = await kiosk.tap(BADGES[1]!, 1)
    expect(first.status).toBe(200)
    const at = (await gw.store.checkIns.findActive(kiosk.eventId, BADGES[1]!))!.createdAt
    const hhmm = new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone: 'Europe/Berlin' }).format(at)
    await expect.poll(() => state(page)).toBe('accepted')
    gw.clock.now += 60_000
    await kiosk.tap(BADGES[1]!, 2)
    await expect.poll(() => state(page)).toBe('already')
    await expect.poll(() => page.locator('#result .word').innerText()).toBe(`Already checked in at ${hhmm} at ${STATION_NAME}`)
    expect(await count(page)).toBe('1')
  })

  test('the server closes the kiosk socket: banner within 3 s, actions disabled, last result kept; taps in the gap appear once after the reconnect; no reload', async () => {
    const page = await start()
    await page.evaluate(() => Object.assign(window, { kioskMarker: 'same page' }))
    let navigations = 0
    page.on('framenavigated', () => navigations++)
    tick()
    await kiosk.tap(BADGES[2]!, 1)
    await expect.poll(() => state(page)).toBe('accepted')
    expect(await count(page)).toBe('1')

    // Reconnects are held off for a while (the page's next tries end at once), so the gap is real.
    let holding = true
    await page.routeWebSocket(/\/kiosk\/ws$/, (ws) => {
      if (holding) ws.close({ code: 1013, reason: 'held by the test' })
      else ws.connectToServer()
    })
    const closedAt = Date.now()
    for (const ws of gw.app.websocketServer.clients) ws.close(1001, 'going away')
    await page.locator('#banner').waitFor({ state: 'visible', timeout: 3000 })
    expect(Date.now() - closedAt).toBeLessThan(3000)
    await expect.poll(() => page.locator('#banner').innerText()).toContain('Not connected')
    await expect.poll(() => page.locator('#banner').innerText()).toContain('TG-LINK')
    // The last result stays; the actions that need the gateway are off.
    expect(await state(page)).toBe('accepted')
    await expect.poll(() => page.locator('#staff').isDisabled()).toBe(true)
    await shot(page, 'kiosk-link-lost')

    tick()
    for (const uid of [BADGES[3]!, BADGES[4]!, BADGES[5]!]) expect((await kiosk.tap(uid, 1)).status).toBe(200)
    await page.waitForTimeout(1500)
    expect(await count(page)).toBe('1')
    holding = false
    await page.locator('#banner').waitFor({ state: 'hidden', timeout: 15_000 })
    await expect.poll(() => count(page)).toBe('4')
    const strip = page.locator('#strip li')
    await expect.poll(() => strip.count()).toBe(4)
    const ids = await strip.evaluateAll((lis) => lis.map((li) => (li as HTMLElement).dataset.eventId))
    expect(new Set(ids).size).toBe(4)
    await shot(page, 'kiosk-reconnected')
    expect(await page.evaluate(() => (window as unknown as { kioskMarker?: string }).kioskMarker)).toBe('same page')
    expect(navigations).toBe(0)
    await expect.poll(() => page.locator('#staff').isEnabled()).toBe(true)
  })

  test('two pages on one station show the same count after 20 taps (one opened halfway)', async () => {
    const first = await start()
    const tapAll = async (uids: string[]) => {
      for (const uid of uids) {
        tick()
        expect((await kiosk.tap(uid, 1)).status).toBe(200)
      }
    }
    await tapAll(BADGES.slice(0, 10))
    // Opened late: its count comes from the gateway's database, not from the taps it saw.
    const second = await ctx.newPage()
    await second.goto(kiosk.kioskUrl)
    await expect.poll(() => count(second)).toBe('10')
    await tapAll(BADGES.slice(10, 20))
    await expect.poll(() => count(first)).toBe('20')
    await expect.poll(() => count(second)).toBe('20')
    expect(await first.locator('#count').innerText()).toBe('20')
    expect(await second.locator('#count').innerText()).toBe('20')
    await shot(second, 'kiosk-second-page-20')
  })

  test('the page asks for a wake lock at load and again when it becomes visible', async () => {
    gw = await createTestGateway()
    const { teamId } = await seedTeam(gw, kioskTeam({ guestbookAddress: GUESTBOOK }))
    kiosk = await setUpKiosk(gw, { now: () => gw.clock.now, teamId })
    ctx = await kioskContext(browser, kiosk.origin)
    await ctx.context.addInitScript(() => {
      const calls: string[] = []
      Object.assign(window, { wakeLockCalls: calls })
      Object.defineProperty(navigator, 'wakeLock', { value: { request: async (type: string) => (calls.push(type), { release: async () => {} }) } })
    })
    const page = await ctx.newPage()
    await page.goto(kiosk.kioskUrl)
    const calls = () => page.evaluate(() => (window as unknown as { wakeLockCalls: string[] }).wakeLockCalls)
    await expect.poll(calls).toEqual(['screen'])
    await page.evaluate(() => document.dispatchEvent(new Event('visibilitychange')))
    await expect.poll(calls).toEqual(['screen', 'screen'])
  })

  test('the pages carry a self-only Content-Security-Policy and are served with their assets by the gateway', async () => {
    const page = await start()
    const res = await gw.app.inject({ url: '/kiosk' })
    expect(res.statusCode).toBe(200)
    const csp = String(res.headers['content-security-policy'])
    expect(csp).toContain("default-src 'none'")
    expect(csp).toContain("script-src 'self'")
    expect(csp).toContain("connect-src 'self'")
    expect(csp).not.toMatch(/https?:|\*|unsafe/)
    expect((await gw.app.inject({ url: '/kiosk/staff' })).headers['content-security-policy']).toBe(csp)
    for (const asset of ['kiosk.js', 'staff.js', 'kiosk.css', 'icon.svg']) expect((await gw.app.inject({ url: `/kiosk/assets/${asset}` })).statusCode, asset).toBe(200)
    expect((await gw.app.inject({ url: '/kiosk/assets/nope.js' })).statusCode).toBe(404)
    // Every request the page made went to the gateway (afterEach: none anywhere else, no CSP violation).
    const origins = await page.evaluate(() => performance.getEntriesByType('resource').map((e) => new URL(e.name).origin))
    expect(origins.length).toBeGreaterThan(1)
    expect(new Set(origins)).toEqual(new Set([kiosk.origin]))
  })
})
