import fs from 'node:fs'
import { describe, expect, test } from 'vitest'
import { parseGuestList } from '../../src/attendees/parseGuestList.js'
import { ticketCodeCandidates } from '../../src/door/scannedCode.js'

// Issue 25 point 4: what each tool's QR code or barcode makes a USB scanner type, and the codes it names.

const fixture = (name: string) => fs.readFileSync(new URL(`../fixtures/attendees/${name}`, import.meta.url))

describe('ticketCodeCandidates', () => {
  test("a Luma QR (the whole check-in URL, lu.ma or luma.com) names its pk, the code Luma's export imports as", () => {
    expect(ticketCodeCandidates('https://lu.ma/check-in/evt-NKXctR3fMVfX24o?pk=k7Qx2pLm')).toEqual(['https://lu.ma/check-in/evt-NKXctR3fMVfX24o?pk=k7Qx2pLm', 'k7Qx2pLm'])
    expect(ticketCodeCandidates('HTTPS://luma.com/check-in/evt-1?utm=x&pk=Zt8wQ1nc')).toEqual(['HTTPS://luma.com/check-in/evt-1?utm=x&pk=Zt8wQ1nc', 'Zt8wQ1nc'])
    // Every Luma QR in the fixture gives the code its row was imported with.
    const list = parseGuestList(fixture('luma.csv'))
    const urls = fs.readFileSync(new URL('../fixtures/attendees/luma.csv', import.meta.url), 'utf8').match(/https:\/\/luma\.com\/check-in\/[^,]+/g)!
    for (const entry of list.entries) expect(urls.some((url) => ticketCodeCandidates(url).includes(entry.ticketCode))).toBe(true)
  })

  test("pretix's secret, Hi.Events' public ID and Eventbrite's barcode digits are the code as is", () => {
    expect(ticketCodeCandidates('u8m2kq4x7ts9hbnw3cyv6ea5rdpf2jgz')).toEqual(['u8m2kq4x7ts9hbnw3cyv6ea5rdpf2jgz'])
    expect(ticketCodeCandidates('A-7KQ2M9X')).toEqual(['A-7KQ2M9X'])
    expect(ticketCodeCandidates('1121198721318441700883001')).toEqual(['1121198721318441700883001'])
    expect(ticketCodeCandidates('GIAO-1')).toEqual(['GIAO-1'])
  })

  test("what a scanner adds around the code (spaces, a tab, a CR before Enter) goes; case stays; nothing is nothing", () => {
    expect(ticketCodeCandidates('  A-7KQ2M9X\r\n')).toEqual(['A-7KQ2M9X'])
    expect(ticketCodeCandidates('\thttps://lu.ma/check-in/evt-1?pk=k7Qx2pLm\r')).toEqual(['https://lu.ma/check-in/evt-1?pk=k7Qx2pLm', 'k7Qx2pLm'])
    expect(ticketCodeCandidates('a-7kq2m9x')).toEqual(['a-7kq2m9x'])
    expect(ticketCodeCandidates('   ')).toEqual([])
    expect(ticketCodeCandidates('')).toEqual([])
  })

  test('a URL without pk, an empty pk, another scheme or a broken URL is looked up whole, nothing more', () => {
    expect(ticketCodeCandidates('https://ti.to/acme/conf/tickets/ti_abc')).toEqual(['https://ti.to/acme/conf/tickets/ti_abc'])
    expect(ticketCodeCandidates('https://lu.ma/check-in/evt-1?pk=')).toEqual(['https://lu.ma/check-in/evt-1?pk='])
    expect(ticketCodeCandidates('javascript:alert(1)?pk=x')).toEqual(['javascript:alert(1)?pk=x'])
    expect(ticketCodeCandidates('https://[broken?pk=x')).toEqual(['https://[broken?pk=x'])
    // pk=k7Qx2pLm as plain text is no URL: a code that happens to hold "pk=" is taken as it is.
    expect(ticketCodeCandidates('pk=k7Qx2pLm')).toEqual(['pk=k7Qx2pLm'])
  })
})
