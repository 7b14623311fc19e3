/**
 * The web console (issue 28) as an operator uses it: the gateway started through the bin on a fresh
 * data dir with the demo team (as test/kiosk/asUserRuns.test.ts does), the console link its start
 * banner prints, and then everything in the browser: the overview, a station made, set to check-in
 * for the demo event, its staff PIN (a bad one first), its kiosk URL opened from the QR's text on a
 * second page, a tap that shows in the overview and the tap log, an API key that works and then
 * does not, and sign-out. Screenshots of each tab at 390 and 1280 px go to test/artifacts/console-*.
 */
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { closeKioskContext, decodeScreenQr, HAS_CHROMIUM, kioskContext, type KioskContext, launchChromium, phoneContext } from './browser.js'
import { consoleGateways, DEMO_HOODIE, failedRequests, shots, tab, tapAtStation, unexpectedConsoleErrors } from './consoleKit.js'

const DEMO_EVENT_ID = '1'
const PIN = '824613'

let browser: Browser | undefined
const gateways = consoleGateways()
const { tapgate, consoleLink } = gateways

beforeAll(async () => {
  if (HAS_CHROMIUM) browser = await launchChromium()
})

afterAll(async () => {
  await browser?.close()
  await gateways.cleanup()
})

describe.skipIf(!HAS_CHROMIUM)('the web console, as a user starts tapgate', () => {
  test('sign in with the printed link, set up a station, see its tap, make and revoke an API key, sign out', { timeout: 180_000 }, async () => {
    const { server, dataDir } = await gateways.start()
    const link = await consoleLink(server, dataDir)
    expect(link).toMatch(new RegExp(`^${server.url}/console/sign-in#`))
    const linkToken = link.slice(link.indexOf('#') + 1)

    let desk: KioskContext | undefined
    let phone: KioskContext | undefined
    let scratch: Page | undefined
    let failed: string[] = []
    try {
      desk = await kioskContext(browser!, server.url)
      failed = failedRequests(desk.context)
      for (const asset of ['console.js', 'signin.js', 'console.css']) expect((await fetch(`${server.url}/console/assets/${asset}`)).status, asset).toBe(200)
      const page = await desk.newPage()

      // ---- sign-in: the token leaves the address bar, the console opens on the overview ----
      await page.goto(link)
      await page.waitForURL((url) => url.pathname === '/console')
      await expect.poll(() => page.locator('#team-name').textContent()).toBe('Demo team')
      expect(page.url()).toBe(`${server.url}/console#overview`)
      expect(page.url()).not.toContain(linkToken)
      await expect.poll(() => page.locator('#total-today').textContent()).toMatch(/^\d+$/)
      await shots(page, 'overview')

      // The link works once: a second page with it says so.
      const again = await desk.newPage()
      await again.goto(link)
      await expect.poll(() => again.locator('#signin-problem').textContent()).toContain('This link was already used or has expired. Ask for a new one: tapgate console-link --team')
      expect(again.url()).toBe(`${server.url}/console/sign-in`)
      await shots(again, 'signin-used', 2)
      await again.close()

      // ---- the tabs work by keyboard: arrows move along, the panel follows ----
      await page.focus('#tab-overview')
      await page.keyboard.press('ArrowRight')
      await expect.poll(() => page.locator('#tab-stations').getAttribute('aria-selected')).toBe('true')
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('tab-stations')
      // The keyboard's focus shows: the yellow ring of the kiosk pages.
      expect(await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle)).toBe('solid')
      expect(await page.locator('#panel-stations').isVisible()).toBe(true)

      // ---- a station: created (its token once), check-in for the demo event ----
      await page.fill('#new-station-name', 'Door A')
      await page.press('#new-station-name', 'Enter')
      const stationToken = (await page.locator('#station-secret .secret-value').textContent())!
      expect(stationToken.length).toBeGreaterThan(20)
      await expect.poll(() => page.locator('#station-title').textContent()).toBe('Door A')
      const stationId = Number(await page.locator('#station-list [aria-current="true"]').getAttribute('id').then((id) => id!.replace('station-', '')))
      await expect.poll(() => page.locator(`#station-event option[value="${DEMO_EVENT_ID}"]`).count()).toBe(1)
      await page.selectOption('#station-mode', 'checkin')
      await page.selectOption('#station-event', DEMO_EVENT_ID)
      await page.click('#station-settings-form button[type="submit"]')
      await expect.poll(() => page.locator('#station-meta').textContent()).toContain('Check-in')
      await expect.poll(() => page.locator('#status').textContent()).toContain('is now check-in')

      // ---- the staff PIN: a bad one is refused next to its field, then a good one ----
      await page.fill('#station-pin', '12')
      await page.press('#station-pin', 'Enter')
      await page.locator('#station-pin-error').waitFor({ state: 'visible' })
      expect(await page.locator('#station-pin-error').textContent()).toMatch(/4 to 12 digits/)
      expect(await page.locator('#station-pin').getAttribute('aria-invalid')).toBe('true')
      expect(await page.locator('#station-pin').getAttribute('aria-describedby')).toContain('station-pin-error')
      await page.fill('#station-pin', PIN)
      await page.press('#station-pin', 'Enter')
      await expect.poll(() => page.locator('#status').textContent()).toContain('Staff PIN of "Door A" set')
      expect(await page.locator('#station-pin-error').isVisible()).toBe(false)
      expect(await page.locator('#station-pin').getAttribute('aria-invalid')).toBeNull()

      // ---- the kiosk URL: its QR code says the URL shown beside it, which opens an idle kiosk ----
      await page.click('#kiosk-url-button')
      await page.locator('#kiosk-qr svg').waitFor({ state: 'visible' })
      const kioskUrl = (await page.locator('#kiosk-url').textContent())!
      expect(kioskUrl).toMatch(new RegExp(`^${server.url}/kiosk#token=`))
      expect(await page.locator('#staff-url').textContent()).toMatch(new RegExp(`^${server.url}/kiosk/staff#token=`))
      scratch = await browser!.newPage()
      expect(await decodeScreenQr(scratch, page.locator('#kiosk-qr'))).toBe(kioskUrl)
      await expect.poll(() => page.locator('#kiosk-tokens li[data-revoked="false"]').count()).toBe(1)
      await shots(page, 'stations')

      const kiosk = await desk.newPage()
      await kiosk.goto(kioskUrl)
      await expect.poll(() => kiosk.locator('#result').getAttribute('data-state'), { timeout: 10_000 }).toBe('idle')

      // ---- a tap at the station: the overview's last tap and the tap log show it ----
      await tab(page, 'overview')
      const card = page.locator(`#overview-stations [data-station-id="${stationId}"]`)
      await expect.poll(() => card.locator('[data-field="last-tap"]').textContent()).toBe('None yet')
      await expect.poll(() => card.locator('[data-field="kiosks"]').textContent(), { timeout: 10_000 }).toBe('1')
      const tap = await tapAtStation(server.url, stationToken)
      expect(tap.status, await tap.clone().text()).toBe(200)
      await expect.poll(() => card.locator('[data-field="last-tap"]').textContent(), { timeout: 10_000 }).not.toBe('None yet')
      expect(await card.locator('[data-field="taps-today"]').textContent()).toBe('1')
      await kiosk.close()
      // The same URL again: a replay, refused, and counted as refused.
      expect((await tapAtStation(server.url, stationToken)).status).toBe(409)
      await expect.poll(() => page.locator('#total-refused').textContent(), { timeout: 10_000 }).toBe('1')
      await shots(page, 'overview-tapped')

      await tab(page, 'taps')
      const rows = page.locator('#taps tr')
      await expect.poll(() => rows.count()).toBeGreaterThan(0)
      const row = page.locator('#taps tr', { hasText: DEMO_HOODIE }).first()
      expect(await row.textContent()).toContain('Door A')
      // Filters: the chip's UID typed in lower case, and this station.
      await page.fill('#filter-uid', DEMO_HOODIE.toLowerCase())
      await page.selectOption('#filter-station', String(stationId))
      await page.press('#filter-uid', 'Enter')
      await expect.poll(async () => (await rows.allTextContents()).every((text) => text.includes(DEMO_HOODIE) && text.includes('Door A'))).toBe(true)
      expect(await rows.count()).toBe(2)
      // The replay, in the words a tapper reads, with its code for whoever digs further.
      await page.selectOption('#filter-verdict', 'refused')
      await page.click('#taps-filter button[type="submit"]')
      await expect.poll(() => rows.count()).toBe(1)
      expect(await rows.first().getAttribute('data-verdict')).toBe('refused')
      expect(await rows.first().textContent()).toContain('This link has already been used. Tap the chip again for a fresh one.')
      expect(await rows.first().textContent()).toContain('counter_replay')
      await page.selectOption('#filter-verdict', '')
      await page.fill('#filter-uid', '')
      await page.selectOption('#filter-station', '')
      await page.click('#taps-filter button[type="submit"]')
      await expect.poll(() => rows.count()).toBeGreaterThan(0)
      await shots(page, 'taps')

      // ---- an API key: shown once, works, revoked (two steps), refused ----
      await tab(page, 'keys')
      await page.fill('#key-label', 'Shop backend')
      await page.press('#key-label', 'Enter')
      const apiKey = (await page.locator('#key-secret .secret-value').textContent())!
      expect(apiKey).toMatch(/^tg_/)
      const chipGroups = () => fetch(`${server.url}/chip-groups`, { headers: { 'x-service-api-key': apiKey } }).then((res) => res.status)
      expect(await chipGroups()).toBe(200)
      const keyRow = page.locator('#keys tr', { hasText: 'Shop backend' })
      await keyRow.waitFor()
      await shots(page, 'keys')
      await keyRow.locator('button', { hasText: 'Revoke' }).click()
      // The focus waits on Cancel: a second Enter does not revoke.
      expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Cancel')
      await keyRow.locator('button', { hasText: 'Yes, revoke' }).click()
      await expect.poll(() => page.locator('#keys tr', { hasText: 'Shop backend' }).getAttribute('data-revoked')).toBe('true')
      expect(await chipGroups()).toBe(401)

      // ---- revoke the station (reached from the overview's "Manage"): its reader is refused ----
      await tab(page, 'overview')
      await card.locator('button', { hasText: 'Manage' }).click()
      await expect.poll(() => page.locator('#tab-stations').getAttribute('aria-selected')).toBe('true')
      expect(await page.locator('#station-title').textContent()).toBe('Door A')
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('station-detail')
      await page.click('#station-revoke')
      await page.click('#station-detail button:has-text("Yes, revoke")')
      await page.locator('#station-revoked').waitFor({ state: 'visible' })
      expect((await tapAtStation(server.url, stationToken)).status).toBe(401)

      // ---- sign out: the signed-out screen, and the API refuses this browser ----
      await page.click('#sign-out')
      await page.locator('#signed-out').waitFor({ state: 'visible' })
      expect(await page.locator('#signed-out-title').textContent()).toBe('Signed out — ask for a new console link')
      expect(await page.locator('#signed-out-command').textContent()).toBe('tapgate console-link --team 1')
      await shots(page, 'signed-out')
      expect(await page.evaluate(() => fetch('/console/api/overview', { credentials: 'same-origin' }).then((res) => res.status))).toBe(401)

      // What failed is what was meant to: the spent link, the bad PIN, the overview after sign-out.
      const stationPinPath = `/console/api/stations/${stationId}/staff-pin`
      expect(failed, JSON.stringify(failed)).toEqual(['401 POST /console/api/session', `400 PUT ${stationPinPath}`, '401 GET /console/api/overview'])
      // Chromium logs each of those answers as a console error; nothing else may be there.
      const expected = /Failed to load resource: the server responded with a status of (400|401)/
      expect(unexpectedConsoleErrors(desk, expected)).toEqual([])

      // ---- a session revoked from the CLI (a lost laptop): the next call shows the signed-out screen ----
      phone = await phoneContext(browser!, server.url)
      const phoneFailed: string[] = []
      phone.context.on('response', (response) => {
        if (response.status() >= 400) phoneFailed.push(`${response.status()} ${response.request().method()} ${new URL(response.url()).pathname}`)
      })
      const second = await phone.newPage()
      await second.goto(await tapgate(['console-link', '--team', '1', '--base-url', server.url], dataDir))
      await expect.poll(() => second.locator('#team-name').textContent()).toBe('Demo team')
      expect(JSON.parse(await tapgate(['console-link', '--team', '1', '--revoke-sessions'], dataDir))).toMatchObject({ teamId: 1, revokedSessions: 1 })
      await second.click('#tab-taps')
      await second.locator('#signed-out').waitFor({ state: 'visible' })
      expect(await second.locator('#signed-out-why').textContent()).toContain('no longer takes')
      expect(await second.locator('#main').isVisible()).toBe(false)
      expect(phoneFailed).toEqual(['401 GET /console/api/taps'])
      expect(unexpectedConsoleErrors(phone, expected)).toEqual([])
    } finally {
      await scratch?.close()
      await closeKioskContext(phone)
      await closeKioskContext(desk)
    }
  })
})
