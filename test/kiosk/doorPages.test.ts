/**
 * A real door (issue 19), as an organiser runs it: the gateway started through the `tapgate` bin on a
 * fresh data dir, the team, the guest list (a pretix check-in list) and four stations set up with the
 * CLI, then the pages in Chromium. A USB scanner types a ticket code into the bind desk's staff view
 * and the next tap binds the wristband; the check-in kiosk shows the guest's first name and ticket
 * type; a GA ticket is refused at the VIP door; a guest goes out and comes back; a guest found by name
 * is checked in by hand; the numbers and the arrivals chart follow. Screenshots at 390 and 768 px wide.
 */
import type { ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { stopChild } from '../helpers/processes.js'
import { audit, closeKioskContext, HAS_CHROMIUM, launchChromium, pageText, shot } from './browser.js'
import { enterPin as enterPinOf, PHONE, resultState as state, resultText, startDoorGateway, TABLET } from './doorKit.js'

const PIN = '731594'
/** Wristbands 04D0…01 to 04D0…05 under one static-key profile, each with its guest's wallet. */
const BANDS = Array.from({ length: 5 }, (_, i) => `04D000000000${String(i + 1).padStart(2, '0')}`)
const WALLET = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8'
const ADA_TICKET = 'ADA-VIP-0001'

/** A pretix check-in list ("Include QR-code secret" ticked) with a wristband column for two guests. */
const GUEST_LIST = [
  '"Order code","Attendee name","Product","Checked in","Secret","Email","Requires special attention","Comment","Blocked","Chip"',
  `"Q1ADA","Ada Lovelace","VIP","","${ADA_TICKET}","ada@example.org","No","","",""`,
  `"Q2GRA","Grace Hopper","VIP","","GRACE-VIP-0002","grace@example.org","Yes","Wheelchair: use the ramp","","${BANDS[1]}"`,
  `"Q3LIN","Linus Torvalds","GA","","LINUS-GA-0003","linus@example.org","No","","","${BANDS[2]}"`,
  `"Q4KAT","Katherine Johnson","GA","","KATHERINE-GA-0004","katherine@example.org","No","","",""`,
].join('\r\n')

let browser: Browser | undefined
const children: ChildProcess[] = []
const dirs: string[] = []

beforeAll(async () => {
  if (HAS_CHROMIUM) browser = await launchChromium()
})

afterAll(async () => {
  await browser?.close()
  for (const child of children) await stopChild(child)
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
})

const enterPin = (page: Page) => enterPinOf(page, PIN)

/** Nothing scrolls sideways and every target a finger needs is 44 px or more, text contrast 4.5:1. */
async function expectUsable(page: Page, name: string): Promise<void> {
  const widths = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }))
  expect(widths.scroll, `${name}: horizontal scroll`).toBeLessThanOrEqual(widths.client)
  // Nothing pokes out of its card (the page hides sideways overflow, so a scroll check alone would miss it).
  const outside = await page.evaluate(() =>
    [...document.querySelectorAll<HTMLElement>('#panel .card *')]
      .filter((el) => el.getClientRects().length > 0 && el.getBoundingClientRect().right > el.closest('.card')!.getBoundingClientRect().right + 0.5)
      .map((el) => `${el.tagName.toLowerCase()}#${el.id} ${el.textContent!.trim().slice(0, 20)}`),
  )
  expect(outside, `${name}: out of its card`).toEqual([])
  const a = await audit(page)
  expect(a.lowContrast, `${name}: contrast`).toEqual([])
  expect(a.smallTargets, `${name}: targets`).toEqual([])
}

/** The kiosk shows `want` naming the guest by first name (with `words`), never by surname. */
async function expectGuest(page: Page, want: string, first: string, surname: string, ...words: string[]): Promise<void> {
  await expect.poll(() => state(page)).toBe(want)
  const text = await resultText(page)
  for (const word of [first, ...words]) expect(text).toContain(word)
  expect(text).not.toContain(surname)
}

/** A result on a kiosk: text 4.5:1 on its colour, its icon 3:1, then the screenshot. */
async function kioskShot(page: Page, name: string): Promise<void> {
  const a = await audit(page)
  expect(a.lowContrast, `${name}: contrast`).toEqual([])
  expect(a.lowContrastIcons, `${name}: icon contrast`).toEqual([])
  await shot(page, name)
}

describe.skipIf(!HAS_CHROMIUM)('a door with a guest list, through the tapgate bin', () => {
  test(
    'a scanned ticket arms the bind desk and the next tap binds the wristband; first names on the kiosks; GA refused at the VIP door; exit and re-entry; a guest found by name checked in by hand; the numbers and the chart',
    { timeout: 240_000 },
    async () => {
      // ---- set-up, as the README's "Running the door" says ----
      const { dataDir, tapgate, door, tap, open, contexts } = await startDoorGateway(browser, { prefix: 'door', pin: PIN, bands: BANDS, wallet: WALLET, owned: { children, dirs } })
      fs.writeFileSync(path.join(dataDir, 'guests.csv'), GUEST_LIST)
      const imported = await tapgate(['attendees', 'import', '--event', '1', 'guests.csv'])
      expect(imported).toMatch(/4/)

      const desk = await door('Bind desk', ['--mode', 'bind', '--event', '1'])
      const vip = await door('VIP door', ['--mode', 'checkin', '--event', '1', '--ticket-types', 'VIP'])
      const main = await door('Main door', ['--mode', 'checkin', '--event', '1'])
      const exit = await door('Exit', ['--mode', 'exit', '--event', '1'])

      try {
        // ---- the bind desk: a phone for staff, the desk's kiosk for the guest ----
        const deskKiosk = await open(desk.kioskUrl, TABLET)
        await expect.poll(() => state(deskKiosk), { timeout: 10_000 }).toBe('idle')
        expect(await resultText(deskKiosk)).toContain('Tap your wristband')
        const deskStaff = await open(desk.staffUrl, PHONE)
        await enterPin(deskStaff)
        // Nothing is listed before a search: a phone left on the desk shows no guest.
        expect(await deskStaff.locator('#results li').count()).toBe(0)
        expect(await pageText(deskStaff)).not.toContain('Lovelace')

        // Nobody armed: the desk asks staff to scan first.
        await tap(desk, BANDS[0]!)
        await expect.poll(() => state(deskKiosk)).toBe('bind_waiting')
        expect(await resultText(deskKiosk)).toContain('Staff: scan the ticket first')

        // The USB scanner types Ada's ticket code and Enter into the focused ticket field.
        await expect.poll(() => deskStaff.evaluate(() => document.activeElement?.id)).toBe('ticket')
        await deskStaff.keyboard.type(ADA_TICKET)
        await deskStaff.keyboard.press('Enter')
        await deskStaff.locator('#armed').waitFor({ state: 'visible' })
        expect(await deskStaff.locator('#armed-name').innerText()).toBe('Ada Lovelace')
        await expectUsable(deskStaff, 'door-staff-armed-390')
        await shot(deskStaff, 'door-staff-armed-390')

        await tap(desk, BANDS[0]!)
        await expectGuest(deskKiosk, 'bound', 'Ada', 'Lovelace', 'VIP')
        await kioskShot(deskKiosk, 'door-kiosk-bound-768')
        await deskStaff.locator('#armed').waitFor({ state: 'hidden' })
        await expect.poll(() => deskStaff.locator('#door-message').innerText()).toContain('bound')

        // ---- the VIP door: Grace (flagged) comes in amber; Linus's GA ticket is refused in red ----
        const vipKiosk = await open(vip.kioskUrl, TABLET)
        await expect.poll(() => state(vipKiosk), { timeout: 10_000 }).toBe('idle')
        const vipStaff = await open(vip.staffUrl, TABLET)
        await enterPin(vipStaff)
        await tap(vip, BANDS[2]!)
        await expectGuest(vipKiosk, 'not_allowed', 'Linus', 'Torvalds', 'GA', 'Not allowed at this door')
        await kioskShot(vipKiosk, 'door-kiosk-not-allowed-768')
        await tap(vip, BANDS[1]!)
        await expectGuest(vipKiosk, 'attention', 'Grace', 'Hopper', 'VIP')
        await vipStaff.locator('#attention').waitFor({ state: 'visible' })
        expect(await vipStaff.locator('#attention').innerText()).toContain('Grace Hopper')
        await kioskShot(vipKiosk, 'door-kiosk-attention-768')

        // ---- the main door: Linus gets in; Ada, bound at the desk, is already in ----
        const mainKiosk = await open(main.kioskUrl, PHONE)
        await expect.poll(() => state(mainKiosk), { timeout: 10_000 }).toBe('idle')
        await tap(main, BANDS[2]!)
        await expectGuest(mainKiosk, 'accepted', 'Linus', 'Torvalds', 'GA')
        expect(await pageText(mainKiosk)).not.toMatch(/Torvalds|LINUS-GA|linus@|04D0/)
        await kioskShot(mainKiosk, 'door-kiosk-accepted-390')
        await tap(main, BANDS[0]!)
        await expect.poll(() => state(mainKiosk)).toBe('already')
        expect(await resultText(mainKiosk)).toMatch(/Already checked in at \d\d:\d\d at Bind desk/)

        // ---- out and back in ----
        const exitKiosk = await open(exit.kioskUrl, TABLET)
        await expect.poll(() => state(exitKiosk), { timeout: 10_000 }).toBe('idle')
        await tap(exit, BANDS[2]!)
        await expectGuest(exitKiosk, 'exit', 'Linus', 'Torvalds')
        await tap(exit, BANDS[2]!)
        await expect.poll(() => state(exitKiosk)).toBe('not_inside')
        await tap(main, BANDS[2]!)
        await expect.poll(() => state(mainKiosk)).toBe('reentry')
        expect(await resultText(mainKiosk)).toContain('Welcome back')

        // ---- a wristband that is someone else's; a lost one rebound (the old one stops at once) ----
        await deskStaff.keyboard.type('KATHERINE-GA-0004')
        await deskStaff.keyboard.press('Enter')
        await expect.poll(() => deskStaff.locator('#armed-name').innerText()).toBe('Katherine Johnson')
        await tap(desk, BANDS[2]!)
        await expect.poll(() => state(deskKiosk)).toBe('bind_taken')
        expect(await resultText(deskKiosk)).toContain('This wristband is taken — see staff')
        expect(await pageText(deskKiosk)).not.toContain('Linus')
        await expect.poll(() => deskStaff.locator('#door-message').innerText()).toContain('belongs to Linus Torvalds')
        await deskStaff.click('#armed-cancel')
        await deskStaff.locator('#armed').waitFor({ state: 'hidden' })

        await deskStaff.fill('#search', 'ada lov')
        await deskStaff.press('#search', 'Enter')
        const ada = deskStaff.locator('#results li.guest')
        await expect.poll(() => ada.count()).toBe(1)
        expect(await ada.innerText()).toContain(BANDS[0]!)
        await ada.locator('button[data-action="rebind"]').click()
        await expect.poll(() => deskStaff.locator('#armed-what').innerText()).toContain('rebind')
        await tap(desk, BANDS[3]!)
        await expect.poll(() => state(deskKiosk)).toBe('bound')
        await tap(main, BANDS[0]!)
        await expect.poll(() => state(mainKiosk)).toBe('not_on_list')
        await tap(main, BANDS[3]!)
        await expect.poll(() => state(mainKiosk)).toBe('already')

        // ---- a guest without a wristband, found by name on the main door's staff view ----
        const mainStaff = await open(main.staffUrl, TABLET)
        await enterPin(mainStaff)
        await mainStaff.fill('#search', 'k')
        await mainStaff.press('#search', 'Enter')
        await expect.poll(() => mainStaff.locator('#door-message').innerText()).toContain('at least 2')
        await mainStaff.fill('#search', 'kath')
        await mainStaff.press('#search', 'Enter')
        const card = mainStaff.locator('#results li.guest')
        await expect.poll(() => card.count()).toBe(1)
        expect(await card.innerText()).toContain('Katherine Johnson')
        await card.locator('button[data-action="attendee-check-in"]').click()
        await expect.poll(() => mainStaff.locator('#door-message').innerText()).toContain('Katherine Johnson: checked in')
        await expect.poll(() => card.getAttribute('data-status')).toBe('inside')

        // The guest list's download, as the organiser gets it.
        const [download] = await Promise.all([mainStaff.waitForEvent('download'), mainStaff.click('#export')])
        const csv = fs.readFileSync((await download.path())!, 'utf8')
        expect(csv).toContain('Katherine Johnson')
        expect(csv.split(/\r?\n/).filter((line) => line.trim() !== '')).toHaveLength(5)
        // What the organiser gets afterwards says what happened at the doors, guest by guest.
        type Exported = { ticketCode: string; chips: string[]; checkIn: { station: string; method: string; leftAt: string | null } | null; passes: { direction: string; station: string }[]; mint: { state: string } }
        const exported = (JSON.parse(await tapgate(['attendees', 'export', '--event', '1', '--format', 'json'])) as { attendees: Exported[] }).attendees
        const story = Object.fromEntries(exported.map((a) => [a.ticketCode, { chips: a.chips, checkIn: a.checkIn && { station: a.checkIn.station, method: a.checkIn.method, inside: a.checkIn.leftAt === null }, passes: a.passes.map((p) => `${p.direction} ${p.station}`) }]))
        expect(story).toEqual({
          [ADA_TICKET]: { chips: [BANDS[3]], checkIn: { station: 'Bind desk', method: 'tap', inside: true }, passes: [] },
          'GRACE-VIP-0002': { chips: [BANDS[1]], checkIn: { station: 'VIP door', method: 'tap', inside: true }, passes: [] },
          'LINUS-GA-0003': { chips: [BANDS[2]], checkIn: { station: 'Main door', method: 'tap', inside: true }, passes: ['out Exit', 'in Main door'] },
          'KATHERINE-GA-0004': { chips: [], checkIn: { station: 'Main door', method: 'manual', inside: true }, passes: [] },
        })
        // Ada's wristband had a wallet: her event token was minted; the others' share that wallet, which has it already.
        expect(exported.find((a) => a.ticketCode === ADA_TICKET)!.mint.state).not.toBe('waiting_wallet')

        // ---- the numbers: every door's, and the chart of arrivals (re-entries are not arrivals) ----
        await expect.poll(() => mainStaff.locator('#stat-checked').innerText(), { timeout: 10_000 }).toBe('4 / 4')
        expect(await mainStaff.locator('#stat-inside').innerText()).toBe('4')
        // The team's rows agree with the door's numbers: the event's row follows the feed, not the last state fetched.
        await expect.poll(() => mainStaff.locator('#counts-detail dt:has-text("Opening night") + dd').innerText()).toBe('4')
        // The GA ticket at the VIP door and the old wristband after the rebind.
        expect(await mainStaff.locator('#stat-refused').innerText()).toBe('2')
        expect(await mainStaff.locator('#per-type').innerText()).toContain('VIP: 2 / 2')
        const chart = mainStaff.locator('#chart svg')
        await expect.poll(() => chart.getAttribute('data-total')).toBe('4')
        expect(await chart.locator('rect.bar').count()).toBeGreaterThanOrEqual(1)
        await expectUsable(mainStaff, 'door-staff-768')
        await shot(mainStaff, 'door-staff-768')
        await mainStaff.setViewportSize(PHONE)
        await expectUsable(mainStaff, 'door-staff-390')
        await shot(mainStaff, 'door-staff-search-390')
        // The numbers and the chart above the quick actions' bar.
        await mainStaff.evaluate(() => document.getElementById('chart')!.scrollIntoView({ block: 'center' }))
        await shot(mainStaff, 'door-staff-numbers-390')
      } finally {
        for (const ctx of contexts) await closeKioskContext(ctx)
      }
    },
  )
})
