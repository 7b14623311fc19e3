import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { importData, parseImportFile } from '../../src/importer/importData.js'
import { loadGatewaySecret } from '../../src/keys/gatewaySecret.js'
import { type ChainGateway, holdRelayer, createChainGateway, USER } from '../helpers/chainGateway.js'
import { audit, closeKioskContext, HAS_CHROMIUM, kioskContext, type KioskContext, launchChromium, shot } from './browser.js'
import { BADGES, type Kiosk, kioskTeam, setUpKiosk, STATION_NAME } from './kioskGateway.js'

let browser: Browser
let gw: ChainGateway
let ctx: KioskContext
let kiosk: Kiosk
let page: Page

// One gateway with the embedded chain for the file (anvil and the relayer are the slow parts).
beforeAll(async () => {
  if (!HAS_CHROMIUM) return
  browser = await launchChromium()
  gw = await createChainGateway()
  const secret = loadGatewaySecret({ dataDir: gw.dataDir })
  // No guestbook address: the relayer deploys it, so the gateway can mint on it.
  const summary = await importData(gw.store, parseImportFile({ teams: [kioskTeam()] }), { config: gw.config, now: Date.now(), secret })
  await gw.settle()
  const teamId = summary.teams[0]!.id
  kiosk = await setUpKiosk(gw, { now: () => Date.now(), teamId })
  // The attendee's wallet is known: a check-in mints the event's guestbook token to it.
  await gw.store.chips.setWallet(BADGES[0]!, USER)
  ctx = await kioskContext(browser, kiosk.origin)
  page = await ctx.newPage()
  await page.goto(kiosk.kioskUrl)
  await page.waitForSelector('#result[data-state="idle"]')
}, 60_000)

afterAll(async () => {
  await closeKioskContext(ctx)
  await browser?.close()
  await gw?.close()
})

const state = () => page.locator('#result').getAttribute('data-state')
const chainTxs = () => (gw.store.db.prepare('SELECT count(*) AS n FROM chain_txs').get() as { n: number }).n

describe.skipIf(!HAS_CHROMIUM)('the check-in page on the embedded chain', () => {
  test('a tap through the station path shows accepted within a second, the count goes up, and the strip follows the mint to confirmed', async () => {
    const before = chainTxs()
    // The relayer is held while the tap lands: the page shows the check-in before any block.
    const relayer = await holdRelayer(gw)
    const started = Date.now()
    const res = await kiosk.tap(BADGES[0]!, 1)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    await page.waitForSelector('#result[data-state="accepted"]', { timeout: 1000 })
    expect(Date.now() - started).toBeLessThan(1000)
    expect(await page.locator('#count').getAttribute('data-count')).toBe('1')
    expect(await page.locator('#result [role=status]').innerText()).toContain('checked in')
    expect(chainTxs()).toBe(before + 1)
    const item = page.locator('#strip li').first()
    expect(await item.getAttribute('data-tx-status')).toBe('queued')
    expect(await item.locator('.chain').innerText()).toBe('Minting…')
    await shot(page, 'kiosk-accepted-minting')
    await relayer.release()
    await expect.poll(() => item.getAttribute('data-tx-status'), { timeout: 20_000 }).toBe('confirmed')
    expect(await item.locator('.chain').innerText()).toMatch(/In the wallet ✓ 0x[0-9a-f]{4}…[0-9a-f]{4}/)
    // The feed carried the steps in between (sent with its hash) before the receipt.
    const steps = (await gw.store.stationEvents.after(kiosk.stationId, 0)).filter((e) => e.kind === 'tx').map((e) => e.data.status)
    expect(steps).toEqual(expect.arrayContaining(['sent', 'confirmed']))
    await shot(page, 'kiosk-confirmed')
    const a = await audit(page)
    expect(a.lowContrast).toEqual([])
  })

  test('the same chip again shows already, with the time and station, and queues no transaction', async () => {
    const before = chainTxs()
    const res = await kiosk.tap(BADGES[0]!, 2)
    expect(res.status).toBe(200)
    await expect.poll(state).toBe('already')
    const at = (await gw.store.checkIns.findActive(kiosk.eventId, BADGES[0]!))!.createdAt
    const hhmm = new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone: 'Europe/Berlin' }).format(at)
    expect(await page.locator('#result .word').innerText()).toBe(`Already checked in at ${hhmm} at ${STATION_NAME}`)
    expect(await page.locator('#count').getAttribute('data-count')).toBe('1')
    await gw.settle()
    expect(chainTxs()).toBe(before)
    await shot(page, 'kiosk-already-chain')
  })
})
