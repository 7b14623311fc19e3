/**
 * The kiosk pages as a user starts tapgate (issue 17 §1): the other browser tests build the app
 * in-process, through tsx, and so never ran what the bin runs (a bundle of the CLI in
 * node_modules/.cache, where the kiosk's client code next to its module did not exist: every
 * asset answered 500). Here the gateway starts exactly as the README says, through the bin on a
 * fresh data dir with the demo team, and then from the output of `npm pack` installed into an
 * empty folder and started with `npx tapgate serve`. Everything after the start goes through the
 * CLI and the pages as a user would: a station in claim mode, its kiosk URL and staff PIN, the
 * kiosk idle, the staff PIN form, a tap of the demo hoodie, "Finish on your phone", the phone form.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { cliPath, collectOutput, type Server, startServe, stopChild, stopGroup } from '../helpers/processes.js'
import { packedApp, userEnv } from '../helpers/packedApp.js'
import { HAS_POSTGRES, testDatabase } from '../helpers/postgres.js'
import { closeKioskContext, HAS_CHROMIUM, kioskContext, type KioskContext, launchChromium, phoneContext, shot } from './browser.js'

// The installed package's move to PostgreSQL, in the last test.
const postgresDatabase = testDatabase()
const PIN = '824613'
const DEMO_HOODIE = '04DE5F1EACC040'
// NXP's published AN12196 tap, which the demo's hoodie chip verifies (README, Quick start).
const NXP_TAP = '/tap?e=EF963FF7828658A599F3041510671E88&c=94EED9EE65337086'

type Tapgate = (args: string[], stdin?: string) => Promise<string>

let browser: Browser | undefined
const children: ChildProcess[] = []
const groups: ChildProcess[] = []
const dirs: string[] = []

beforeAll(async () => {
  if (HAS_CHROMIUM) browser = await launchChromium()
})

afterAll(async () => {
  await browser?.close()
  for (const child of children) await stopChild(child)
  for (const group of groups) await stopGroup(group)
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
})

function tempDir(name: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `tapgate-${name}-`))
  dirs.push(dir)
  return dir
}

/** Runs a tapgate command to its end, with `stdin` written to it; its stdout, or the failure with both streams. */
function commandRunner(command: string[], cwd: string, env: NodeJS.ProcessEnv): Tapgate {
  return (args, stdin) =>
    new Promise((resolve, reject) => {
      const [file, ...fixed] = command
      const child = spawn(file!, [...fixed, ...args], { cwd, env: userEnv(env), stdio: ['pipe', 'pipe', 'pipe'] })
      children.push(child)
      const output = collectOutput(child)
      child.stdin!.end(stdin ?? '')
      void output.exited.then(({ code }) =>
        code === 0 ? resolve(output.stdout()) : reject(new Error(`tapgate ${args.join(' ')} exited ${code}\n${output.stdout()}\n${output.stderr()}`)),
      )
    })
}

/** The start banner's console link, opened in Chromium: the console shows the demo team (issue 28). */
async function consoleSignsIn(server: Server, label: string): Promise<void> {
  const link = /Console[^\n]*?:\s+(\S+\/console\/sign-in#\S+)/.exec(server.stdout())?.[1]
  expect(link, `${label}: the banner's console link`).toBeDefined()
  const context = await browser!.newContext()
  try {
    const page = await context.newPage()
    const errors: string[] = []
    page.on('console', (message) => message.type() === 'error' && errors.push(message.text()))
    await page.goto(link!)
    await expect.poll(() => page.locator('#team-name').textContent(), { timeout: 10_000 }).toBe('Demo team')
    expect(page.url()).not.toContain('#tgc_')
    await shot(page, `as-user-${label}-console`)
    expect(errors).toEqual([])
  } finally {
    await context.close()
  }
}

/**
 * A claim station set up with the CLI against the running gateway's data dir, and the three pages
 * driven to the state a user sees first: the kiosk idle, the staff PIN form, and, after a tap of the
 * demo hoodie and "Finish on your phone", the phone's address form.
 */
async function kioskPagesWork(tapgate: Tapgate, server: Server, label: string): Promise<void> {
  // Every asset answers, and answers what a browser can run (the 500 of the bug is caught here first).
  for (const asset of ['kiosk.js', 'staff.js', 'claim.js', 'kiosk.css', 'claim.css', 'icon.svg']) {
    const res = await fetch(`${server.url}/kiosk/assets/${asset}`)
    expect(res.status, `${label}: /kiosk/assets/${asset}`).toBe(200)
  }
  const station = JSON.parse(await tapgate(['station', 'create', '--team', '1', '--name', 'Shop counter'])) as { stationId: number; token: string }
  await tapgate(['station', 'set', '--station', String(station.stationId), '--mode', 'claim'])
  const kioskUrl = (await tapgate(['station', 'kiosk-url', '--station', String(station.stationId), '--base-url', server.url])).trim()
  expect(kioskUrl).toMatch(new RegExp(`^${server.url}/kiosk#token=`))
  await tapgate(['station', 'staff-pin', '--station', String(station.stationId)], `${PIN}\n`)

  let kiosk: KioskContext | undefined
  let phone: KioskContext | undefined
  const failed: string[] = []
  try {
    kiosk = await kioskContext(browser!, server.url)
    kiosk.context.on('response', (response) => {
      if (response.status() >= 400) failed.push(`${response.status()} ${new URL(response.url()).pathname}`)
    })
    const page = await kiosk.newPage()
    await page.goto(kioskUrl)
    const state = (p: Page) => p.locator('#result').getAttribute('data-state')
    await expect.poll(() => state(page), { timeout: 10_000 }).toBe('idle')
    await shot(page, `as-user-${label}-kiosk-idle`)

    const staff = await kiosk.newPage()
    await staff.goto(kioskUrl.replace('/kiosk#', '/kiosk/staff#'))
    await staff.locator('[data-key="1"]').waitFor({ state: 'visible' })
    await staff.locator('#pin-message').waitFor({ state: 'attached' })
    await shot(staff, `as-user-${label}-staff-pin`)

    // The station's reader reads the demo hoodie: the kiosk shows the product, the customer takes the phone way.
    const tap = await fetch(`${server.url}/station/taps`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-station-token': station.token },
      body: JSON.stringify({ rfUid: DEMO_HOODIE, url: `${server.url}${NXP_TAP}`, readerName: 'ACS ACR1252 PICC' }),
    })
    expect(tap.status, await tap.clone().text()).toBe(200)
    await expect.poll(() => state(page)).toBe('product')
    await page.locator('#phone').click()
    await expect.poll(() => state(page)).toBe('handoff')
    const claimUrl = await page.locator('#qr').getAttribute('data-claim-url')
    expect(claimUrl).toMatch(new RegExp(`^${server.url}/c/`))

    phone = await phoneContext(browser!, server.url)
    phone.context.on('response', (response) => {
      if (response.status() >= 400) failed.push(`${response.status()} ${new URL(response.url()).pathname}`)
    })
    const phonePage = await phone.newPage()
    await phonePage.goto(claimUrl!)
    await expect.poll(() => phonePage.locator('#claim').getAttribute('data-state'), { timeout: 10_000 }).toBe('form')
    await phonePage.locator('input[name=recipient]').waitFor({ state: 'visible' })
    await shot(phonePage, `as-user-${label}-phone-form`)
    // The demo hoodie's picture is on a public IPFS gateway, out of reach here: /media answers 404 and
    // the card shows its placeholder. Nothing else may fail, and the pages log nothing but those.
    const media = failed.filter((line) => line.startsWith('404 /media/'))
    expect(failed.filter((line) => !media.includes(line))).toEqual([])
    expect([...kiosk.consoleErrors, ...phone.consoleErrors].filter((text) => !text.includes('status of 404'))).toEqual([])
  } finally {
    await closeKioskContext(phone)
    await closeKioskContext(kiosk)
  }
}

describe.skipIf(!HAS_CHROMIUM)('the kiosk pages, as a user starts tapgate', () => {
  test('from the source tree: `node src/cli/tapgate.js serve` (what npm start runs) on a fresh data dir', async () => {
    const dataDir = tempDir('as-user')
    const env = { TAPGATE_DATA_DIR: dataDir, PORT: '0' }
    const server = await startServe({ cwd: dataDir, env, track: (child) => children.push(child) })
    await kioskPagesWork(commandRunner([process.execPath, cliPath], dataDir, env), server, 'source')
    // What the first start prints: the Try block names the kiosk, and no log line (the server logs at
    // info here) lands inside it.
    const out = server.stdout()
    const block = out.slice(out.indexOf('tapgate listening on'), out.indexOf('station kiosk-url --station <id>'))
    expect(block).toContain('Try (API_KEY=<the key above>):')
    expect(block).toContain('A check-in kiosk for the demo event')
    expect(block).not.toContain('{"level"')
    expect(out).toContain('{"level"')
  })

  test('from `npm pack`, installed into an empty folder: `npx tapgate serve`', { timeout: 420_000 }, async () => {
    // Packed and installed once per run for the files that ask (test/helpers/packedApp.ts).
    const app = (await packedApp()).dir
    expect(fs.existsSync(path.join(app, 'node_modules/tapgate/test')), 'the package ships no tests').toBe(false)

    const env = { PORT: '0', TAPGATE_LOG_LEVEL: 'warn' }
    const server = await startServe({ cwd: app, env: userEnv(env), command: ['npx', '--no-install', 'tapgate', 'serve'], detached: true, track: (child) => groups.push(child) })
    // The default data dir, ./data, in the user's folder.
    expect(server.stdout()).toContain('(data: ./data)')
    expect(fs.existsSync(path.join(app, 'data/tapgate.sqlite'))).toBe(true)
    await kioskPagesWork(commandRunner(['npx', '--no-install', 'tapgate'], app, env), server, 'installed')
    // The console's pages come from the package's prebuilt assets too: its printed link signs in.
    await consoleSignsIn(server, 'installed')
    if (!HAS_POSTGRES) return
    await stopGroup(server.child)

    // The same installed package moves to PostgreSQL (README, "Several gateways on PostgreSQL"): its
    // driver and its migrations for PostgreSQL ship too. The data dir it just used is copied, and a
    // gateway on the copy serves the kiosk's assets with no data dir of its own to fall back on.
    const tapgate = commandRunner(['npx', '--no-install', 'tapgate'], app, env)
    const copied = await tapgate(['db', 'copy', '--to', postgresDatabase.url()])
    expect(copied).toMatch(/^stations\s+1\s+1$/m)
    const pgEnv = { ...env, TAPGATE_DATABASE_URL: postgresDatabase.url(), TAPGATE_EMBEDDED_CHAIN: 'false' }
    const status = JSON.parse(await commandRunner(['npx', '--no-install', 'tapgate'], app, pgEnv)(['db', 'status', '--json'])) as { backend: string; schemaVersion: number }
    expect(status.backend).toBe('postgres')
    const pg = await startServe({ cwd: app, env: userEnv(pgEnv), command: ['npx', '--no-install', 'tapgate', 'serve'], detached: true, track: (child) => groups.push(child) })
    expect(pg.stdout()).not.toMatch(/tg_/) // the copied demo team: no new one, no new key printed
    expect((await fetch(`${pg.url}/health`)).status).toBe(200)
    expect((await fetch(`${pg.url}/kiosk/assets/kiosk.js`)).status).toBe(200)
    const kioskUrl = (await commandRunner(['npx', '--no-install', 'tapgate'], app, pgEnv)(['station', 'kiosk-url', '--station', '1', '--base-url', pg.url])).trim()
    expect(kioskUrl).toMatch(new RegExp(`^${pg.url}/kiosk#token=`))
  })
})
