/**
 * Issue 25 at a real door: the gateway started through the `tapgate` bin on a fresh data dir, a Luma
 * guest list and a Hi.Events one (a guest awaiting payment) imported with the CLI, then the pages in
 * Chromium. A USB scanner types a Luma ticket's QR, the whole check-in URL, into the staff field
 * keystroke by keystroke and Enter: the bind desk binds that guest's wristband, and a check-in door's
 * field checks the other Luma guest in. The unpaid guest's tap is refused "not paid": amber on the
 * kiosk, an alert on the staff view. Screenshots in test/artifacts/.
 */
import type { ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { stopChild } from '../helpers/processes.js'
import { audit, closeKioskContext, HAS_CHROMIUM, launchChromium, shot } from './browser.js'
import { enterPin as enterPinOf, PHONE, resultState as state, resultText, startDoorGateway, TABLET } from './doorKit.js'

const PIN = '582046'
const BANDS = Array.from({ length: 3 }, (_, i) => `04D100000000${String(i + 1).padStart(2, '0')}`)
const WALLET = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8'
// What Luma's ticket QR codes hold: the event's check-in URL with the guest's key.
const ASA_QR = 'https://lu.ma/check-in/evt-NKXctR3fMVfX24o?pk=k7Qx2pLm'
const ADA_QR = 'https://lu.ma/check-in/evt-NKXctR3fMVfX24o?pk=Zt8wQ1nc'

/** Luma's guest export (the fixture's columns that matter), as the organiser downloads it. */
const LUMA = [
  'api_id,name,first_name,last_name,email,approval_status,checked_in_at,qr_code_url,ticket_name',
  `gst-8fKq2LmZx0aB3cD,Åsa Lindqvist,Åsa,Lindqvist,asa.lindqvist@example.se,approved,,${ASA_QR},General Admission`,
  `gst-1aB2cD3eF4gH5iJ,"Lovelace, Ada",Ada,Lovelace,ada@example.com,approved,,${ADA_QR},Supporter`,
].join('\n')

/** Hi.Events' attendee export with a wristband column: Tom's order awaits payment. */
const HI_EVENTS = [
  'ID,First Name,Last Name,Email,Status,Check Ins,Product ID,Product Name,Event ID,Public ID,Short ID,Created Date,Last Updated Date,Chip',
  `102,Tom,Baker,tom.baker@example.com,AWAITING_PAYMENT,,13,VIP - Early Bird,3,A-P4ZT8WN,aB3cD4eF5gH6j,2025-05-03 10:00:00,2025-05-03 10:00:00,${BANDS[1]}`,
].join('\n')

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

/** A USB scanner: a keyboard that types the code's text, one key at a time, then Enter. */
async function scan(page: Page, text: string): Promise<void> {
  await page.keyboard.type(text, { delay: 5 })
  await page.keyboard.press('Enter')
}

describe.skipIf(!HAS_CHROMIUM)('a scanner and an unpaid ticket at a door, through the tapgate bin', () => {
  test('a Luma QR URL typed by the scanner binds (and checks in) its guest; an unpaid guest is refused "not paid", amber, staff alerted', { timeout: 180_000 }, async () => {
    const { dataDir, tapgate, door, tap, open, contexts } = await startDoorGateway(browser, { prefix: 'scanner', pin: PIN, bands: BANDS, wallet: WALLET, owned: { children, dirs } })
    fs.writeFileSync(path.join(dataDir, 'luma.csv'), LUMA)
    expect(await tapgate(['attendees', 'import', '--event', '1', 'luma.csv'])).toContain('Luma guest list, 2 guests imported')
    fs.writeFileSync(path.join(dataDir, 'hievents.csv'), HI_EVENTS)
    expect(await tapgate(['attendees', 'import', '--event', '1', 'hievents.csv'])).toContain('1 not paid')

    const desk = await door('Bind desk', ['--mode', 'bind', '--event', '1'])
    const main = await door('Main door', ['--mode', 'checkin', '--event', '1'])

    try {
      // ---- the bind desk: the scanner types Åsa's QR, the whole URL, into the focused ticket field ----
      const deskKiosk = await open(desk.kioskUrl, TABLET)
      await expect.poll(() => state(deskKiosk), { timeout: 10_000 }).toBe('idle')
      const deskStaff = await open(desk.staffUrl, PHONE)
      await enterPin(deskStaff)
      await expect.poll(() => deskStaff.evaluate(() => document.activeElement?.id)).toBe('ticket')
      await scan(deskStaff, ASA_QR)
      await deskStaff.locator('#armed').waitFor({ state: 'visible' })
      expect(await deskStaff.locator('#armed-name').innerText()).toBe('Åsa Lindqvist')
      // The field is empty again for the next ticket.
      expect(await deskStaff.locator('#ticket').inputValue()).toBe('')
      await shot(deskStaff, 'scanner-staff-armed-luma-390')
      await tap(desk, BANDS[0]!)
      await expect.poll(() => state(deskKiosk)).toBe('bound')
      expect(await resultText(deskKiosk)).toContain('Åsa')
      await deskStaff.locator('#armed').waitFor({ state: 'hidden' })
      await expect.poll(() => deskStaff.locator('#door-message').innerText()).toContain('Åsa Lindqvist: wristband')

      // ---- the main door: her wristband opens it (in already: bound at the desk checks in) ----
      const mainKiosk = await open(main.kioskUrl, TABLET)
      await expect.poll(() => state(mainKiosk), { timeout: 10_000 }).toBe('idle')
      await tap(main, BANDS[0]!)
      await expect.poll(() => state(mainKiosk)).toBe('already')
      expect(await resultText(mainKiosk)).toMatch(/Already checked in at \d\d:\d\d at Bind desk/)

      // The main door's staff field: Ada's QR typed by the scanner checks her in at once.
      const mainStaff = await open(main.staffUrl, TABLET)
      await enterPin(mainStaff)
      await mainStaff.locator('#ticket').click()
      await scan(mainStaff, ADA_QR)
      await expect.poll(() => mainStaff.locator('#door-message').innerText()).toContain('Lovelace, Ada: checked in')

      // ---- Tom's order awaits payment: his wristband is refused "not paid", amber, staff alerted ----
      await tap(main, BANDS[1]!)
      await expect.poll(() => state(mainKiosk)).toBe('not_paid')
      const text = await resultText(mainKiosk)
      expect(text).toContain('Not paid — see staff')
      expect(text).toContain('Tom')
      expect(text).not.toContain('Baker')
      // Amber (the attention colour), not the red of a refusal.
      expect(await mainKiosk.locator('#result').evaluate((el) => getComputedStyle(el).getPropertyValue('--state-bg').trim())).toBe('#f59e0b')
      const a = await audit(mainKiosk)
      expect(a.lowContrast, 'not paid: contrast').toEqual([])
      expect(a.lowContrastIcons, 'not paid: icon contrast').toEqual([])
      await shot(mainKiosk, 'scanner-kiosk-not-paid-768')
      await mainStaff.locator('#attention').waitFor({ state: 'visible' })
      const alert = mainStaff.locator('#attention-list li[data-reason="not_paid"]')
      await expect.poll(() => alert.count()).toBe(1)
      expect(await alert.innerText()).toContain('Tom Baker (VIP - Early Bird): NOT PAID, not let in')
      // His card says why, and checking him in by hand meets the same rule.
      await mainStaff.fill('#search', 'tom bak')
      await mainStaff.press('#search', 'Enter')
      // Ada's card (the scan's search) shows until this search answers.
      const card = mainStaff.locator('#results li.guest')
      await expect.poll(() => card.allInnerTexts()).toEqual([expect.stringContaining('Tom Baker')])
      expect(await card.getAttribute('data-paid')).toBe('false')
      expect(await card.innerText()).toContain('Not paid')
      await card.locator('button[data-action="attendee-check-in"]').click()
      await expect.poll(() => mainStaff.locator('#door-message').innerText()).toContain('Tom Baker: NOT let in: the order is not paid')
      await expect.poll(() => mainStaff.locator('#stat-refused').innerText(), { timeout: 10_000 }).toBe('2')
      // Their own refusal by hand (in the feed by now: the staff feed shows it) raises no second alert.
      await expect.poll(() => mainStaff.locator('#feed tr[data-state="not_paid"]').count()).toBe(2)
      expect(await alert.count()).toBe(1)
      await shot(mainStaff, 'scanner-staff-not-paid-768')

      // ---- the event lets unpaid guests in: the same wristband opens the door ----
      expect(JSON.parse(await tapgate(['event', 'set', '--event', '1', '--admit-unpaid', 'yes']))).toMatchObject({ admitUnpaid: true })
      await tap(main, BANDS[1]!)
      await expect.poll(() => state(mainKiosk)).toBe('accepted')
    } finally {
      for (const ctx of contexts) await closeKioskContext(ctx)
    }
  })
})
