/**
 * A real door for the browser tests (doorPages, doorScanner): a gateway started through the `tapgate`
 * bin on a fresh data dir, a team with wristbands under one static-key profile and one guestbook
 * event, set up with the CLI as the README's "Running the door" says; stations made with their kiosk
 * URL and staff PIN, wristband taps through the station path, and pages opened in Chromium.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { expect } from 'vitest'
import { sunTapUrl } from '../helpers/gateway.js'
import { cliPath, collectOutput, type Server, startServe } from '../helpers/processes.js'
import { kioskContext, type KioskContext } from './browser.js'
import { eventMetadata, FILE, META } from './kioskGateway.js'

export type Door = { id: number; token: string; kioskUrl: string; staffUrl: string }
export type Tapgate = (args: string[], stdin?: string) => Promise<string>
export type Viewport = { width: number; height: number }

export const PHONE: Viewport = { width: 390, height: 844 }
export const TABLET: Viewport = { width: 768, height: 1024 }

/** What the kiosk's result panel shows: its state and its text. */
export const resultState = (page: Page) => page.locator('#result').getAttribute('data-state')
export const resultText = (page: Page) => page.locator('#result').innerText()

/** The staff view's PIN pad, then its panel. */
export async function enterPin(page: Page, pin: string): Promise<void> {
  await page.locator('[data-key="1"]').waitFor({ state: 'visible' })
  for (const digit of pin) await page.click(`[data-key="${digit}"]`)
  await page.click('[data-key="enter"]')
  await page.locator('#panel').waitFor({ state: 'visible' })
}

/** What a test file owns and stops in its afterAll: every process started and every temp dir. */
export type Owned = { children: ChildProcess[]; dirs: string[] }

/** Runs `tapgate …` against the data dir to its end; its stdout, or the failure with both streams. */
export function tapgateIn(dataDir: string, owned: Owned): Tapgate {
  return (args, stdin = '') =>
    new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [cliPath, ...args], { cwd: dataDir, env: { ...process.env, TAPGATE_DATA_DIR: dataDir }, stdio: ['pipe', 'pipe', 'pipe'] })
      owned.children.push(child)
      const output = collectOutput(child)
      child.stdin!.end(stdin)
      void output.exited.then(({ code }) => (code === 0 ? resolve(output.stdout()) : reject(new Error(`tapgate ${args.join(' ')} exited ${code}\n${output.stdout()}\n${output.stderr()}`))))
    })
}

export type DoorGateway = {
  server: Server
  dataDir: string
  tapgate: Tapgate
  /** A station made with the CLI: its mode and event set, its kiosk URL printed, the staff PIN set. */
  door(name: string, mode: string[]): Promise<Door>
  /** The wristband on a door's reader: the SUN URL it writes (the next counter), through the station path. */
  tap(at: Door, uid: string): Promise<void>
  /** A page in a kiosk browser context of its own (closed by closeKioskContext over `contexts`). */
  open(url: string, viewport: Viewport): Promise<Page>
  contexts: KioskContext[]
}

/**
 * `tapgate serve --no-demo` on a fresh data dir, and `tapgate import` of a team named "Door team" whose
 * wristbands (`bands`, each with `wallet`) share one static-key profile and whose guestbook holds one
 * event, "Opening night" (event 1).
 */
export async function startDoorGateway(browser: Browser | undefined, p: { prefix: string; pin: string; bands: readonly string[]; wallet: string; owned: Owned }): Promise<DoorGateway> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `tapgate-${p.prefix}-`))
  p.owned.dirs.push(dataDir)
  const server = await startServe({
    cwd: dataDir,
    env: { TAPGATE_DATA_DIR: dataDir, PORT: '0', TAPGATE_LOG_LEVEL: 'warn' },
    command: [process.execPath, cliPath, 'serve', '--no-demo'],
    track: (child) => p.owned.children.push(child),
  })
  const tapgate = tapgateIn(dataDir, p.owned)
  const team = {
    teams: [
      {
        name: 'Door team',
        chipProfiles: [{ name: 'wristbands', mode: 'aes', keyScheme: 'static', metaKey: META, fileKey: FILE }],
        chips: p.bands.map((uid) => ({ uid, profile: 'wristbands', wallet: p.wallet })),
        guestbookContracts: [{ name: 'Guests', symbol: 'GST', chainId: 31337, events: [{ name: 'Opening night', tokenId: '1', metadata: eventMetadata() }] }],
      },
    ],
  }
  fs.writeFileSync(path.join(dataDir, 'team.json'), JSON.stringify(team))
  await tapgate(['import', 'team.json'])

  const counters = new Map<string, number>()
  const contexts: KioskContext[] = []
  return {
    server,
    dataDir,
    tapgate,
    contexts,
    async door(name, mode) {
      const created = JSON.parse(await tapgate(['station', 'create', '--team', '1', '--name', name])) as { stationId: number; token: string }
      const id = String(created.stationId)
      await tapgate(['station', 'set', '--station', id, ...mode])
      const kioskUrl = (await tapgate(['station', 'kiosk-url', '--station', id, '--base-url', server.url])).trim()
      await tapgate(['station', 'staff-pin', '--station', id], `${p.pin}\n`)
      return { id: created.stationId, token: created.token, kioskUrl, staffUrl: kioskUrl.replace('/kiosk#', '/kiosk/staff#') }
    },
    async tap(at, uid) {
      const counter = (counters.get(uid) ?? 0) + 1
      counters.set(uid, counter)
      const url = sunTapUrl({ metaKey: META, fileKey: FILE, uid, counter, base: `${server.url}/tap` })
      const res = await fetch(`${server.url}/station/taps`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-station-token': at.token },
        body: JSON.stringify({ rfUid: uid, url, readerName: 'ACS ACR1252 PICC' }),
      })
      expect(res.status, await res.clone().text()).toBe(200)
    },
    async open(url, viewport) {
      const ctx = await kioskContext(browser!, server.url, { contextOptions: { viewport } })
      contexts.push(ctx)
      const page = await ctx.newPage()
      await page.goto(url)
      return page
    },
  }
}
