/**
 * "Provision blank chips" in the console's Products tab (issue 28, part 3: notes/console-contract-3.md)
 * as an operator uses it, over the real PC/SC stack:
 *
 *   the browser --> tapgate serve (its in-process station lends its readers to the run) --> pcscd -->
 *     vsmartcard-vpcd slot 0 <--TCP-- a blank virtual NTAG 424 DNA
 *
 * The gateway is started through the bin with its station on (TAPGATE_STATION=true), a chip profile
 * made with `tapgate profile create`, and then in the browser: the readers, a bad URL template refused
 * at its field, a run started, two blank cards placed one after another and listed as provisioned with
 * their UIDs, a second browser's Start refused because a run is on, Stop, the summary, and the
 * profile's chips counted. Needs pcscd, vsmartcard-vpcd and nfc-pcsc, and holds the
 * PC/SC lock (test/helpers/pcscLock.ts) for the whole file; under CI=true a missing part fails.
 * Screenshots at 390 and 1280 px go to test/artifacts/console-provisioning*.
 */
import { randomBytes } from 'node:crypto'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { type PcscdProcess, usePcscd } from '../../station/pcsc/pcscdProcess.js'
import { VirtualNtag424 } from '../../station/virtual-card/ntag424.js'
import { insertCard } from '../../station/virtual-card/vpcd.js'
import { lockPcsc } from '../helpers/pcscLock.js'
import { missingForVirtualCards, requireUnderCi } from '../helpers/pcscStack.js'
import { closeKioskContext, HAS_CHROMIUM, kioskContext, type KioskContext, launchChromium } from './browser.js'
import { consoleGateways, shots, signIn, tab, unexpectedConsoleErrors } from './consoleKit.js'

const SLOT = { port: 35963, reader: 'Virtual PCD 00 00' }
const META_KEY = '5ACE7E50AB65D5D51FD5BF5A16B8205B'
const TEMPLATE = 'https://tap.example.com/tap?e={picc}&c={mac}'

const missing = [...(HAS_CHROMIUM ? [] : ['chromium']), ...(await missingForVirtualCards())]
requireUnderCi(missing, "the console's provisioning panel over PC/SC")

// Fresh UIDs per run: a card someone else leaves in slot 0 cannot pass for ours.
const newUid = () => `04${randomBytes(6).toString('hex').toUpperCase()}`

let browser: Browser | undefined
let pcscd: PcscdProcess | undefined
let releasePcsc: (() => void) | undefined
const gateways = consoleGateways()

beforeAll(async () => {
  if (missing.length > 0) return
  // The other PC/SC files take about a minute each at worst: wait for them.
  releasePcsc = await lockPcsc(150_000)
  pcscd = await usePcscd()
  browser = await launchChromium()
}, 180_000)

afterAll(async () => {
  await browser?.close()
  await gateways.cleanup()
  // After the gateway: pcscd (when this file started it) waits for its clients to leave.
  await pcscd?.stop()
  releasePcsc?.()
})

/**
 * One placement: the card in slot 0 until the page lists it, then taken away, and the panel has seen
 * it leave (pcscd polls every 400 ms: a card put back sooner is no new card).
 */
async function place(page: Page, card: VirtualNtag424, listed: number): Promise<void> {
  const inserted = await insertCard(card, { port: SLOT.port })
  try {
    await expect.poll(() => page.locator('#provision-cards li[data-outcome]').count(), { timeout: 15_000 }).toBe(listed)
  } finally {
    await inserted.remove()
  }
  const cardOn = () =>
    page.evaluate(async (reader) => {
      const body = (await fetch('/console/api/provisioning', { credentials: 'same-origin' }).then((res) => res.json())) as { readers: { name: string; cardPresent: boolean }[] | null }
      return body.readers?.find((r) => r.name === reader)?.cardPresent
    }, SLOT.reader)
  await expect.poll(cardOn, { timeout: 10_000 }).toBe(false)
}

describe.skipIf(missing.length > 0)("the console's provisioning panel on the gateway's own reader", () => {
  test('the readers, a bad template at its field, a run of two blank cards listed live, a second Start refused, Stop and the summary', { timeout: 120_000 }, async () => {
    const t0 = performance.now()
    const { server, dataDir } = await gateways.start({ TAPGATE_STATION: 'true' })
    await gateways.tapgate(['profile', 'create', '--team', '1', '--name', 'tags', '--scheme', 'per_chip', '--meta-key', META_KEY, '--url', TEMPLATE], dataDir)
    const link = await gateways.consoleLink(server, dataDir)
    let desk: KioskContext | undefined
    let late: KioskContext | undefined
    try {
      desk = await kioskContext(browser!, server.url)
      const { page, failed } = await signIn(desk, link)
      await tab(page, 'products')

      // ---- the readers (the station starts in the background), the profiles, the template prefilled ----
      await expect.poll(() => page.locator('#provision-readers').textContent(), { timeout: 15_000 }).toContain(SLOT.reader)
      expect(await page.locator('#provision-readers').getAttribute('data-state')).toBe('ready')
      expect(await page.locator('#provision-profile option').allTextContents()).toEqual(expect.arrayContaining(['tags · 0 chips']))
      await page.selectOption('#provision-profile', 'tags')
      expect(await page.locator('#provision-url').inputValue()).toBe(TEMPLATE)

      // A second browser of the team, its page on the panel before the run starts; its clock held, so it does not learn of the run by itself.
      late = await kioskContext(browser!, server.url)
      await late.context.clock.install()
      const second = await late.newPage()
      await second.goto(await gateways.tapgate(['console-link', '--team', '1', '--base-url', server.url], dataDir))
      await expect.poll(() => second.locator('#team-name').textContent()).toBe('Demo team')
      await tab(second, 'products')
      await expect.poll(() => second.locator('#provision-readers').textContent(), { timeout: 15_000 }).toContain(SLOT.reader)
      await second.selectOption('#provision-profile', 'tags')
      await second.clock.pauseAt(Date.now() + 1000)

      // ---- a template without the chip's fields: refused at its field, the CLI's plan check ----
      await page.fill('#provision-url', 'https://tap.example.com/tap')
      await page.click('#provision-form button[type="submit"]')
      await page.locator('#provision-url-error').waitFor({ state: 'visible' })
      expect(await page.locator('#provision-url').getAttribute('aria-invalid')).toBe('true')
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('provision-url')
      expect(await page.locator('#provision-run').isVisible()).toBe(false)

      // ---- the run: software cards accepted (no NXP signature on a virtual card) ----
      await page.fill('#provision-url', TEMPLATE)
      await page.check('#provision-unverified')
      await page.click('#provision-form button[type="submit"]')
      await expect.poll(() => page.locator('#provision-run').getAttribute('data-state')).toBe('on')
      expect(await page.locator('#provision-place').textContent()).toMatch(new RegExp(`^Place a blank chip on ${SLOT.reader}`))
      expect(await page.locator('#provision-plan').textContent()).toBe(`Profile "tags", tap URL ${TEMPLATE}`)
      expect(await page.locator('#provision-form').isVisible()).toBe(false)
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('provision-run')

      // The other browser's Start: another run is on, said in the panel.
      await second.click('#provision-form button[type="submit"]')
      await second.locator('#provision-problem').waitFor({ state: 'visible' })
      expect(await second.locator('#provision-problem').textContent()).toMatch(/^Another provisioning run is on at this gateway/)

      // ---- two blank cards, one after another, each listed with its UID as it is done ----
      const first = new VirtualNtag424({ uid: newUid(), blank: true })
      const next = new VirtualNtag424({ uid: newUid(), blank: true })
      await place(page, first, 1)
      await place(page, next, 2)
      // Newest first.
      const cards = page.locator('#provision-cards li[data-outcome]')
      expect(await cards.evaluateAll((items) => items.map((li) => [li.getAttribute('data-uid'), li.getAttribute('data-outcome')]))).toEqual([
        [next.uid, 'provisioned'],
        [first.uid, 'provisioned'],
      ])
      expect(await cards.first().locator('.card-message').textContent()).toMatch(/^provisioned \(run \d+, key version 1, first tap verified at counter 1\)$/)
      expect(await page.locator('#provision-counts dd[data-count="provisioned"]').textContent()).toBe('2')
      await shots(page, 'provisioning')

      // ---- Stop: the summary stays, the form is back for another run ----
      await page.click('#provision-stop')
      await expect.poll(() => page.locator('#provision-run').getAttribute('data-state')).toBe('ended')
      expect(await page.locator('#provision-place').textContent()).toMatch(/^Run ended .*: 2 provisioned, 0 resumed, 0 refused\.$/)
      expect(await page.locator('#provision-stop').isVisible()).toBe(false)
      expect(await page.locator('#provision-form').isVisible()).toBe(true)

      // The chips are the team's: the profile counts them, and the chip is off the reader.
      await expect.poll(() => page.locator('#provision-profile option[value="tags"]').textContent()).toBe('tags · 2 chips')
      expect(await page.locator('#provision-readers').textContent()).not.toContain('a chip is on it')
      await shots(page, 'provisioning-ended')

      expect(failed, JSON.stringify(failed)).toEqual(['400 POST /console/api/provisioning'])
      expect(unexpectedConsoleErrors(desk, /Failed to load resource: the server responded with a status of 400/)).toEqual([])
      expect(unexpectedConsoleErrors(late, /Failed to load resource: the server responded with a status of 409/)).toEqual([])
      console.log(`the console's provisioning panel over PC/SC: ${((performance.now() - t0) / 1000).toFixed(1)} s`)
    } finally {
      await closeKioskContext(late)
      await closeKioskContext(desk)
    }
  })
})
