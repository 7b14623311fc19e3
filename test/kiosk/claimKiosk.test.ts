/*
 * The kiosk's side of a claim station (issue 11), in the browser against a real gateway on the
 * embedded chain: the product card, the phone hand-off's QR code (decoded from what the screen
 * shows), a USB scanner's typed `ethereum:` URI through to the token on chain, the on-screen
 * keyboard, the 2-tap wait, "nothing to claim", and the customer-flow timeout on the page's clock.
 * The phone page and the end-to-end journeys (kiosk + phone + check-in collection) are tested
 * elsewhere.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { type Address, parseAbi } from 'viem'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { phygitalTokenAbi } from '../../contracts/artifacts/PhygitalToken.js'
import { importData, parseImportFile } from '../../src/importer/importData.js'
import { loadGatewaySecret } from '../../src/keys/gatewaySecret.js'
import { createKioskToken } from '../../src/kiosk/kioskTokens.js'
import { setStationMode } from '../../src/kiosk/stationModes.js'
import { createStation } from '../../src/stations/stations.js'
import { transferWithApiKey } from '../../src/transfers/transferToken.js'
import { type ChainGateway, holdRelayer, contractOf, createChainGateway, OTHER, USER } from '../helpers/chainGateway.js'
import { BLANK, CAP, type ClaimStation, LAMP, MUG, setUpClaimStation, SHOP_PIN, TEE, TWO_TAP, TWO_TAP_DELAY_S } from '../helpers/claimStation.js'
import { seedSunChip, seedSunProfile, sunTapUrl } from '../helpers/gateway.js'
import { type Origin, serve, startOrigin } from '../media/origin.js'
import { audit, closeKioskContext, decodeScreenQr, HAS_CHROMIUM, kioskContext, type KioskContext, launchChromium, pageText, phoneContext, shot } from './browser.js'
import { BADGES, EVENT_NAME, FILE, kioskTeam, META } from './kioskGateway.js'

const WIFI = 'Shop Guest'
const erc1155 = parseAbi(['function balanceOf(address account, uint256 id) view returns (uint256)'])

let browser: Browser
let gw: ChainGateway
let shop: ClaimStation
let origin: Origin
let ctx: KioskContext
/** A page with no kiosk rules (about:blank, no CSP), for the test's own canvas work. */
let scratch: BrowserContext
let canvasPage: Page
let page: Page

/** A product picture drawn by the browser (a tee on a coloured ground), served by the loopback origin. */
async function drawPicture(): Promise<Buffer> {
  const dataUrl = await canvasPage.evaluate(() => {
    const canvas = document.createElement('canvas')
    canvas.width = canvas.height = 240
    const g = canvas.getContext('2d')!
    g.fillStyle = '#e0f2fe'
    g.fillRect(0, 0, 240, 240)
    g.fillStyle = '#1e3a8a'
    g.beginPath()
    for (const [x, y] of [[70, 40], [100, 30], [120, 45], [140, 30], [170, 40], [210, 80], [180, 105], [170, 95], [170, 210], [70, 210], [70, 95], [60, 105], [30, 80]] as const) g.lineTo(x, y)
    g.closePath()
    g.fill()
    return canvas.toDataURL('image/png')
  })
  return Buffer.from(dataUrl.split(',')[1]!, 'base64')
}

beforeAll(async () => {
  if (!HAS_CHROMIUM) return
  browser = await launchChromium()
  scratch = await browser.newContext()
  canvasPage = await scratch.newPage()
  origin = await startOrigin()
  origin.route('/tee.png', serve('image/png', await drawPicture()))
  gw = await createChainGateway({ config: { kiosk: { wifiName: WIFI }, media: { allowHosts: [origin.host] } } })
  shop = await setUpClaimStation(gw, { image: origin.url('/tee.png') })
  ctx = await kioskContext(browser, shop.origin)
  page = await ctx.newPage()
  await page.goto(shop.kioskUrl)
  await page.waitForSelector('#result[data-state="idle"]')
}, 90_000)

afterAll(async () => {
  await closeKioskContext(ctx)
  await scratch?.close()
  await browser?.close()
  await gw?.close()
  await origin?.stop()
})

const state = (p: Page) => p.locator('#result').getAttribute('data-state')
const word = (p: Page) => p.locator('#result .word').innerText()
const ownerOf = async (tokenId: bigint) =>
  gw.publicClient.readContract({ address: await contractOf(gw, shop.teamId), abi: phygitalTokenAbi, functionName: 'ownerOf', args: [tokenId] }) as Promise<Address>
const post = async (url: string, payload: object) => {
  const res = await gw.app.inject({ method: 'POST', url, payload })
  return { status: res.statusCode, body: JSON.parse(res.body) as Record<string, unknown> }
}

/** One screen of the claim flow: screenshot, icon and word, WCAG contrast and targets, nothing personal. */
async function checkScreen(p: Page, name: string): Promise<void> {
  await shot(p, `claim-kiosk-${name}`)
  expect(await p.locator('#result svg.icon').getAttribute('data-icon'), `${name}: an icon`).toBeTruthy()
  expect((await word(p)).length, `${name}: a word`).toBeGreaterThan(3)
  const a = await audit(p)
  expect(a.checked, name).toBeGreaterThan(5)
  expect(a.lowContrast, `${name}: text contrast`).toEqual([])
  expect(a.lowContrastIcons, `${name}: icon contrast`).toEqual([])
  expect(a.smallTargets, `${name}: target sizes`).toEqual([])
  // No chip and no wallet address in the page's text (a typed address lives in the field's value only).
  const text = await pageText(p)
  for (const uid of [TEE, CAP, MUG, LAMP, TWO_TAP, BLANK]) expect(text.toUpperCase()).not.toContain(uid)
  expect(text).not.toMatch(/0x[0-9a-f]{40}(?![0-9a-f])/i)
}

describe.skipIf(!HAS_CHROMIUM)('the kiosk at a claim station', () => {
  test('idle: "Tap the tag on your product", and the header counts claims', async () => {
    expect(await word(page)).toBe('Tap the tag on your product')
    expect(await page.locator('#count-label').innerText()).toBe('claimed')
    expect(await page.locator('#count').getAttribute('data-count')).toBe('0')
    expect(await page.locator('#event-name').innerText()).toBe('Shop counter')
    await checkScreen(page, 'idle')
  })

  test('a product tap shows the card from its metadata: the picture through the gateway, name, description, attributes; the phone first', async () => {
    expect((await shop.tap(TEE, 1)).status).toBe(200)
    await expect.poll(() => state(page)).toBe('product')
    const card = page.locator('#product')
    await expect.poll(() => card.locator('#product-name').innerText()).toBe('Tapgate tee')
    expect(await card.locator('#product-description').innerText()).toBe('Organic cotton tee with an NFC tag in the hem.')
    const attributes = await card.locator('#product-attributes li').evaluateAll((lis) => lis.map((li) => [li.querySelector('.trait')!.textContent, li.querySelector('b')!.textContent]))
    expect(attributes).toEqual([['Size', 'M'], ['Colour', 'Ink']])
    // The picture comes from the gateway's cache (same origin), drawn, not the placeholder.
    const img = card.locator('#product-img')
    await expect.poll(() => img.isVisible()).toBe(true)
    expect(await img.getAttribute('src')).toMatch(/^\/media\/[A-Za-z0-9_-]+$/)
    expect(await img.evaluate((el: HTMLImageElement) => el.naturalWidth)).toBe(240)
    expect(await card.locator('#product-placeholder').isVisible()).toBe(false)
    expect(origin.hits.get('/tee.png')).toBeGreaterThanOrEqual(1)
    // The ways, in order: the phone (the default), then the field for a scanner or typing.
    const order = await page.locator('#claim button, #claim input').evaluateAll((els) => els.filter((el) => (el as HTMLElement).offsetParent !== null).map((el) => el.id))
    expect(order).toEqual(['phone', 'recipient', 'send', 'type'])
    expect(await page.locator('#phone').innerText()).toBe('Finish on your phone')
    await checkScreen(page, 'product')
  })

  test('"Finish on your phone": the QR code on the screen decodes to the claim link; the Wi-Fi name under it; the phone opens it and the kiosk moves on', async () => {
    await page.locator('#phone').click()
    await expect.poll(() => state(page)).toBe('handoff')
    const qr = page.locator('#qr')
    const url = await qr.getAttribute('data-claim-url')
    expect(url).toMatch(new RegExp(`^${shop.origin}/c/[A-Za-z0-9_-]{22}$`))
    expect(await decodeScreenQr(canvasPage, qr)).toBe(url)
    expect(await page.locator('#handoff').innerText()).toContain('Scan with your phone’s camera')
    expect(await page.locator('#wifi').innerText()).toBe(`Wi-Fi: ${WIFI}`)
    // The address field is still there.
    expect(await page.locator('input[name=recipient]').isVisible()).toBe(true)
    expect(await page.locator('#address-label').innerText()).toContain('scan or type your address here')
    await checkScreen(page, 'handoff')

    // A phone (its own browser context, phone-sized) opens the link: "Opened on a phone" for a
    // moment on the kiosk, then the next customer.
    const phone = await phoneContext(browser, shop.origin)
    try {
      const phonePage = await phone.newPage()
      const phoneState = () => phonePage.locator('#claim').getAttribute('data-state')
      await phonePage.goto(url!)
      await expect.poll(phoneState).toBe('form')
      await expect.poll(() => state(page)).toBe('opened')
      expect(await word(page)).toBe('Opened on a phone — finish there')
      await checkScreen(page, 'opened')
      await expect.poll(() => state(page), { timeout: 6000 }).toBe('idle')

      // On the phone: a checksum typo is refused as typed; the right address completes the claim
      // while the kiosk is idle: "confirmed" on the phone, a brief "In your wallet" on the kiosk,
      // and the strip item of that claim follows its transaction to confirmed.
      const field = phonePage.locator('input[name=recipient]')
      await field.fill(OTHER.slice(0, 2) + OTHER.slice(2).replace(/[a-f]/, (c) => c.toUpperCase()).replace(/[A-F]/, (c) => c.toLowerCase()))
      await expect.poll(phoneState).toBe('invalid')
      expect(await phonePage.locator('#send').isDisabled()).toBe(true)
      await field.fill(OTHER)
      await expect.poll(phoneState).toBe('form')
      await phonePage.locator('#send').click()
      await expect.poll(phoneState, { timeout: 20_000 }).toBe('confirmed')
      await expect.poll(() => state(page), { timeout: 20_000 }).toBe('confirmed')
      await shot(phonePage, 'claim-flow-phone-confirmed')
      await shot(page, 'claim-flow-kiosk-confirmed')
      const item = page.locator('#strip li').first()
      await expect.poll(() => item.getAttribute('data-tx-status')).toBe('confirmed')
      expect(await item.locator('.chain').innerText()).toMatch(/In the wallet ✓ 0x[0-9a-f]{4}…[0-9a-f]{4}/)

      // The link opened again, on another phone: already used.
      const other = await phoneContext(browser, shop.origin)
      const again = await other.newPage()
      await again.goto(url!)
      await expect.poll(() => again.locator('#claim').getAttribute('data-state')).toBe('used')
      await shot(again, 'claim-flow-phone-used')
      await closeKioskContext(other)
    } finally {
      await closeKioskContext(phone)
    }
    expect(await ownerOf(1n)).toBe(OTHER)
    await expect.poll(() => state(page), { timeout: 8000 }).toBe('idle')
    expect(await page.locator('#count').getAttribute('data-count')).toBe('1')
  })

  test('a USB scanner types `ethereum:0x…` and Enter, with the field not focused: claimed, then confirmed; the token is on chain', async () => {
    expect((await shop.tap(CAP, 1)).status).toBe(200)
    await expect.poll(() => state(page)).toBe('product')
    await expect.poll(() => page.locator('#product-name').innerText()).toBe('Tapgate cap')
    // No picture in its metadata: the placeholder.
    expect(await page.locator('#product-placeholder').innerText()).toBe('No picture')
    expect(await page.locator('#product-img').isVisible()).toBe(false)
    await shot(page, 'claim-kiosk-product-no-picture')
    expect(await page.evaluate(() => document.activeElement?.id ?? null)).not.toBe('recipient')

    // The relayer is held so the "on its way" screen can be seen before the block.
    const relayer = await holdRelayer(gw)
    await page.keyboard.type(`ethereum:${USER}@31337`)
    expect(await page.locator('input[name=recipient]').inputValue()).toBe(`ethereum:${USER}@31337`)
    expect(await page.locator('#address-hint').getAttribute('data-verdict')).toBe('ok')
    await page.keyboard.press('Enter')
    await expect.poll(() => state(page)).toBe('claimed')
    expect(await word(page)).toBe('On its way to your wallet')
    expect(await page.locator('#result .steps').getAttribute('data-tx-status')).toBe('queued')
    // The address left the screen with the claim panel.
    expect(await page.locator('#claim').isHidden()).toBe(true)
    expect(await page.locator('input[name=recipient]').inputValue()).toBe('')
    await checkScreen(page, 'claimed')
    await relayer.release()
    await expect.poll(() => state(page), { timeout: 20_000 }).toBe('confirmed')
    expect(await word(page)).toBe('In your wallet ✓')
    expect(await page.locator('#result .detail').innerText()).toBe('Tapgate cap: it is yours now')
    await checkScreen(page, 'confirmed')
    expect(await ownerOf(2n)).toBe(USER)
    const item = page.locator('#strip li').first()
    expect(await item.getAttribute('data-tx-status')).toBe('confirmed')
    await expect.poll(() => page.locator('#count').getAttribute('data-count')).toBe('2')
    await expect.poll(() => state(page), { timeout: 8000 }).toBe('idle')
  })

  test('the on-screen keyboard: validated as typed (a scanned checksum typo cannot be sent); a refused address is said under the field, which keeps its text', async () => {
    expect((await shop.tap(MUG, 1)).status).toBe(200)
    await expect.poll(() => page.locator('#product-name').innerText()).toBe('Tapgate mug')
    await page.locator('#type').click()
    const keyboard = page.locator('#keyboard')
    expect(await keyboard.isVisible()).toBe(true)
    const field = page.locator('input[name=recipient]')
    const hint = page.locator('#address-hint')
    await keyboard.locator('[data-key="0x"]').click()
    for (const key of 'ab12') await keyboard.locator(`[data-key="${key}"]`).click()
    expect(await field.inputValue()).toBe('0xab12')
    expect(await hint.getAttribute('data-verdict')).toBe('partial')
    expect(await page.locator('#send').isDisabled()).toBe(true)
    await keyboard.locator('[data-key=back]').click()
    expect(await field.inputValue()).toBe('0xab1')
    await checkScreen(page, 'keyboard')
    await keyboard.locator('[data-key=clear]').click()
    expect(await field.inputValue()).toBe('')

    // A scanned address whose capitals are wrong (EIP-55): refused as typed, Enter sends nothing.
    const typo = USER.slice(0, 2) + USER.slice(2, 10).toLowerCase() + USER.slice(10, 20).toUpperCase() + USER.slice(20)
    await page.keyboard.type(typo)
    expect(await hint.getAttribute('data-verdict')).toBe('checksum')
    expect(await field.getAttribute('aria-invalid')).toBe('true')
    await page.keyboard.press('Enter')
    await expect.poll(() => page.locator('#address-error[role=alert]').innerText()).toContain('EIP-55')
    expect(await state(page)).toBe('product')

    // The zero address is an address, but nothing can receive there: the gateway says so.
    await keyboard.locator('[data-key=clear]').click()
    await keyboard.locator('[data-key="0x"]').click()
    for (let i = 0; i < 40; i++) await keyboard.locator('[data-key="0"]').click()
    expect(await field.inputValue()).toBe(`0x${'0'.repeat(40)}`)
    expect(await hint.getAttribute('data-verdict')).toBe('ok')
    await keyboard.locator('[data-key=send]').click()
    const error = page.locator('#address-error[role=alert]')
    await expect.poll(() => error.innerText()).toBe('This address cannot receive the token: use another wallet')
    expect(await field.inputValue()).toBe(`0x${'0'.repeat(40)}`)
    expect(await state(page)).toBe('product')
    await checkScreen(page, 'address-error')
  })

  test('a 2-tap token: "Registered. Tap again after HH:MM" with a live countdown; a tap too early shows the wait again; a tap in time claims', async () => {
    expect((await shop.tap(TWO_TAP, 1)).status).toBe(200)
    await expect.poll(() => page.locator('#product-name').innerText()).toBe('Signed print')
    await page.keyboard.type(USER)
    await page.keyboard.press('Enter')
    await expect.poll(() => state(page)).toBe('registered')
    const claimId = await shop.lastClaimId()
    const registered = (await gw.store.stationEvents.after(shop.stationId, 0)).flatMap((e) => (e.kind === 'claim' && e.data.claim.id === claimId ? [e.data.claim] : []))
    const allowedAt = registered.at(-1)?.allowedAt
    expect(allowedAt).toBeTruthy()
    const hhmm = new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone: 'Europe/Berlin' }).format(Date.parse(allowedAt!))
    expect(await word(page)).toBe(`Registered. Tap again after ${hhmm}`)
    const countdown = page.locator('#countdown')
    const first = await countdown.innerText()
    expect(first).toMatch(/^Tap again in [01]:\d\d$/)
    await expect.poll(() => countdown.innerText(), { timeout: 3000 }).not.toBe(first)
    await checkScreen(page, 'registered')

    expect((await shop.tap(TWO_TAP, 2)).status).toBe(200)
    await expect.poll(() => page.locator('#result .detail').innerText()).toContain('Too early')
    expect(await state(page)).toBe('registered')
    expect(await word(page)).toBe(`Registered. Tap again after ${hhmm}`)
    await checkScreen(page, 'early')

    gw.clock.offsetMs += (TWO_TAP_DELAY_S + 1) * 1000
    try {
      expect((await shop.tap(TWO_TAP, 3)).status).toBe(200)
      await expect.poll(() => state(page)).toMatch(/^(claimed|confirmed)$/)
      await expect.poll(() => state(page), { timeout: 20_000 }).toBe('confirmed')
      expect(await ownerOf(5n)).toBe(USER)
    } finally {
      gw.clock.offsetMs -= (TWO_TAP_DELAY_S + 1) * 1000
    }
  })

  test('a product claimed meanwhile (the shop moved the token after this tap): the address gets "This product was claimed meanwhile", not an error under the field', async () => {
    expect((await shop.tap(MUG, 2)).status).toBe(200)
    await expect.poll(() => page.locator('#product-name').innerText()).toBe('Tapgate mug')
    const mug = (await gw.store.tokens.findByChip(MUG))!
    await transferWithApiKey({ store: gw.store, chains: gw.chains, config: gw.config, now: () => Date.now() }, { key: mug, teamId: shop.teamId, recipient: OTHER })
    await page.keyboard.type(USER)
    await page.keyboard.press('Enter')
    await expect.poll(() => state(page)).toBe('moved')
    expect(await word(page)).toBe('This product was claimed meanwhile')
    expect(await page.locator('#claim').isHidden()).toBe(true)
    await checkScreen(page, 'moved')
    await gw.settle()
    expect(await ownerOf(3n)).toBe(OTHER)
    await expect.poll(() => state(page), { timeout: 12_000 }).toBe('idle')
  })

  test('a chip linked to no token: "Nothing to claim with this tag — ask staff"', async () => {
    expect((await shop.tap(BLANK, 1)).status).toBe(200)
    await expect.poll(() => state(page)).toBe('unknown')
    await expect.poll(() => page.locator('#result [role=alert]').innerText()).toContain('Nothing to claim with this tag')
    expect(await page.locator('#result [role=alert]').innerText()).toContain('Please ask staff')
    expect(await page.locator('#strip li .what').first().innerText()).toBe('Nothing to claim')
    await checkScreen(page, 'nothing')
  })

  test('a customer who walks away: "Still there?" after the idle time with a countdown, a touch keeps the flow, no touch resets to idle (page clock)', async () => {
    // A second screen on the station with a fake clock; the first one is left alone.
    const p = await ctx.newPage()
    await p.clock.install()
    await p.goto(shop.kioskUrl)
    await expect.poll(() => state(p)).toBe('idle')
    const idleMs = gw.config.kiosk.customerIdleSeconds * 1000
    const warnMs = gw.config.kiosk.customerWarnSeconds * 1000
    expect((await shop.tap(LAMP, 1)).status).toBe(200)
    await expect.poll(() => state(p)).toBe('product')
    const still = p.locator('#still-there')
    await p.clock.fastForward(idleMs - 1000)
    expect(await still.isVisible()).toBe(false)
    await p.clock.fastForward(2000)
    await expect.poll(() => still.isVisible()).toBe(true)
    expect(await still.innerText()).toContain('Still there? Touch the screen to keep going')
    expect(Number(await p.locator('#still-there-count').innerText())).toBeGreaterThanOrEqual(warnMs / 1000 - 1)
    await shot(p, 'claim-kiosk-still-there')
    const a = await audit(p)
    expect(a.lowContrast).toEqual([])
    expect(a.smallTargets).toEqual([])
    // The count runs down as the clock moves.
    await p.clock.fastForward(5000)
    expect(Number(await p.locator('#still-there-count').innerText())).toBeLessThanOrEqual(warnMs / 1000 - 4)

    // A touch: the flow goes on, the idle time starts again.
    await p.mouse.click(640, 400)
    await expect.poll(() => still.isVisible()).toBe(false)
    expect(await state(p)).toBe('product')
    await p.clock.fastForward(idleMs - 1000)
    expect(await still.isVisible()).toBe(false)
    expect(await state(p)).toBe('product')

    // Nobody: back to idle when the warning runs out. The claim itself stays open (a phone that has
    // its link may still finish it).
    await p.clock.fastForward(2000)
    await expect.poll(() => still.isVisible()).toBe(true)
    await p.clock.fastForward(warnMs)
    await expect.poll(() => state(p)).toBe('idle')
    expect(await still.isVisible()).toBe(false)
    expect((await gw.store.claims.get(await shop.lastClaimId()))!.step).toBe('open')
    await p.close()
  })

  test('check in now, collect later: a check-in without a wallet shows the welcome, then the same hand-off with the event as the card', async () => {
    // A door of another team on the same gateway, in check-in mode (its guestbook deployed by the relayer).
    const now = Date.now()
    const secret = loadGatewaySecret({ dataDir: gw.dataDir })
    const { teams } = await importData(gw.store, parseImportFile({ teams: [kioskTeam()] }), { config: gw.config, now, secret })
    await gw.settle()
    const teamId = teams[0]!.id
    const at = { app: gw.app, store: gw.store, clock: { now } }
    await seedSunProfile(at, { teamId, name: 'badges', metaKey: META, fileKey: FILE })
    await seedSunChip(at, { teamId, uid: BADGES[0]!, profileName: 'badges' })
    const door = await createStation(gw.store, { teamId, name: 'Door A', now })
    await setStationMode(gw.store, { stationId: door.stationId, mode: 'checkin', eventId: (await gw.store.guestbook.listEvents(teamId))[0]!.id, now })
    const { token } = await createKioskToken(gw.store, { stationId: door.stationId, now })
    const p = await ctx.newPage()
    await p.goto(`${shop.origin}/kiosk#token=${token}`)
    await expect.poll(() => state(p)).toBe('idle')
    expect(await p.locator('#count-label').innerText()).toBe('checked in')

    const url = sunTapUrl({ metaKey: META, fileKey: FILE, uid: BADGES[0]!, counter: 1, base: `${shop.origin}/tap` })
    const res = await gw.app.inject({ method: 'POST', url: '/station/taps', headers: { 'x-station-token': door.token }, payload: { rfUid: BADGES[0], url, readerName: 'ACS ACR1252 PICC' } })
    expect(res.statusCode, res.body).toBe(200)
    await expect.poll(() => state(p)).toBe('accepted')
    expect(await p.locator('#result .detail').innerText()).toBe(`${EVENT_NAME}: next, collect your token`)
    await shot(p, 'claim-kiosk-checkin-welcome')
    await expect.poll(() => state(p), { timeout: 6000 }).toBe('product')
    expect(await word(p)).toBe('Collect your token')
    expect(await p.locator('#product-name').innerText()).toBe(EVENT_NAME)
    // The event's picture is not reachable (no internet here): the placeholder, not a broken image.
    await expect.poll(() => p.locator('#product-placeholder').isVisible(), { timeout: 10_000 }).toBe(true)
    expect(await p.locator('#product-img').isVisible()).toBe(false)
    const item = p.locator('#strip li').first()
    expect(await item.getAttribute('data-tx-status')).toBe('waiting')
    expect(await item.locator('.chain').innerText()).toBe('Token: collect later')
    await checkScreen(p, 'checkin-collect')
    await p.locator('#phone').click()
    await expect.poll(() => state(p)).toBe('handoff')
    const qr = p.locator('#qr')
    const link = await qr.getAttribute('data-claim-url')
    expect(await decodeScreenQr(canvasPage, qr)).toBe(link)

    // The attendee collects on their phone: the mint goes to the address they give, and the strip
    // item of their check-in follows it to confirmed.
    const phone = await phoneContext(browser, shop.origin)
    try {
      const phonePage = await phone.newPage()
      await phonePage.goto(link!)
      await expect.poll(() => phonePage.locator('#claim').getAttribute('data-state')).toBe('form')
      expect(await phonePage.locator('#product-name').innerText()).toBe(EVENT_NAME)
      await phonePage.locator('input[name=recipient]').fill(OTHER)
      await phonePage.locator('#send').click()
      await expect.poll(() => phonePage.locator('#claim').getAttribute('data-state'), { timeout: 20_000 }).toBe('confirmed')
      await shot(phonePage, 'claim-phone-checkin-collected')
      await expect.poll(() => item.getAttribute('data-tx-status'), { timeout: 20_000 }).toBe('confirmed')
      const event = (await gw.store.guestbook.listEvents(teamId))[0]!
      const guestbook = (await gw.store.guestbook.getContract(event.contractId))!.address as Address
      const balance = await gw.publicClient.readContract({ address: guestbook, abi: erc1155, functionName: 'balanceOf', args: [OTHER, BigInt(event.tokenId)] })
      expect(balance).toBe(1n)
    } finally {
      await closeKioskContext(phone)
    }
    await p.close()
  })

  test('the staff view of the shop: claim mode, claims per product with their links, claim rows in the feed with the full address', async () => {
    const staff = await ctx.newPage()
    await staff.goto(shop.staffUrl)
    for (const key of [...SHOP_PIN, 'enter']) await staff.click(`[data-key="${key}"]`)
    await expect.poll(() => staff.locator('#panel').isVisible()).toBe(true)
    // The panel opens at once and the station's state follows it (one GET): the mode comes with the state.
    await expect.poll(() => staff.locator('#mode').inputValue()).toBe('claim')
    const row = staff.locator('#claims tr', { hasText: 'Tapgate tee' })
    await expect.poll(() => row.count()).toBe(1)
    // Product, taps, claimed, registered, links shown, opened, used, links expired, expired.
    expect(await row.locator('td').allInnerTexts()).toEqual(['Tapgate tee', '1', '1', '0', '1', '1', '1', '0', '0'])
    expect(await staff.locator('#count-claimed').innerText()).not.toBe('0')
    // Staff see the address a claim went to (the public screen never does).
    expect(await staff.locator('#feed').innerText()).toContain(OTHER)
    await shot(staff, 'claim-staff')
    const a = await audit(staff)
    expect(a.lowContrast).toEqual([])
    await staff.close()
  })
})
