import type { Cell, Columns } from './csvColumns.js'
import type { CsvRow } from './readCsv.js'
import {
  HIEVENTS_HEADERS,
  type HeaderTable,
  LANGUAGE_NAMES,
  type Language,
  PRETIX_CHECKIN_HEADERS,
  PRETIX_NO,
  PRETIX_POSITIONS_HEADERS,
  PRETIX_STATUS,
  PRETIX_YES,
  signatureLanguage,
  translatedColumns,
} from './toolHeaders.js'

/**
 * A guest as a row of some tool's export says it, before validation: each value with the column it
 * came from, so a bad value is reported as "line 7, column Email".
 */
export type RawAttendee = {
  line: number
  name: Cell
  email: Cell | null
  ticket: Cell
  type: Cell | null
  chip: Cell | null
  wallet: Cell | null
  /** A wallet the guest typed into the tool (Luma's eth_address): used when it is an address, else only warned about. */
  walletIsOptional?: boolean
  note: Cell | null
  /** null: the file has no such column (a re-import keeps what is stored). */
  needsAttention: boolean | null
  /** Why the tool's own status says this ticket admits no one (cancelled, void, declined…); null: import it. */
  skip: string | null
  /**
   * The tool lists admission tickets nobody has named yet (pretix, Tito): an empty name imports the
   * guest nameless, flagged for staff, instead of refusing the file.
   */
  nameOptional?: boolean
  /**
   * Whether the order is paid (issue 25): the tool's own word (pretix pending, the check-in list's Paid
   * No, Hi.Events AWAITING_PAYMENT: false), or the cell of a `--map paid=` column, read as yes/no with the
   * row's other checks. Undefined: the tool lists only paid tickets.
   */
  paid?: boolean | Cell
}

export type FormatId = 'pretix-checkin' | 'pretix-positions' | 'eventbrite' | 'luma' | 'hievents' | 'tito' | 'map'

export type GuestListFormat = {
  id: FormatId
  label: string
  /** Headers that must all be present; a group of several is satisfied by any one of them. */
  signature: readonly (readonly string[])[]
  /** The headers in the languages the tool exports in, by their English names (toolHeaders.ts); none: English only. */
  headers?: HeaderTable
  read(columns: Columns, rows: readonly CsvRow[]): RawAttendee[]
  /**
   * Rows whose codes depend on each other (a pretix order's tickets without their secrets): what keeps
   * them in one call of `read` when an import reads the file a chunk of rows at a time.
   */
  keepTogether?(columns: Columns): ((row: CsvRow) => string) | null
}

// Columns a file of any format may carry besides the tool's own (added by the organiser in a sheet).
const CHIP_COLUMNS = ['chip', 'chip uid', 'chip_uid']
const WALLET_COLUMNS = ['wallet', 'wallet address']

const present = (cell: Cell): Cell | null => (cell.value === '' ? null : cell)

/** `first last`, named after both columns: where a tool has only name parts. */
export function joinName(first: Cell, last: Cell): Cell {
  return { value: [first.value, last.value].filter((part) => part !== '').join(' '), column: `${first.column} + ${last.column}` }
}

const extras = (c: Columns, row: CsvRow) => ({ chip: present(c.cell(row, ...CHIP_COLUMNS)), wallet: present(c.cell(row, ...WALLET_COLUMNS)) })

const oneOf = (words: readonly string[]) => {
  const set = new Set(words.map((word) => word.toLowerCase()))
  return (value: string) => set.has(value.trim().toLowerCase())
}
// A sheet re-saved by a spreadsheet may have made them TRUE/FALSE or 1/0.
const isPretixYes = oneOf([...PRETIX_YES, 'true', '1'])
const isPretixNo = oneOf([...PRETIX_NO, 'false', '0'])
const isPretixPending = oneOf(PRETIX_STATUS.pending)
const isPretixExpired = oneOf(PRETIX_STATUS.expired)
const isPretixCanceled = oneOf(PRETIX_STATUS.canceled)

/*
 * pretix writes Yes/No and the order status translated into the event's language (gettext at export,
 * locale/<lang>/LC_MESSAGES/django.po at bb0a6a80; toolHeaders.ts, docs/decisions.md issue 25). The
 * positions sheet's Status (base/models/orders.py STATUS_CHOICE, or "canceled" for a cancelled position);
 * the check-in list's Paid column (only there when the list includes pending orders): Yes/No.
 */

// pretix writes its exports through defusedcsv: a cell starting with @ + - = | % arrives as '-Ann, and | as \|.
const pretixCell = (cell: Cell): Cell =>
  /^'[@+\-=|%]/.test(cell.value) ? { ...cell, value: cell.value.slice(1).replaceAll('\\|', '|') } : cell

function pretixName(c: Columns, row: CsvRow): Cell {
  const full = c.cell(row, 'Attendee name')
  if (full.value !== '') return pretixCell(full)
  return pretixCell(joinName(c.cell(row, 'Attendee name: Given name'), c.cell(row, 'Attendee name: Family name')))
}

/**
 * pretix check-in list (`checkinlists/exporters.py`, CSVCheckinList). The ticket code is the QR
 * code's `Secret`, a column only there when "Include QR-code secret" was ticked; without it, the order
 * code, and for an order of several tickets the order code and the ticket's place among the order's
 * rows in the file (`Q7PFR-2`): the same file gives the same codes, a reordered one may not.
 */
const pretixCheckin: GuestListFormat = {
  id: 'pretix-checkin',
  label: 'pretix check-in list',
  signature: [['Order code'], ['Attendee name'], ['Product'], ['Checked in']],
  headers: PRETIX_CHECKIN_HEADERS,
  keepTogether: (c) => (c.has('Secret') ? null : (row) => c.cell(row, 'Order code').value),
  read(c, rows) {
    const hasSecret = c.has('Secret')
    const attention = c.find('Requires special attention')
    const perOrder = new Map<string, number>()
    if (!hasSecret) for (const row of rows) perOrder.set(c.cell(row, 'Order code').value, (perOrder.get(c.cell(row, 'Order code').value) ?? 0) + 1)
    const seen = new Map<string, number>()
    return rows.map((row) => {
      let ticket = c.cell(row, 'Secret')
      if (!hasSecret) {
        const order = c.cell(row, 'Order code')
        const n = (seen.get(order.value) ?? 0) + 1
        seen.set(order.value, n)
        ticket = order.value !== '' && (perOrder.get(order.value) ?? 0) > 1 ? { value: `${order.value}-${n}`, column: order.column } : order
      }
      return {
        line: row.line,
        name: pretixName(c, row),
        email: present(pretixCell(c.cell(row, 'Email', 'E-mail'))),
        ticket: pretixCell(ticket),
        type: present(pretixCell(c.cell(row, 'Product'))),
        note: present(pretixCell(c.cell(row, 'Comment'))),
        needsAttention: attention === undefined ? null : isPretixYes(c.cell(row, attention).value),
        skip: isPretixYes(c.cell(row, 'Blocked').value) ? 'blocked in pretix' : null,
        paid: !isPretixNo(c.cell(row, 'Paid').value),
        // The list falls back to the invoice name, which may be empty: still a ticket that admits someone.
        nameOptional: true,
        ...extras(c, row),
      }
    })
  },
}

/**
 * pretix "Order data", sheet "Order positions" (`base/exporters/orderlist.py`): one row per position,
 * which includes products that admit no one (merch, a parking spot, an add-on) and carry no attendee.
 * The sheet has no "admission" column, so a position is taken for such a product when it has neither
 * an attendee name nor an attendee email and either is an add-on (`Add-on to position ID`) or another
 * position of its order has a name (the event asks for names, and this one was not asked). A nameless
 * position of an order where no position has a name is a ticket: imported, flagged for staff.
 */
const pretixPositions: GuestListFormat = {
  id: 'pretix-positions',
  label: 'pretix order positions',
  signature: [['Event slug'], ['Order code'], ['Position ID'], ['Attendee name'], ['Attendee email']],
  headers: PRETIX_POSITIONS_HEADERS,
  keepTogether: (c) => (row) => c.cell(row, 'Order code').value,
  read(c, rows) {
    const attendeeEmail = (row: CsvRow) => pretixCell(c.cell(row, 'Attendee email')).value
    const named = new Set<string>()
    for (const row of rows) if (pretixName(c, row).value !== '') named.add(c.cell(row, 'Order code').value)
    return rows.map((row) => {
      const secret = c.cell(row, 'Ticket secret')
      const order = c.cell(row, 'Order code')
      const position = c.cell(row, 'Position ID')
      const product = pretixCell(c.cell(row, 'Product'))
      const variation = pretixCell(c.cell(row, 'Variation')).value
      const status = c.cell(row, 'Status').value
      const name = pretixName(c, row)
      const addOnTo = c.cell(row, 'Add-on to position ID').value
      const noAttendee = name.value === '' && attendeeEmail(row) === ''
      const skip =
        /cancel|expired/i.test(status) || isPretixCanceled(status) || isPretixExpired(status)
          ? `order ${status.toLowerCase()}`
          : isPretixYes(c.cell(row, 'Blocked').value)
            ? 'blocked in pretix'
            : noAttendee && addOnTo !== ''
              ? `add-on to position ${addOnTo} without an attendee (${product.value || 'a product'}): admits no one`
              : noAttendee && named.has(order.value)
                ? `no attendee (${product.value || 'a product'}), while order ${order.value}'s tickets have names: a product that admits no one`
                : null
      return {
        line: row.line,
        name,
        // The buyer's address when the ticket has none of its own: pretix mails the buyer then too.
        email: present(pretixCell(c.cell(row, 'Attendee email'))) ?? present(pretixCell(c.cell(row, 'Email', 'E-mail'))),
        ticket: pretixCell(secret.value !== '' ? secret : { value: order.value && position.value ? `${order.value}-${position.value}` : '', column: `${order.column} + ${position.column}` }),
        type: present(variation === '' ? product : { value: `${product.value} – ${variation}`, column: product.column }),
        note: present(pretixCell(c.cell(row, 'Order comment'))),
        needsAttention: null,
        skip,
        paid: !isPretixPending(status),
        nameOptional: true,
        ...extras(c, row),
      }
    })
  },
}

/**
 * Eventbrite attendee report (US and UK headers). Without a `Barcode #` column (a report may add it),
 * the ticket's barcode is the order number, the attendee number and `001` (derived from Eventbrite's
 * API documentation, not confirmed by an export), which is what a scanner types at the door.
 */
const eventbrite: GuestListFormat = {
  id: 'eventbrite',
  label: 'Eventbrite attendee report',
  signature: [['Order #', 'Order no.'], ['Attendee #', 'Attendee no.'], ['Ticket Type'], ['Attendee Status']],
  read: (c, rows) =>
    rows.map((row) => {
      const order = c.cell(row, 'Order #', 'Order no.')
      const attendee = c.cell(row, 'Attendee #', 'Attendee no.')
      const status = c.cell(row, 'Attendee Status').value
      const barcode = c.cell(row, 'Barcode #', 'Barcode')
      return {
        line: row.line,
        name: joinName(c.cell(row, 'First Name'), c.cell(row, 'Last Name', 'Surname')),
        email: present(c.cell(row, 'Email')),
        ticket:
          barcode.value !== ''
            ? barcode
            : order.value === ''
              ? order
              : attendee.value === ''
                ? attendee
                : { value: `${order.value}${attendee.value}001`, column: `${order.column} + ${attendee.column}` },
        type: present(c.cell(row, 'Ticket Type')),
        note: null,
        needsAttention: null,
        skip: /not attending|refund|cancel|delet|transfer/i.test(status) ? status.toLowerCase() : null,
        ...extras(c, row),
      }
    }),
}

/** The key Luma's check-in QR carries (`…/check-in/evt-…?pk=KEY`); null when the cell is no such URL. */
function lumaKey(url: string): string | null {
  try {
    return new URL(url).searchParams.get('pk') || null
  } catch {
    return null
  }
}

/**
 * Luma guest export. The ticket code is the `pk` of `qr_code_url` (the ticket key: Luma's help says the
 * CSV carries ticket keys), else the guest's `api_id`/`guest_id`. Only approved guests are let in.
 */
const luma: GuestListFormat = {
  id: 'luma',
  label: 'Luma guest list',
  signature: [['api_id', 'guest_id'], ['approval_status'], ['qr_code_url'], ['ticket_name']],
  read: (c, rows) =>
    rows.map((row) => {
      const qr = c.cell(row, 'qr_code_url')
      const key = lumaKey(qr.value)
      const name = c.cell(row, 'name')
      const status = c.cell(row, 'approval_status').value
      const wallet = present(c.cell(row, ...WALLET_COLUMNS)) ?? present(c.cell(row, 'eth_address'))
      return {
        line: row.line,
        name: name.value !== '' ? name : joinName(c.cell(row, 'first_name'), c.cell(row, 'last_name')),
        email: present(c.cell(row, 'email')),
        ticket: key !== null ? { value: key, column: qr.column } : c.cell(row, 'api_id', 'guest_id'),
        type: present(c.cell(row, 'ticket_name')),
        note: null,
        needsAttention: null,
        skip: status !== '' && status.toLowerCase() !== 'approved' ? `approval status ${status}` : null,
        chip: present(c.cell(row, ...CHIP_COLUMNS)),
        wallet,
        walletIsOptional: wallet?.column === c.find('eth_address'),
      }
    }),
}

/**
 * Hi.Events attendees (its export is .xlsx, or that sheet saved as CSV). The QR code is the `Public ID`.
 * The product is `Product Name` (since Feb 2025, translated), `Ticket Name` (Dec 2024 – Feb 2025), or
 * before that only its `Ticket ID`.
 */
const hiEvents: GuestListFormat = {
  id: 'hievents',
  label: 'Hi.Events attendees',
  signature: [['First Name'], ['Last Name'], ['Public ID'], ['Short ID'], ['Product Name', 'Ticket ID']],
  headers: HIEVENTS_HEADERS,
  read: (c, rows) =>
    rows.map((row) => {
      const product = present(c.cell(row, 'Product Name')) ?? present(c.cell(row, 'Ticket Name'))
      const ticketId = c.cell(row, 'Ticket ID')
      const status = c.cell(row, 'Status').value
      return {
        line: row.line,
        name: joinName(c.cell(row, 'First Name'), c.cell(row, 'Last Name')),
        email: present(c.cell(row, 'Email')),
        ticket: c.cell(row, 'Public ID'),
        type: product ?? (ticketId.value === '' ? null : { value: `Ticket ${ticketId.value}`, column: ticketId.column }),
        note: present(c.cell(row, 'Notes')),
        needsAttention: null,
        skip: /cancel/i.test(status) ? status.toLowerCase() : null,
        // Written raw, never translated (AttendeeStatus enum): ACTIVE, AWAITING_PAYMENT, CANCELLED.
        paid: status.toUpperCase() !== 'AWAITING_PAYMENT',
        ...extras(c, row),
      }
    }),
}

/** Tito tickets export. The ticket code is the `Ticket Reference` (`GIAO-1`); a void ticket is skipped. */
const tito: GuestListFormat = {
  id: 'tito',
  label: 'Tito tickets',
  signature: [['Ticket Reference'], ['Ticket Full Name'], ['Unique Ticket URL'], ['Void Status']],
  read: (c, rows) =>
    rows.map((row) => {
      const full = c.cell(row, 'Ticket Full Name')
      const voided = c.cell(row, 'Void Status').value
      return {
        line: row.line,
        name: full.value !== '' ? full : joinName(c.cell(row, 'Ticket First Name'), c.cell(row, 'Ticket Last Name')),
        email: present(c.cell(row, 'Ticket Email')),
        ticket: c.cell(row, 'Ticket Reference'),
        type: present(c.cell(row, 'Ticket')),
        note: null,
        needsAttention: null,
        skip: voided !== '' && !/^(no|false|0)$/i.test(voided) ? `void (${voided})` : null,
        // A ticket the buyer has not assigned yet has no name: it still admits someone.
        nameOptional: true,
        ...extras(c, row),
      }
    }),
}

/** The tools whose exports are read without options, in the order they are tried. */
export const GUEST_LIST_FORMATS: readonly GuestListFormat[] = [pretixPositions, pretixCheckin, eventbrite, luma, hiEvents, tito]

export type DetectedFormat = { format: GuestListFormat; columns: Columns; language: Language }

/**
 * The tool that wrote a header row, and the language of its headers, from its column names alone. The
 * columns answer the English names the tool's reader asks for.
 *
 * @example
 * detectFormat(columnsOf(['Bestellnummer', 'Name Teilnehmer*in', 'Produkt', 'Eingecheckt']))?.language // 'de'
 */
export function detectFormat(columns: Columns): DetectedFormat | undefined {
  for (const format of GUEST_LIST_FORMATS) {
    const language = format.headers ? signatureLanguage(columns, format.headers, format.signature) : format.signature.every((names) => columns.has(...names)) ? 'en' : undefined
    if (language === undefined) continue
    const label = language === 'en' ? format.label : `${format.label} (${LANGUAGE_NAMES[language]})`
    return { format: { ...format, label }, columns: format.headers ? translatedColumns(columns, format.headers, language) : columns, language }
  }
  return undefined
}
