/**
 * What the web console's browser tests share (consolePage.test.ts, consoleDoor.test.ts,
 * consoleProducts.test.ts, consoleProvisioningPage.test.ts): the gateway
 * started through the bin on a fresh data dir with the demo team, the bin run against it, the console
 * link it prints, the tabs, a tap at a station, and the screenshots at a phone's and a desk's width.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { BrowserContext, Page } from 'playwright-core'
import { expect } from 'vitest'
import { cliPath, collectOutput, type Server, startServe, stopChild } from '../helpers/processes.js'
import { ARTIFACTS, audit, type KioskContext } from './browser.js'

export const DEMO_HOODIE = '04DE5F1EACC040'
// NXP's published AN12196 tap, which the demo's hoodie chip verifies (README, Quick start).
export const NXP_TAP = '/tap?e=EF963FF7828658A599F3041510671E88&c=94EED9EE65337086'

export type ConsoleTab = 'overview' | 'stations' | 'events' | 'products' | 'keys' | 'taps'

/**
 * A test file's gateways: each started through the bin (`tapgate serve`) on a fresh data dir, all
 * stopped and their dirs removed by `cleanup()` (the file's afterAll).
 */
export function consoleGateways() {
  const children: ChildProcess[] = []
  const dirs: string[] = []

  /** Runs the bin (`node src/cli/tapgate.js …`) against the gateway's data dir to its end: its stdout. */
  async function tapgate(args: string[], dataDir: string): Promise<string> {
    const child = spawn(process.execPath, [cliPath, ...args, '--data-dir', dataDir], { cwd: dataDir, env: { ...process.env, TAPGATE_DATA_DIR: dataDir } })
    children.push(child)
    const output = collectOutput(child)
    const { code } = await output.exited
    expect(code, `tapgate ${args.join(' ')}\n${output.stderr()}`).toBe(0)
    return output.stdout().trim()
  }

  return {
    tapgate,
    /**
     * `tapgate serve` on a fresh data dir (the demo team and its event), on a free port. `env` adds to
     * its environment: TAPGATE_STATION=true for a gateway with its own readers (provisioning).
     */
    async start(env: NodeJS.ProcessEnv = {}): Promise<{ server: Server; dataDir: string }> {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tapgate-console-'))
      dirs.push(dataDir)
      const server = await startServe({ cwd: dataDir, env: { TAPGATE_DATA_DIR: dataDir, PORT: '0', ...env }, track: (child) => children.push(child) })
      return { server, dataDir }
    },
    /** The sign-in link of the start banner; `tapgate console-link` if the banner has none. */
    async consoleLink(server: Server, dataDir: string): Promise<string> {
      const printed = /Console[^\n]*?:\s+(\S+\/console\/sign-in#\S+)/.exec(server.stdout())?.[1]
      return printed ?? tapgate(['console-link', '--team', '1', '--base-url', server.url], dataDir)
    },
    async cleanup(): Promise<void> {
      for (const child of children) await stopChild(child)
      for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
    },
  }
}

/**
 * A full-page screenshot at a phone's width and at a desk's (test/artifacts/console-<name>-<width>.png),
 * each checked for sideways scrolling, contrast and target sizes.
 */
export async function shots(page: Page, name: string, minTexts = 5): Promise<void> {
  fs.mkdirSync(ARTIFACTS, { recursive: true })
  for (const [width, height] of [
    [390, 844],
    [1280, 800],
  ] as const) {
    await page.setViewportSize({ width, height })
    // Two frames for the new width's layout and paint: a full-page capture at once can catch parts unpainted.
    await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))))
    await page.screenshot({ path: path.join(ARTIFACTS, `console-${name}-${width}.png`), fullPage: true })
    // Nothing may scroll sideways, at either width.
    expect(await page.evaluate(() => document.documentElement.scrollWidth), `${name} at ${width} px`).toBeLessThanOrEqual(width)
    const a = await audit(page)
    expect(a.checked, name).toBeGreaterThan(minTexts)
    expect({ name, width, lowContrast: a.lowContrast, smallTargets: a.smallTargets }).toEqual({ name, width, lowContrast: [], smallTargets: [] })
  }
}

/** Shows a tab of the console, as a click on it does. */
export async function tab(page: Page, name: ConsoleTab): Promise<void> {
  await page.click(`#tab-${name}`)
  await expect.poll(() => page.locator(`#tab-${name}`).getAttribute('aria-selected')).toBe('true')
}

/** The demo's hoodie tapped at a station's reader (POST /station/taps with its token). */
export function tapAtStation(serverUrl: string, stationToken: string): Promise<Response> {
  return fetch(`${serverUrl}/station/taps`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-station-token': stationToken },
    body: JSON.stringify({ rfUid: DEMO_HOODIE, url: `${serverUrl}${NXP_TAP}`, readerName: 'ACS ACR1252 PICC' }),
  })
}

/**
 * The console errors of `kiosk` but those `expected` matches and Chromium's line for the product
 * image's /media 404 that `failedRequests` leaves out (the same timing).
 */
export function unexpectedConsoleErrors(kiosk: KioskContext, expected: RegExp): string[] {
  return kiosk.consoleErrors.filter((text) => !expected.test(text) && !/^Failed to load resource: .* 404 \(Not Found\) \/media\//.test(text))
}

/**
 * The requests of `context` that failed or were answered 4xx/5xx, as "status METHOD path", for a test
 * to compare with the ones it meant to fail. Two are left out, both timing and neither the console's:
 * the sign-in page's tab icon, cancelled when the page moves on to /console; and a kiosk page's
 * product image, which the gateway fetches from example.com (the demo's URL): with no internet here
 * its /media answer is 404, and whether the kiosk asks before the test closes it varies.
 */
export function failedRequests(context: BrowserContext): string[] {
  const failed: string[] = []
  context.on('response', (response) => {
    const { pathname } = new URL(response.url())
    if (response.status() === 404 && pathname.startsWith('/media/')) return
    if (response.status() >= 400) failed.push(`${response.status()} ${response.request().method()} ${pathname}`)
  })
  context.on('requestfailed', (request) => {
    if (new URL(request.url()).pathname === '/kiosk/assets/icon.svg' && request.failure()?.errorText === 'net::ERR_ABORTED') return
    failed.push(`failed ${request.method()} ${request.url()}: ${request.failure()?.errorText}`)
  })
  return failed
}

/**
 * Signs `desk` in to the console with a sign-in link: its page, on the overview of `team` (the demo
 * team's name by default), and the requests of the context that fail from now on (failedRequests).
 */
export async function signIn(desk: KioskContext, link: string, team = 'Demo team'): Promise<{ page: Page; failed: string[] }> {
  const failed = failedRequests(desk.context)
  const page = await desk.newPage()
  await page.goto(link)
  await expect.poll(() => page.locator('#team-name').textContent()).toBe(team)
  return { page, failed }
}
