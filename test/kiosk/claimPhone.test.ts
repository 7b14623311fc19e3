import type { Browser, BrowserContextOptions, Page } from 'playwright-core'
import { type Address, getAddress, parseAbi } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest'
import { type ChainGateway, contractOf, createChainGateway, holdRelayer } from '../helpers/chainGateway.js'
import { CAP, type ClaimStation, LAMP, MUG, setUpClaimStation, TEE, TWO_TAP, TWO_TAP_DELAY_S } from '../helpers/claimStation.js'
import { audit, closeKioskContext, HAS_CHROMIUM, type KioskContext, launchChromium, phoneContext, shot } from './browser.js'

// The phone page of a claim link (GET /c/<token>, issue 11 "Finish on your phone"), driven in a
// phone-sized browser against a gateway on the embedded chain: real taps through the station path,
// real links from the kiosk's hand-off, real transfers.

const TIME_ZONE = 'Europe/Berlin'
/** The tee's picture, as its metadata gives it (a data: URL the gateway caches under /media/). */
const TEE_IMAGE = `data:image/svg+xml;base64,${Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 160 120"><rect width="160" height="120" fill="#e0f2fe"/><path d="M55 20l-30 15 10 20 12-5v50h66V50l12 5 10-20-30-15c-5 10-15 14-25 14s-20-4-25-14z" fill="#1e3a8a"/></svg>',
).toString('base64')}`
const ownerOf = parseAbi(['function ownerOf(uint256 tokenId) view returns (address)'])

let browser: Browser
let gw: ChainGateway
let shop: ClaimStation
const contexts: KioskContext[] = []

beforeAll(async () => {
  if (!HAS_CHROMIUM) return
  browser = await launchChromium()
  gw = await createChainGateway()
  shop = await setUpClaimStation(gw, { image: TEE_IMAGE })
}, 60_000)

afterEach(async () => {
  gw.clock.offsetMs = 0
  // Every phone loaded nothing from another origin and broke no CSP rule.
  for (const ctx of contexts.splice(0)) await closeKioskContext(ctx)
})

afterAll(async () => {
  await browser?.close()
  await gw?.close()
})

/** A phone in the venue's time zone; closed (and checked) after each test. */
async function phone(options: BrowserContextOptions = {}): Promise<KioskContext> {
  const ctx = await phoneContext(browser, shop.origin, { timezoneId: TIME_ZONE, ...options })
  contexts.push(ctx)
  return ctx
}

/** A product tap at the kiosk, then "Finish on your phone": the link its QR code carries. */
async function linkFor(uid: string, counter: number): Promise<string> {
  const tap = await shop.tap(uid, counter)
  expect(tap.status, JSON.stringify(tap.body)).toBe(200)
  const handoff = await shop.handoff(await shop.lastClaimId())
  expect(handoff.status, JSON.stringify(handoff.body)).toBe(200)
  // The kiosk's request named its own host; the phone reaches the gateway where the test listens.
  return `${shop.origin}${new URL(handoff.body.url).pathname}`
}

const state = (page: Page) => page.locator('#claim').getAttribute('data-state')
const field = (page: Page) => page.locator('input[name=recipient]')
const send = (page: Page) => page.locator('#send')
const newAddress = (): Address => privateKeyToAccount(generatePrivateKey()).address
const hhmm = (at: number) => new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone: TIME_ZONE }).format(at)

/** A screen the customer sees: screenshot, text contrast ≥ 4.5:1, icons ≥ 3:1, targets ≥ 44 px. */
async function checkScreen(page: Page, name: string): Promise<void> {
  await shot(page, `claim-phone-${name}`)
  const a = await audit(page)
  expect(a.checked, `${name}: text was checked`).toBeGreaterThanOrEqual(2)
  expect(a.lowContrast, `${name}: text contrast`).toEqual([])
  expect(a.lowContrastIcons, `${name}: icon contrast`).toEqual([])
  expect(a.smallTargets, `${name}: target sizes`).toEqual([])
}

describe.skipIf(!HAS_CHROMIUM)('the phone page of a claim link (/c/<token>)', () => {
  test('shows the product, refuses a bad checksum and a name as typed, and a good address ends confirmed with the token on chain', async () => {
    const url = await linkFor(TEE, 1)
    const claimId = await shop.lastClaimId()
    const ctx = await phone()
    const page = await ctx.newPage()
    const sends: string[] = []
    page.on('request', (request) => {
      if (request.url().endsWith('/recipient')) sends.push(request.postData() ?? '')
    })
    await page.goto(url)
    await expect.poll(() => state(page)).toBe('form')
    expect((await gw.store.claims.get(claimId))!.step).toBe('opened')

    // The card from the token's metadata, its picture from the gateway's cache.
    expect(await page.locator('#product-name').innerText()).toBe('Tapgate tee')
    expect(await page.locator('#product-description').innerText()).toBe('Organic cotton tee with an NFC tag in the hem.')
    expect(await page.locator('#product-attributes').innerText()).toMatch(/Size:?\s+M[\s\S]*Colour:?\s+Ink/)
    const img = page.locator('#picture img')
    expect(await img.getAttribute('src')).toMatch(/^\/media\//)
    await expect.poll(() => img.evaluate((el: HTMLImageElement) => el.complete && el.naturalWidth > 0)).toBe(true)
    // One field, no help from the keyboard that would change an address.
    const input = field(page)
    for (const [name, value] of [['autocomplete', 'off'], ['spellcheck', 'false'], ['autocapitalize', 'off'], ['inputmode', 'text']]) {
      expect(await input.getAttribute(name!), name).toBe(value)
    }
    expect(await send(page).isDisabled()).toBe(true)
    // The Paste button: this origin (127.0.0.1) is a secure context, so the clipboard can be read.
    expect(await page.locator('#paste').isVisible()).toBe(true)
    await checkScreen(page, 'form')
    // One column from the smallest phones to the largest: nothing wider than the screen.
    for (const width of [360, 430]) {
      await page.setViewportSize({ width, height: 740 })
      expect(await page.evaluate(() => document.documentElement.scrollWidth), `${width} px`).toBeLessThanOrEqual(width)
    }
    await page.setViewportSize({ width: 390, height: 844 })

    // A mixed-case typo: refused the moment the last character is typed, before anything is sent.
    const good = newAddress()
    // One letter's case swapped: EIP-55 puts every letter's case under the checksum.
    const at = good.slice(2).search(/[a-fA-F]/) + 2
    const typo = `${good.slice(0, at)}${swapCase(good[at]!)}${good.slice(at + 1)}`
    await input.pressSequentially(typo.slice(0, 41))
    expect(await state(page)).toBe('form')
    await input.pressSequentially(typo.slice(41))
    await expect.poll(() => state(page)).toBe('invalid')
    expect(await send(page).isDisabled()).toBe(true)
    expect(await input.getAttribute('aria-invalid')).toBe('true')
    expect(await page.locator('#field-alert[role=alert]').innerText()).toContain('capital letters do not match')
    // Enter does not send it either (the form's submit is guarded too).
    await input.press('Enter')
    await page.waitForTimeout(200)
    expect(sends).toEqual([])
    await checkScreen(page, 'invalid-checksum')

    // No ENS on this gateway: a name is refused with the way out.
    await input.fill('alice.eth')
    await expect.poll(() => state(page)).toBe('invalid')
    expect(await page.locator('#field-alert').innerText()).toContain('Names need internet here — use the 0x address')
    expect(await send(page).isDisabled()).toBe(true)
    await checkScreen(page, 'invalid-name')
    expect(sends).toEqual([])

    // An address the gateway refuses (nothing can receive at zero): its words, and the field stays.
    await input.fill(`0x${'0'.repeat(40)}`)
    await expect.poll(() => send(page).isDisabled()).toBe(false)
    await send(page).click()
    await expect.poll(() => state(page)).toBe('failed')
    expect(await page.locator('#field-alert').innerText()).toMatch(/zero address/i)
    expect(await input.isVisible()).toBe(true)
    // The same address again would be refused again: Send waits for the field to change.
    expect(await send(page).isDisabled()).toBe(true)
    expect((await gw.store.claims.get(claimId))!.step).toBe('opened')
    await checkScreen(page, 'failed-refused')

    // The good address, typed as the wallet shows it: the transfer, followed to confirmed. The relayer
    // is held so the page is seen while the transaction is on its way.
    await input.fill(good)
    await expect.poll(() => state(page)).toBe('form')
    expect(await page.locator('#resolved').innerText()).toContain(good)
    const relayer = await holdRelayer(gw)
    await send(page).click()
    await expect.poll(() => state(page)).toBe('sending')
    await expect.poll(() => page.locator('#outcome [role=status]').innerText()).toContain('Sending your token')
    expect(await page.locator('#outcome [role=status]').innerText()).toContain(good)
    await expect.poll(async () => (await gw.store.claims.get(claimId))!.step).toBe('claimed')
    await expect.poll(() => page.locator('#outcome [role=status] [aria-current=step]').innerText()).toBe('Accepted')
    await checkScreen(page, 'sending')
    await relayer.release()
    await expect.poll(() => state(page), { timeout: 20_000 }).toBe('confirmed')
    expect(await page.locator('#outcome [role=status]').innerText()).toMatch(/In your wallet ✓[\s\S]*Transaction 0x[0-9a-f]{4}…[0-9a-f]{4}/)
    await checkScreen(page, 'confirmed')
    const token = (await gw.store.tokens.get((await gw.store.tokens.findByChip(TEE))!.id))!
    const owner = await gw.publicClient.readContract({ address: await contractOf(gw, shop.teamId), abi: ownerOf, functionName: 'ownerOf', args: [BigInt(token.tokenId)] })
    expect(getAddress(owner)).toBe(good)

    // The phone that finished sees its result again after a reload (its session).
    await page.reload()
    await expect.poll(() => state(page)).toBe('confirmed')
  })

  test('the link opened again on another phone says used; a made-up link says not valid', async () => {
    const url = await linkFor(CAP, 1)
    const first = await (await phone()).newPage()
    await first.goto(url)
    await expect.poll(() => state(first)).toBe('form')

    const second = await (await phone()).newPage()
    await second.goto(url)
    await expect.poll(() => state(second)).toBe('used')
    expect(await second.locator('#outcome [role=alert]').innerText()).toContain('This link was already used')
    expect(await second.locator('input[name=recipient]').isVisible()).toBe(false)
    await checkScreen(second, 'used')

    await second.goto(`${shop.origin}/c/${'A'.repeat(22)}`)
    await expect.poll(() => second.locator('#outcome [role=alert]').innerText()).toContain('This link is not valid')
    expect(await state(second)).toBe('used')
    await checkScreen(second, 'not-valid')
  })

  test("past the tap's lifetime the page says expired by its own clock, and the gateway's 410 says so too", async () => {
    // The mug's picture is somewhere the gateway cannot fetch it from: the card shows the placeholder.
    const mug = (await gw.store.tokens.findByChip(MUG))!
    await gw.store.tokens.setMetadata(mug.id, JSON.stringify({ ...JSON.parse(mug.metadata!), image: 'http://127.0.0.1:9/mug.png' }), Date.now())
    const url = await linkFor(MUG, 1)
    const page = await (await phone()).newPage()
    // As on a plain-http LAN address: no clipboard API, so no Paste button (the field's own paste stays).
    await page.addInitScript(() => Object.defineProperty(Navigator.prototype, 'clipboard', { get: () => undefined }))
    const pictures: number[] = []
    page.on('response', (response) => {
      if (new URL(response.url()).pathname.startsWith('/media/')) pictures.push(response.status())
    })
    await page.clock.install()
    await page.goto(url)
    await expect.poll(() => state(page)).toBe('form')
    const expiresAt = (await gw.store.claims.get(await shop.lastClaimId()))!.expiresAt
    expect(await page.locator('#paste').isVisible()).toBe(false)
    await expect.poll(() => page.locator('#picture').getAttribute('data-picture')).toBe('none')
    expect(await page.locator('#picture').innerText()).toBe('No picture')
    expect(pictures).toEqual([404])
    await checkScreen(page, 'form-no-picture')
    expect(await page.locator('#expires').innerText()).toBe(`This link works until ${hhmm(expiresAt)}`)
    await field(page).fill(newAddress())
    // A minute before the end: the time left is counted down; at the end the form goes.
    await page.clock.fastForward(expiresAt - Date.now() - 60_000)
    await expect.poll(() => page.locator('#expires').innerText()).toMatch(/^This link stops working in (?:1:00|0:[0-5]\d)$/)
    await page.clock.fastForward(61_000)
    await expect.poll(() => state(page)).toBe('expired')
    expect(await page.locator('#outcome [role=alert]').innerText()).toContain('This link has expired')
    expect(await field(page).isVisible()).toBe(false)
    await checkScreen(page, 'expired')

    // A link first opened after its tap expired: the gateway refuses it (410), the page says expired.
    const late = await linkFor(LAMP, 1)
    gw.clock.offsetMs = (await gw.store.claims.get(await shop.lastClaimId()))!.expiresAt - Date.now() + 1000
    const other = await (await phone()).newPage()
    await other.goto(late)
    await expect.poll(() => state(other)).toBe('expired')
    await checkScreen(other, 'expired-gateway')
  })

  test('a link whose product was claimed meanwhile (a later tap, at the kiosk) says so plainly when it sends, and again when reloaded', async () => {
    const url = await linkFor(LAMP, 10)
    const page = await (await phone()).newPage()
    await page.goto(url)
    await expect.poll(() => state(page)).toBe('form')
    // Meanwhile the product is tapped again and claimed at the kiosk.
    expect((await shop.tap(LAMP, 11)).status).toBe(200)
    const claimed = await gw.app.inject({ method: 'POST', url: `/kiosk/claims/${await shop.lastClaimId()}/recipient`, headers: { 'x-kiosk-token': shop.kioskToken }, payload: { recipient: newAddress() } })
    expect(claimed.statusCode, claimed.body).toBe(200)
    await field(page).fill(newAddress())
    await send(page).click()
    await expect.poll(() => state(page)).toBe('moved')
    expect(await page.locator('#outcome [role=alert]').innerText()).toContain('This product was claimed meanwhile')
    expect(await field(page).isVisible()).toBe(false)
    await checkScreen(page, 'moved')
    // Reloaded, the claim itself says it (step moved), with the product's card.
    await page.reload()
    await expect.poll(() => state(page)).toBe('moved')
    expect(await page.locator('#outcome [role=alert]').innerText()).toContain('This product was claimed meanwhile')
    expect(await page.locator('#product-name').innerText()).toBe('Tapgate lamp')
  })

  test('a transfer that fails on chain says so, and sends the customer to staff', async () => {
    const url = await linkFor(CAP, 2)
    const claimId = await shop.lastClaimId()
    const page = await (await phone()).newPage()
    await page.goto(url)
    await expect.poll(() => state(page)).toBe('form')
    const address = newAddress()
    await field(page).fill(address)
    const relayer = await holdRelayer(gw)
    await send(page).click()
    // The gateway accepted it (it checked the address could receive) and the page follows it.
    await expect.poll(async () => (await gw.store.claims.get(claimId))!.step).toBe('claimed')
    await expect.poll(() => page.locator('#outcome [role=status] [aria-current=step]').innerText()).toBe('Accepted')
    expect(await state(page)).toBe('sending')
    // Accepted for an ordinary wallet; before the transaction goes out, code appears at the address
    // (a contract that takes no tokens), so the transfer reverts on chain.
    await gw.testClient.setCode({ address, bytecode: '0x00' })
    await relayer.release()
    await expect.poll(() => state(page), { timeout: 20_000 }).toBe('failed')
    expect(await page.locator('#outcome [role=alert]').innerText()).toMatch(/did not go through[\s\S]*staff/)
    expect(await field(page).isVisible()).toBe(false)
    await checkScreen(page, 'failed-chain')
  })

  test('a name is looked up and shown (name → address) before Send works, and the token goes to that address', async () => {
    // Mainnet ENS cannot be reached here: the gateway's resolver is given the answer a mainnet RPC would give.
    const customer = newAddress()
    const chains = gw.chains as { ens?: (name: string) => Promise<string | null> }
    chains.ens = async (name) => (name === 'shop-customer.eth' ? customer : null)
    try {
      const url = await linkFor(CAP, 3)
      const page = await (await phone()).newPage()
      await page.goto(url)
      await expect.poll(() => state(page)).toBe('form')
      expect(await page.locator('#recipient-label').innerText()).toBe('Your wallet address or name')
      await field(page).fill('nobody-here.eth')
      await expect.poll(() => page.locator('#field-alert').innerText()).toContain('No wallet found for nobody-here.eth')
      expect(await send(page).isDisabled()).toBe(true)
      await field(page).fill('shop-customer.eth')
      await expect.poll(() => page.locator('#resolved').innerText()).toContain('shop-customer.eth →')
      expect(await page.locator('#resolved').innerText()).toContain(customer)
      expect(await send(page).isDisabled()).toBe(false)
      await checkScreen(page, 'ens-resolved')
      await send(page).click()
      await expect.poll(() => state(page), { timeout: 20_000 }).toBe('confirmed')
      const owner = await gw.publicClient.readContract({ address: await contractOf(gw, shop.teamId), abi: ownerOf, functionName: 'ownerOf', args: [2n] })
      expect(owner).toBe(customer)
    } finally {
      chains.ens = undefined
    }
  })

  test('a 2-tap token: the address is registered, with when to tap again and a live countdown', async () => {
    const url = await linkFor(TWO_TAP, 1)
    const claimId = await shop.lastClaimId()
    const ctx = await phone({ permissions: ['clipboard-read', 'clipboard-write'] })
    const page = await ctx.newPage()
    await page.clock.install()
    await page.goto(url)
    await expect.poll(() => state(page)).toBe('form')
    // Pasted as a wallet's receive QR gives it (EIP-681 with a chain id), with the Paste button.
    const address = newAddress()
    await page.evaluate((text) => navigator.clipboard.writeText(text), `ethereum:${address.toLowerCase()}@31337`)
    await page.locator('#paste').click()
    await expect.poll(() => field(page).inputValue()).toBe(`ethereum:${address.toLowerCase()}@31337`)
    expect(await page.locator('#resolved').innerText()).toContain(address)
    await send(page).click()
    await expect.poll(() => state(page)).toBe('registered')
    const claim = (await gw.store.claims.get(claimId))!
    expect(claim.recipient).toBe(address)
    const allowedAt = (await gw.store.claimRegistrations.get(claim.registrationId!))!.allowedAt
    expect(await page.locator('#outcome [role=status]').innerText()).toContain(`Tap the tag on the kiosk again after ${hhmm(allowedAt)}`)
    await expect.poll(() => page.locator('#outcome-timer').innerText()).toMatch(/^You can tap again in [01]:\d\d$/)
    await checkScreen(page, 'registered')
    await page.clock.fastForward(TWO_TAP_DELAY_S * 1000)
    await expect.poll(() => page.locator('#outcome-timer').innerText()).toBe('You can tap the tag on the kiosk now')
  })
})

function swapCase(c: string): string {
  return c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase()
}
