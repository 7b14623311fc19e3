import fs from 'node:fs'
import path from 'node:path'
import { expect, test } from 'vitest'
import { parseGuestList } from '../../src/attendees/parseGuestList.js'

// Issue 25 point 3: the payment state each tool writes, read as the tool means it (values from
// /work/research25: pretix's .po catalogues at bb0a6a80, Hi.Events' AttendeesExport).

const fixtures = path.join(import.meta.dirname, '../fixtures/attendees')
const lines = (name: string) => fs.readFileSync(path.join(fixtures, name), 'utf8').trim().split(/\r?\n/)
const paidOf = (csv: string) => parseGuestList(csv).entries.map((e) => e.paid)

test("pretix's order positions: Status pending in English and its five languages is not paid; paid and other words are", () => {
  const [header, row] = lines('pretix-positions.csv')
  const statuses = ['pending', 'ausstehend', 'en attente', 'pendiente', 'openstaand', 'in attesa', 'Pending', 'paid', 'Paid', 'bezahlt', 'Payé', 'pagado', 'betaald', 'pagato']
  const rows = statuses.map((status, i) => row!.replace(',Paid,', `,${status},`).replace(/u8m2kq4x7ts9hbnw3cyv6ea5rdpf2jgz/, `secret${i}`))
  expect(paidOf([header, ...rows].join('\n'))).toEqual(statuses.map((_, i) => i >= 7))
  // Cancelled and expired orders are skipped as before, not imported unpaid.
  const skipped = parseGuestList([header, row!.replace(',Paid,', ',Canceled,'), row!.replace(',Paid,', ',pending,').replace('u8m2', 'zzzz')].join('\n'))
  expect(skipped.skipped).toEqual([expect.objectContaining({ line: 2, reason: 'order canceled' })])
  expect(skipped.entries.map((e) => e.paid)).toEqual([false])
})

test("pretix's check-in list: Paid No/Nein/Non/Nee/No (es, it) is not paid, Yes/Ja/Oui/Sí/Sì paid", () => {
  const [header, row] = lines('pretix-checkin.csv')
  const words = ['No', 'Nein', 'Non', 'Nee', 'no', 'Yes', 'Ja', 'Oui', 'Si', 'Sì']
  const rows = words.map((word, i) => `${row!.replace('u8m2kq4x7ts9hbnw3cyv6ea5rdpf2jgz', `secret${i}`)},"${word}"`)
  expect(paidOf([`${header},"Paid"`, ...rows].join('\n'))).toEqual(words.map((_, i) => i >= 5))
  // A translated Paid header comes with the rest of the header in that language: translatedHeaders.test.ts.
  // Without the column the list holds paid orders only (pretix adds it when the list includes pending ones).
  expect(paidOf(lines('pretix-checkin.csv').join('\n'))).toEqual([true, true, true])
})

test('Hi.Events: AWAITING_PAYMENT is not paid, ACTIVE paid, CANCELLED skipped; the other tools list paid tickets', () => {
  const [header, chloe, tom, mei] = lines('hievents.csv')
  const list = parseGuestList([header, chloe, tom!.replace(',ACTIVE,', ',AWAITING_PAYMENT,'), mei].join('\n'))
  expect(list.entries.map((e) => [e.ticketCode, e.paid])).toEqual([['A-7KQ2M9X', true], ['A-P4ZT8WN', false]])
  expect(list.skipped).toHaveLength(1)
  for (const file of ['eventbrite.csv', 'luma.csv', 'tito.csv', 'pretix-checkin-nosecret.csv']) expect(new Set(paidOf(lines(file).join('\n')))).toEqual(new Set([true]))
})

test('--map paid=COL reads yes/no (our export), true/false, 1/0, paid/unpaid; empty is paid', () => {
  const csv = 'Guest,Code,Paid\nA,1,no\nB,2,yes\nC,3,FALSE\nD,4,1\nE,5,unpaid\nF,6,\n'
  expect(parseGuestList(csv, { map: 'name=Guest,ticket=Code,paid=Paid' }).entries.map((e) => e.paid)).toEqual([false, true, false, true, false, true])
  expect(parseGuestList(csv, { map: 'name=Guest,ticket=Code' }).entries.map((e) => e.paid)).toEqual([true, true, true, true, true, true])
})
