/**
 * The console's Products tab (issue 28, part 3 C: notes/console-contract-3.md) as an operator uses it:
 * the gateway started through the bin on a fresh data dir with the demo team, its printed console link,
 * and in the browser the demo's hoodie with its chip, its owner once it is minted to a wallet (through
 * the API, as the README's quick start does), its metadata edited (a bad image URL refused at its
 * field, nothing stored, then saved), chips registered from a CSV (a bad row refused at its line,
 * nothing imported, then fixed), a chip's UID opening its taps, and the provisioning panel of a
 * gateway without readers. A second team's console then sees nothing of the first team's.
 * Screenshots at 390 and 1280 px go to test/artifacts/console-products*.
 */
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { Product } from '../../src/kiosk/web/client/consoleApi.js'
import { initialState, tabFromHash, update } from '../../src/kiosk/web/client/consoleState.js'
import { ownerWords, shortHex } from '../../src/kiosk/web/client/consoleWords.js'
import { closeKioskContext, HAS_CHROMIUM, kioskContext, type KioskContext, launchChromium } from './browser.js'
import { consoleGateways, DEMO_HOODIE, shots, signIn, tab, unexpectedConsoleErrors } from './consoleKit.js'

// The README's quick start mints the hoodie to this address (anvil's second account).
const WALLET = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8'
const NEW_CHIPS = ['04C0FFEE000A01', '04C0FFEE000A02']

const product = (id: number, name: string, metadata: Record<string, unknown> = { name }): Product => ({
  id,
  name,
  description: '',
  collection: '',
  imageUrl: null,
  contract: { address: '0x5FbDB2315678afecb367f032d93F642f64180aa3', chainId: 31337 },
  tokenId: String(id),
  chips: [],
  owner: { address: null, state: 'not_minted' },
  metadata,
})

describe('the Products tab state', () => {
  test('the tab sits between Events and API keys, and a reload keeps it', () => {
    expect(tabFromHash('#products')).toBe('products')
  })

  test('"Saved" belongs to the product saved: typing or choosing another takes it away; a list without the chosen product clears the choice', () => {
    let state = update(initialState('products'), { type: 'products', products: [product(1, 'Hoodie'), product(2, 'Cap')] })
    state = update(state, { type: 'selectProduct', productId: 1 })
    state = update(state, { type: 'productSaved', product: product(1, 'Hoodie v2') })
    expect([state.productSaved, state.products!.map((p) => p.name)]).toEqual([1, ['Hoodie v2', 'Cap']])
    const edited = update(state, { type: 'productEdited' })
    expect(edited.productSaved).toBeNull()
    // Nothing to take away: the same state, so nothing is drawn again.
    expect(update(edited, { type: 'productEdited' })).toBe(edited)
    expect(update(state, { type: 'selectProduct', productId: 2 }).productSaved).toBeNull()
    state = update(state, { type: 'products', products: [product(2, 'Cap')] })
    expect([state.selectedProductId, state.productSaved]).toEqual([null, null])
  })

  test('a run started or stopped here keeps the readers last read', () => {
    const run = { id: 'r', profile: 'p', urlTemplate: 'https://t/?e={picc}&c={mac}', startedAt: '2026-11-28T10:00:00.000Z', endedAt: null, cards: [], summary: { provisioned: 0, resumed: 0, refused: 0 } }
    let state = update(initialState(), { type: 'provisioning', provisioning: { success: true, readers: [{ name: 'ACR1252', cardPresent: false }], unavailable: null, run: null } })
    state = update(state, { type: 'provisioningRun', run })
    expect(state.provisioning).toEqual({ success: true, readers: [{ name: 'ACR1252', cardPresent: false }], unavailable: null, run })
  })

  test("an owner is a short address, not minted yet, or unknown when the chain did not answer", () => {
    expect(shortHex(WALLET)).toBe('0x7099…79C8')
    expect([ownerWords({ address: WALLET, state: 'owned' }), ownerWords({ address: null, state: 'not_minted' }), ownerWords({ address: null, state: 'unknown' })]).toEqual([
      '0x7099…79C8',
      'Not minted yet',
      'Owner unknown (chain unreachable)',
    ])
  })
})

let browser: Browser | undefined
const gateways = consoleGateways()

beforeAll(async () => {
  if (HAS_CHROMIUM) browser = await launchChromium()
})

afterAll(async () => {
  await browser?.close()
  await gateways.cleanup()
})

type Products = { products: Product[] }
/** The team's products as the console's own API has them (the page's session cookie). */
const productsOf = (page: Page) => page.evaluate(() => fetch('/console/api/products', { credentials: 'same-origin' }).then((res) => res.json() as Promise<Products>))

const uploadChips = async (page: Page, csv: string) => {
  await page.setInputFiles('#chip-file', { name: 'chips.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) })
  await page.click('#chip-upload-form button[type="submit"]')
}

describe.skipIf(!HAS_CHROMIUM)('the Products tab of the web console', () => {
  test('the hoodie, its owner, its metadata (a bad image URL first), chips from a CSV (a bad row first), a chip\'s taps; a second team sees none of it', { timeout: 180_000 }, async () => {
    const { server, dataDir } = await gateways.start()
    const link = await gateways.consoleLink(server, dataDir)
    let desk: KioskContext | undefined
    let other: KioskContext | undefined
    try {
      desk = await kioskContext(browser!, server.url)
      const { page, failed } = await signIn(desk, link)

      // ---- the tab sits between Events and API keys; the arrow keys reach it ----
      expect(await page.locator('[role="tab"]').allTextContents()).toEqual(['Overview', 'Stations', 'Events', 'Products', 'API keys', 'Taps'])
      await page.focus('#tab-events')
      await page.keyboard.press('ArrowRight')
      await expect.poll(() => page.locator('#tab-products').getAttribute('aria-selected')).toBe('true')
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('tab-products')
      expect(page.url()).toBe(`${server.url}/console#products`)
      await page.keyboard.press('ArrowRight')
      await expect.poll(() => page.locator('#tab-keys').getAttribute('aria-selected')).toBe('true')
      await page.keyboard.press('ArrowLeft')
      await expect.poll(() => page.locator('#tab-products').getAttribute('aria-selected')).toBe('true')

      // ---- the demo's hoodie with its chip; not minted yet ----
      const hoodie = page.locator('#product-list .product-card', { hasText: 'Tapgate Hoodie #1' })
      await hoodie.waitFor()
      const hoodieId = Number(await hoodie.getAttribute('data-product-id'))
      expect(await hoodie.locator('.product-collection').textContent()).toBe(`Tapgate Merch · ID ${hoodieId}`)
      expect(await hoodie.locator('[data-field="token"]').textContent()).toMatch(/^#1 · 0x[0-9a-fA-F]{4}…[0-9a-fA-F]{4}$/)
      expect(await hoodie.locator('.chip-list button').allTextContents()).toEqual([DEMO_HOODIE])
      expect(await hoodie.locator('[data-field="owner"]').textContent()).toBe('Not minted yet')
      // The demo's image is on example.com: offline, a plain box where it would be.
      await expect.poll(() => hoodie.locator('.product-picture').getAttribute('data-picture')).toBe('none')

      // ---- minted to a wallet as the README's quick start does (an operator-entered tap, its ref's code, the transfer) ----
      const { refId } = JSON.parse(await gateways.tapgate(['tap', '--uid', DEMO_HOODIE, '--json'], dataDir)) as { refId: string }
      const ref = (await (await fetch(`${server.url}/refs/${refId}`)).json()) as { linkedToken: { otp: string } }
      const transfer = await fetch(`${server.url}/phygitals/transfer/pullable`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-code': ref.linkedToken.otp },
        body: JSON.stringify({ recipient: WALLET }),
      })
      expect(transfer.status, await transfer.clone().text()).toBe(200)
      await expect.poll(async () => (await productsOf(page)).products.find((p) => p.id === hoodieId)?.owner, { timeout: 30_000 }).toEqual({ address: WALLET, state: 'owned' })
      // The tab shown again reads the list again.
      await tab(page, 'events')
      await tab(page, 'products')
      await expect.poll(() => hoodie.locator('[data-field="owner"]').textContent()).toBe('0x7099…79C8')
      // The tap is the chip's last.
      expect(await hoodie.locator(`li[data-uid="${DEMO_HOODIE}"] .chip-about`).textContent()).toMatch(/^Factory keys \(demo\) · last tap \d\d:\d\d:\d\d$/)

      // ---- this gateway has no readers of its own (TAPGATE_STATION=false): the panel says so, no form ----
      expect(await page.locator('#provision-readers').textContent()).toBe('This gateway has no PC/SC readers to provision on: the in-process station is off: station.enabled is false (TAPGATE_STATION).')
      expect(await page.locator('#provision-form').isVisible()).toBe(false)

      // ---- the metadata: a bad image URL is refused at its field, and nothing is stored ----
      await hoodie.locator('button', { hasText: 'Edit details' }).click()
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('product-detail')
      expect(await page.locator('#product-title').textContent()).toBe('Tapgate Hoodie #1')
      expect(await page.locator('#product-image').inputValue()).toBe('https://example.com/tapgate/hoodie-1.png')
      await page.fill('#product-name', 'Tapgate Hoodie, second run')
      await page.fill('#product-image', 'not a url')
      await page.click('#product-form button[type="submit"]')
      await page.locator('#product-image-error').waitFor({ state: 'visible' })
      expect(await page.locator('#product-image-error').textContent()).toBe('Must be a URL (or empty)')
      expect(await page.locator('#product-image').getAttribute('aria-invalid')).toBe('true')
      expect(await page.locator('#product-image').getAttribute('aria-describedby')).toContain('product-image-error')
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('product-image')
      expect(await page.locator('#product-saved').textContent()).toBe('')
      expect((await productsOf(page)).products.find((p) => p.id === hoodieId)?.name).toBe('Tapgate Hoodie #1')

      // ---- a chip list with a bad row: refused at its line, nothing imported ----
      await uploadChips(page, ['uid,group,product', `${NEW_CHIPS[0]},Merch drop,${hoodieId}`, `04C0FFEE,Merch drop,${hoodieId}`, ''].join('\n'))
      const result = page.locator('#chip-import')
      await expect.poll(() => result.getAttribute('data-outcome')).toBe('refused')
      expect(await result.locator('.import-refused').textContent()).toBe('Nothing was imported: no chip was added or changed.')
      const badRow = result.locator('tr[data-line="3"]')
      expect((await badRow.locator('td').allTextContents()).slice(0, 2)).toEqual(['3', 'uid'])
      expect(await result.locator('tbody tr').count()).toBe(1)
      expect(await page.locator('#chip-file').getAttribute('aria-invalid')).toBe('true')
      expect(await page.locator('#chip-file-error').textContent()).toMatch(/nothing was imported/i)
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('chip-file')
      expect((await productsOf(page)).products.find((p) => p.id === hoodieId)?.chips.map((c) => c.uid)).toEqual([DEMO_HOODIE])
      await shots(page, 'products-refused')

      // ---- the metadata fixed: saved, and the list shows the new name ----
      await page.fill('#product-image', 'https://example.com/tapgate/hoodie-2.png')
      await page.click('#product-form button[type="submit"]')
      await expect.poll(() => page.locator('#product-saved').textContent()).toBe('✓ Saved')
      expect(await page.locator('#product-image').getAttribute('aria-invalid')).toBeNull()
      expect(await page.locator('#product-image-error').isVisible()).toBe(false)
      const renamed = page.locator(`#product-list [data-product-id="${hoodieId}"]`)
      expect(await renamed.locator('.product-name').textContent()).toBe('Tapgate Hoodie, second run')
      expect(await page.locator('#product-title').textContent()).toBe('Tapgate Hoodie, second run')
      // The fields the form does not show are kept: the demo's two attributes.
      const saved = (await productsOf(page)).products.find((p) => p.id === hoodieId)!
      expect(saved).toMatchObject({ name: 'Tapgate Hoodie, second run', metadata: { image: 'https://example.com/tapgate/hoodie-2.png', attributes: [{ trait_type: 'Size' }, { trait_type: 'Edition' }] } })
      // Typing again: "Saved" no longer says what is on screen.
      await page.fill('#product-collection', 'Tapgate Merch 2027')
      await expect.poll(() => page.locator('#product-saved').textContent()).toBe('')
      await page.fill('#product-collection', 'Tapgate Merch')

      // ---- the chip list fixed: the chips are in, under the hoodie ----
      await uploadChips(page, ['uid,group,product', `${NEW_CHIPS[0]},Merch drop,${hoodieId}`, `${NEW_CHIPS[1]},Merch drop,${hoodieId}`, ''].join('\n'))
      await expect.poll(() => result.getAttribute('data-outcome')).toBe('imported')
      expect(await result.locator('dd[data-count="Rows read"]').textContent()).toBe('2')
      expect(await result.locator('dd[data-count="Chips registered or updated"]').textContent()).toBe('2')
      expect(await page.locator('#chip-file').getAttribute('aria-invalid')).toBeNull()
      expect(await page.locator('#chip-file-error').isVisible()).toBe(false)
      await expect.poll(() => renamed.locator('.chip-list button').allTextContents()).toEqual([DEMO_HOODIE, ...NEW_CHIPS])
      await shots(page, 'products')

      // ---- a chip's UID opens the Taps tab filtered by it: its history ----
      await renamed.locator(`button[data-uid="${DEMO_HOODIE}"]`).click()
      await expect.poll(() => page.locator('#tab-taps').getAttribute('aria-selected')).toBe('true')
      expect(await page.locator('#filter-uid').inputValue()).toBe(DEMO_HOODIE)
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('taps-results')
      const rows = page.locator('#taps tr')
      await expect.poll(() => rows.count()).toBeGreaterThan(0)
      expect((await rows.allTextContents()).every((text) => text.includes(DEMO_HOODIE))).toBe(true)

      // What failed is what was meant to: the bad metadata, the bad chip list.
      expect(failed, JSON.stringify(failed)).toEqual([`400 PATCH /console/api/products/${hoodieId}/metadata`, '400 POST /console/api/chips/import'])
      expect(unexpectedConsoleErrors(desk, /Failed to load resource: the server responded with a status of 400/)).toEqual([])

      // ---- a second team's console: nothing of team 1's, by id or in a list ----
      const { stationId } = JSON.parse(await gateways.tapgate(['station', 'create', '--team', '1', '--name', 'Door A'], dataDir)) as { stationId: number }
      const { teamId } = JSON.parse(await gateways.tapgate(['team', 'create', '--name', 'Second team'], dataDir)) as { teamId: number }
      other = await kioskContext(browser!, server.url)
      const otherLink = await gateways.tapgate(['console-link', '--team', String(teamId), '--base-url', server.url], dataDir)
      const { page: second, failed: otherFailed } = await signIn(other, otherLink, 'Second team')
      const probes = await second.evaluate(
        async ({ stationId, hoodieId }) => {
          const ask = async (method: string, path: string, body?: unknown) => {
            const res = await fetch(path, { method, credentials: 'same-origin', headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
            return [`${method} ${path}`, res.status, (await res.json()) as Record<string, unknown>] as const
          }
          return Promise.all([
            ask('GET', `/console/api/stations/${stationId}/kiosk-tokens`),
            ask('PATCH', `/console/api/stations/${stationId}`, { name: 'Taken' }),
            ask('GET', '/console/api/events/1/guests'),
            ask('GET', '/console/api/events/1/numbers'),
            ask('GET', `/console/api/products/${hoodieId}`),
            ask('PATCH', `/console/api/products/${hoodieId}/metadata`, { metadata: { name: 'Taken', collection: '', description: '', image: '', attributes: [], media_gallery: [] } }),
            ask('GET', '/console/api/products'),
            ask('GET', '/console/api/stations'),
            ask('GET', '/console/api/api-keys'),
            ask('GET', '/console/api/chip-profiles'),
            ask('GET', '/console/api/provisioning'),
          ])
        },
        { stationId, hoodieId },
      )
      const [tokens, rename, guests, numbers, one, patch, list, stations, keys, profiles, provisioning] = probes
      for (const [what, status] of [tokens, rename, guests, numbers, one, patch]) expect([what, status]).toEqual([what, 404])
      for (const [what, status] of [list, stations, keys, profiles, provisioning]) expect([what, status]).toEqual([what, 200])
      expect([list[2].products, stations[2].stations, profiles[2].profiles, provisioning[2].run]).toEqual([[], [], [], null])
      // Its keys are its own (team create made one): none of team 1's.
      const teamOneKeys = await page.evaluate(() => fetch('/console/api/api-keys', { credentials: 'same-origin' }).then((res) => res.json() as Promise<{ keys: { prefix: string }[] }>))
      const prefixes = (answer: { keys: { prefix: string }[] }) => answer.keys.map((k) => k.prefix)
      expect(teamOneKeys.keys.length).toBeGreaterThan(0)
      expect(prefixes(keys[2] as { keys: { prefix: string }[] }).filter((prefix) => prefixes(teamOneKeys).includes(prefix))).toEqual([])
      // Nothing changed for team 1.
      expect((await productsOf(page)).products.find((p) => p.id === hoodieId)?.name).toBe('Tapgate Hoodie, second run')

      // Its Products tab shows none of team 1's products.
      await tab(second, 'products')
      await second.locator('#product-list-empty').waitFor({ state: 'visible' })
      expect(await second.locator('#product-list li').count()).toBe(0)
      expect(await second.locator('body').textContent()).not.toContain('Tapgate Hoodie')
      expect(otherFailed.sort()).toEqual(
        [
          `404 GET /console/api/stations/${stationId}/kiosk-tokens`,
          `404 PATCH /console/api/stations/${stationId}`,
          '404 GET /console/api/events/1/guests',
          '404 GET /console/api/events/1/numbers',
          `404 GET /console/api/products/${hoodieId}`,
          `404 PATCH /console/api/products/${hoodieId}/metadata`,
        ].sort(),
      )
      expect(unexpectedConsoleErrors(other, /Failed to load resource: the server responded with a status of 404/)).toEqual([])
    } finally {
      await closeKioskContext(other)
      await closeKioskContext(desk)
    }
  })
})
