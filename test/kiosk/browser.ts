import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { type Browser, type BrowserContext, type BrowserContextOptions, chromium, type Locator, type Page } from 'playwright-core'
import { decodeQR } from 'qr/decode.js'
import { expect } from 'vitest'

/** Debian's chromium (.ci/run installs it with apt-get). */
export const CHROMIUM = '/usr/bin/chromium'
export const ARTIFACTS = fileURLToPath(new URL('../artifacts', import.meta.url))

/**
 * Whether the browser tests can run. Without chromium they are skipped with one warning on a
 * developer's machine, and fail under CI=true (where .ci/run must have installed it).
 */
export const HAS_CHROMIUM = fs.existsSync(CHROMIUM)
if (!HAS_CHROMIUM) {
  if (process.env.CI === 'true') throw new Error(`${CHROMIUM} is missing: the kiosk browser tests need Debian's chromium (apt-get install chromium)`)
  console.warn(`[kiosk] ${CHROMIUM} not found: skipping the browser tests (apt-get install chromium to run them)`)
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--autoplay-policy=no-user-gesture-required'] })
}

export type KioskContext = {
  context: BrowserContext
  /** Requests to any origin but the gateway's: routed to fail, and listed here. */
  offOrigin: string[]
  /** Content-Security-Policy violations the pages reported (a blocked request counts here). */
  cspViolations: string[]
  /**
   * Console errors of the pages, for a failing test's message. A resource that failed to load has
   * its path after the text ("… status of 404 (Not Found) /media/…"): Chromium's text names none.
   */
  consoleErrors: string[]
  newPage(): Promise<Page>
}

/**
 * A browser context for the kiosk pages at `origin`: every request to another origin is aborted
 * and counted, CSP violations and console errors are collected, and the clock shows the kiosk's
 * local time in `timezoneId`.
 */
export async function kioskContext(browser: Browser, origin: string, opts: { timezoneId?: string; contextOptions?: BrowserContextOptions } = {}): Promise<KioskContext> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, timezoneId: opts.timezoneId ?? 'Europe/Berlin', locale: 'en-GB', ...opts.contextOptions })
  const offOrigin: string[] = []
  const cspViolations: string[] = []
  const consoleErrors: string[] = []
  await context.route(
    (url) => url.origin !== origin,
    (route) => {
      offOrigin.push(route.request().url())
      return route.abort('blockedbyclient')
    },
  )
  const watch = (page: Page) => {
    page.on('console', (message) => {
      if (message.type() !== 'error') return
      const resource = message.text().startsWith('Failed to load resource') ? message.location().url : ''
      consoleErrors.push(resource ? `${message.text()} ${new URL(resource).pathname}` : message.text())
      if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text())
    })
    page.on('pageerror', (error) => consoleErrors.push(String(error)))
  }
  return {
    context,
    offOrigin,
    cspViolations,
    consoleErrors,
    async newPage() {
      const page = await context.newPage()
      watch(page)
      return page
    },
  }
}

/** Saves a screenshot of the page to test/artifacts/<name>.png. */
export async function shot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(ARTIFACTS, { recursive: true })
  const file = path.join(ARTIFACTS, `${name}.png`)
  await page.screenshot({ path: file })
  return file
}

export type Audit = {
  /** Text whose contrast with what is behind it is under 4.5:1. */
  lowContrast: { text: string; ratio: number }[]
  /** Icons (non-text) under 3:1 (WCAG 1.4.11). */
  lowContrastIcons: { icon: string; ratio: number }[]
  /** Buttons, links and inputs smaller than 44×44 CSS px. */
  smallTargets: { target: string; width: number; height: number }[]
  /** Visible text elements checked (a check over nothing proves nothing). */
  checked: number
}

/**
 * WCAG checks computed in the page, on what is rendered now: text contrast (relative luminance of
 * the computed colour against the composited background of its ancestors) and target sizes.
 */
export function audit(page: Page): Promise<Audit> {
  return page.evaluate(() => {
    type Rgba = { r: number; g: number; b: number; a: number }
    const parse = (css: string): Rgba => {
      const parts = (css.match(/\(([^)]*)\)/)?.[1] ?? '0,0,0,0').split(/[\s,/]+/).filter(Boolean).map(Number)
      return { r: parts[0] ?? 0, g: parts[1] ?? 0, b: parts[2] ?? 0, a: parts[3] ?? 1 }
    }
    const over = (top: Rgba, base: Rgba): Rgba => ({
      r: top.r * top.a + base.r * (1 - top.a),
      g: top.g * top.a + base.g * (1 - top.a),
      b: top.b * top.a + base.b * (1 - top.a),
      a: 1,
    })
    const luminance = ({ r, g, b }: Rgba) => {
      const f = (v: number) => {
        const c = v / 255
        return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
      }
      return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b)
    }
    const ratio = (a: Rgba, b: Rgba) => {
      const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number]
      return (hi + 0.05) / (lo + 0.05)
    }
    const background = (el: Element): Rgba => {
      const layers: Rgba[] = []
      for (let e: Element | null = el; e; e = e.parentElement) {
        const c = parse(getComputedStyle(e).backgroundColor)
        if (c.a > 0) layers.push(c)
        if (c.a >= 1) break
      }
      let base: Rgba = { r: 255, g: 255, b: 255, a: 1 }
      for (const layer of layers.reverse()) base = over(layer, base)
      return base
    }
    const visible = (el: Element) => {
      const style = getComputedStyle(el)
      return el.getClientRects().length > 0 && style.visibility !== 'hidden' && style.display !== 'none'
    }
    const result = { lowContrast: [] as { text: string; ratio: number }[], lowContrastIcons: [] as { icon: string; ratio: number }[], smallTargets: [] as { target: string; width: number; height: number }[], checked: 0 }
    for (const el of document.body.querySelectorAll('*')) {
      if (!visible(el)) continue
      const ownText = [...el.childNodes].some((n) => n.nodeType === Node.TEXT_NODE && n.textContent!.trim() !== '')
      if (ownText) {
        result.checked++
        const bg = background(el)
        const r = ratio(over(parse(getComputedStyle(el).color), bg), bg)
        if (r < 4.5) result.lowContrast.push({ text: el.textContent!.trim().slice(0, 60), ratio: Math.round(r * 100) / 100 })
      }
      if (el instanceof SVGSVGElement) {
        const bg = background(el.parentElement!)
        const r = ratio(over(parse(getComputedStyle(el).stroke.startsWith('rgb') ? getComputedStyle(el).stroke : getComputedStyle(el).color), bg), bg)
        if (r < 3) result.lowContrastIcons.push({ icon: el.dataset.icon ?? 'svg', ratio: Math.round(r * 100) / 100 })
      }
      if (el.matches('button, a[href], input, select, [role=button]')) {
        const rect = el.getBoundingClientRect()
        if (rect.width < 44 || rect.height < 44) result.smallTargets.push({ target: el.id || el.textContent!.trim().slice(0, 30), width: rect.width, height: rect.height })
      }
    }
    return result
  })
}

/** The visible text of the page, for "no names, UIDs or addresses" checks. */
export const pageText = (page: Page): Promise<string> => page.evaluate(() => document.body.innerText)

/**
 * Closes a test's browser context after checking what every kiosk test requires of its pages:
 * nothing went to another origin and the CSP blocked nothing.
 */
export async function closeKioskContext(ctx: KioskContext | undefined): Promise<void> {
  if (!ctx) return
  expect(ctx.offOrigin).toEqual([])
  expect(ctx.cspViolations).toEqual([])
  await ctx.context.close()
}

/** A phone for the claim link's page: 390×844 at 2×, touch; the same origin and CSP watch as a kiosk. */
export function phoneContext(browser: Browser, origin: string, contextOptions: BrowserContextOptions = {}): Promise<KioskContext> {
  return kioskContext(browser, origin, { contextOptions: { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true, ...contextOptions } })
}

/**
 * What a phone's camera would read: the QR element as rendered on screen, decoded from its pixels.
 * `scratch` is a page with no CSP (about:blank in a context of its own) to turn the PNG into pixels.
 */
export async function decodeScreenQr(scratch: Page, qr: Locator): Promise<string> {
  const png = await qr.screenshot()
  const pixels = await scratch.evaluate(async (b64) => {
    const img = new Image()
    img.src = `data:image/png;base64,${b64}`
    await img.decode()
    const canvas = document.createElement('canvas')
    canvas.width = img.naturalWidth
    canvas.height = img.naturalHeight
    const g = canvas.getContext('2d')!
    g.drawImage(img, 0, 0)
    const data = g.getImageData(0, 0, canvas.width, canvas.height).data
    // RGBA bytes as base64: far cheaper to hand back than an array of numbers.
    let bytes = ''
    for (let i = 0; i < data.length; i += 0x8000) bytes += String.fromCharCode(...data.subarray(i, i + 0x8000))
    return { width: canvas.width, height: canvas.height, rgba: btoa(bytes) }
  }, png.toString('base64'))
  return decodeQR({ width: pixels.width, height: pixels.height, data: new Uint8Array(Buffer.from(pixels.rgba, 'base64')) })
}
