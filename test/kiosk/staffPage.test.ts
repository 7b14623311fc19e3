import path from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest'
import { PIN_LOCK_MS } from '../../src/kiosk/staffAuth.js'
import { createTestGateway, GUESTBOOK, seedTeam, type TestGateway } from '../helpers/gateway.js'
import { ARTIFACTS, audit, closeKioskContext, HAS_CHROMIUM, kioskContext, type KioskContext, launchChromium, shot } from './browser.js'
import { BADGES, EVENT_NAME, type Kiosk, kioskTeam, PIN, setUpKiosk } from './kioskGateway.js'

let browser: Browser
let gw: TestGateway
let ctx: KioskContext
let kiosk: Kiosk

beforeAll(async () => {
  if (HAS_CHROMIUM) browser = await launchChromium()
})
afterAll(async () => browser?.close())

async function start(): Promise<void> {
  gw = await createTestGateway()
  const { teamId } = await seedTeam(gw, kioskTeam({ guestbookAddress: GUESTBOOK }))
  gw.clock.now = Date.now()
  kiosk = await setUpKiosk(gw, { now: () => gw.clock.now, teamId })
  ctx = await kioskContext(browser, kiosk.origin)
}

afterEach(async () => {
  await closeKioskContext(ctx)
  await gw?.close()
})

async function enterPin(page: Page, pin: string) {
  for (const digit of pin) await page.click(`[data-key="${digit}"]`)
  await page.click('[data-key="enter"]')
}

const message = (page: Page) => page.locator('#pin-message').innerText()

async function expectAccessible(page: Page, name: string) {
  const a = await audit(page)
  expect(a.checked, name).toBeGreaterThan(3)
  expect(a.lowContrast, `${name}: contrast`).toEqual([])
  expect(a.smallTargets, `${name}: targets`).toEqual([])
}

/** A phone and a portrait tablet: the sizes door staff carry (issue 19). */
const STAFF_SIZES = [
  { width: 390, height: 844 },
  { width: 768, height: 1024 },
]

/**
 * Nothing scrolls sideways, no element pokes out of the viewport, and the quick actions sit in the
 * bottom fifth of the screen, where a thumb reaches them.
 */
async function expectFits(page: Page, name: string) {
  const fit = await page.evaluate(() => {
    const width = document.documentElement.clientWidth
    const wide = [...document.querySelectorAll<HTMLElement>('#panel *')]
      .filter((el) => el.getClientRects().length > 0 && el.getBoundingClientRect().right > width + 0.5)
      .map((el) => `${el.tagName.toLowerCase()}#${el.id}.${el.className}`)
    const buttons = [...document.querySelectorAll('.thumb-buttons button')].map((b) => b.getBoundingClientRect())
    // A table squeezed into a phone's width: columns a few letters wide.
    const narrow = [...document.querySelectorAll<HTMLElement>('#panel td')]
      .filter((td) => td.getClientRects().length > 0 && td.textContent!.trim() !== '' && td.getBoundingClientRect().width < 120)
      .map((td) => td.textContent!.trim().slice(0, 20))
    return { scrollWidth: document.documentElement.scrollWidth, width, wide, narrow, height: innerHeight, buttonTops: buttons.map((r) => r.top) }
  })
  expect(fit.scrollWidth, `${name}: horizontal scroll`).toBeLessThanOrEqual(fit.width)
  expect(fit.wide, `${name}: wider than the screen`).toEqual([])
  expect(fit.narrow, `${name}: table cells narrower than 120 px`).toEqual([])
  expect(fit.buttonTops.length).toBe(4)
  for (const top of fit.buttonTops) expect(top, `${name}: quick actions at the bottom`).toBeGreaterThan(fit.height * 0.8)
}

describe.skipIf(!HAS_CHROMIUM)('the staff view (/kiosk/staff)', () => {
  test('refuses a wrong PIN (saying how many tries are left) and locks after 5, with the time it opens again', async () => {
    await start()
    const page = await ctx.newPage()
    await page.goto(kiosk.staffUrl)
    await expectAccessible(page, 'staff-pin')
    await shot(page, 'staff-pin')
    for (let left = 4; left >= 1; left--) {
      await enterPin(page, '1111')
      await expect.poll(() => message(page)).toBe(`Wrong PIN. ${left} ${left === 1 ? 'try' : 'tries'} left.`)
      expect(await page.locator('#panel').isHidden()).toBe(true)
    }
    await enterPin(page, '1111')
    const hhmm = new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone: 'Europe/Berlin' }).format(gw.clock.now + PIN_LOCK_MS)
    await expect.poll(() => message(page)).toBe(`Locked after too many wrong PINs. Try again at ${hhmm}.`)
    // Locked: the right PIN is refused too.
    await enterPin(page, PIN)
    await expect.poll(() => page.locator('#pin-message').getAttribute('data-error')).toBe('pin_locked')
    expect(await page.locator('#panel').isHidden()).toBe(true)
    await expectAccessible(page, 'staff-locked')
    await shot(page, 'staff-locked')
  })

  // Many round trips through two pages: 30 s was not enough on a loaded 2-core machine (once, in a full run).
  test('the right PIN opens the live feed with operator detail, counts, health and the actions; a minute idle ends the session', { timeout: 60_000 }, async () => {
    await start()
    const attendee = await ctx.newPage()
    await attendee.goto(kiosk.kioskUrl)
    await expect.poll(() => attendee.locator('#result').getAttribute('data-state')).toBe('idle')
    const page = await ctx.newPage()
    await page.clock.install()
    await page.goto(kiosk.staffUrl)
    await enterPin(page, PIN)
    await page.locator('#panel').waitFor({ state: 'visible' })

    gw.clock.now = Date.now()
    expect((await kiosk.tap(BADGES[0]!, 7)).status).toBe(200)
    const row = page.locator('#feed tr[data-kind="tap"]').first()
    await expect.poll(() => row.innerText()).toContain(BADGES[0]!)
    const text = await row.innerText()
    expect(text).toContain('ACS ACR1252 PICC')
    expect(text).toContain('accepted')
    expect(text).toMatch(/\b7\b/)
    await expect.poll(() => page.locator('#count-event').innerText()).toBe('1')
    await expect.poll(() => page.locator('#health').innerText()).toContain('Kiosks connected')

    // A dead badge, checked in by hand: the attendee screen counts it.
    await page.fill('#uid', BADGES[1]!)
    await page.click('#checkin-form button[type=submit]')
    await expect.poll(() => page.locator('#action-result').innerText()).toBe('Checked in by hand.')
    await expect.poll(() => attendee.locator('#count').getAttribute('data-count')).toBe('2')
    await expect.poll(() => page.locator('#feed').innerText()).toContain('(manual)')

    await page.click('#undo')
    await expect.poll(() => page.locator('#action-result').innerText()).toContain('undone')
    await expect.poll(() => attendee.locator('#count').getAttribute('data-count')).toBe('1')

    await page.click('#test-chip')
    await expect.poll(() => page.locator('#action-result').innerText()).toContain('Test chip until')

    // The mode of the station's event: the PIN picks no other event (issue 24 point 9).
    expect(await page.locator('#mode-event').innerText()).toBe(EVENT_NAME)
    await page.selectOption('#mode', 'closed')
    await page.click('#mode-form button[type=submit]')
    await expect.poll(() => attendee.locator('#result').getAttribute('data-state')).toBe('closed')
    await expect.poll(() => page.locator('#station-mode').innerText()).toContain('closed')
    await expectAccessible(page, 'staff-panel')
    await shot(page, 'staff-panel')
    for (const size of STAFF_SIZES) {
      await page.setViewportSize(size)
      await expectFits(page, `staff-panel-${size.width}`)
      await expectAccessible(page, `staff-panel-${size.width}`)
      await shot(page, `staff-panel-${size.width}x${size.height}`)
      await page.screenshot({ path: path.join(ARTIFACTS, `staff-panel-${size.width}-full.png`), fullPage: true })
    }

    // A minute without a touch: back to the PIN pad.
    await page.clock.fastForward(61_000)
    await page.locator('#login').waitFor({ state: 'visible' })
    expect(await message(page)).toContain('without use')
    expect(await page.locator('#feed tr').count()).toBe(0)
  })
})
