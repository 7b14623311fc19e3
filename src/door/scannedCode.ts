/*
 * What a USB scanner types into a field (it is a keyboard: the QR code's or barcode's text, then Enter)
 * turned into the ticket codes the guest list may know. Shared by the gateway (the staff API's bind and
 * search) and the staff page (which checks the search's answer against the same codes), so both read a
 * scan alike; it imports nothing, so the browser bundle can take it.
 */

// A scanner sends no control characters of a code, but a badly set one may add a tab or a CR before
// Enter; a ticket code never holds one (the import refuses them).
const CONTROL = /[\u0000-\u001f\u007f]/g

/**
 * The ticket codes a scanned or typed text may stand for, the text itself first (an exact code, as the
 * import stored it: case kept), then what each tool's QR payload carries:
 * - Luma: the QR holds the whole check-in URL, `https://lu.ma/check-in/<event>?pk=<key>` (luma.com alike),
 *   and the import keeps the `pk` of `qr_code_url` as the code (guestListFormats.ts): its `pk`.
 * - pretix: the QR holds the ticket secret itself, the import's code: as is.
 * - Hi.Events: the QR holds the attendee's public ID (`A-7KQ2M9X`; frontend AttendeeTicket:
 *   `value={String(attendee.public_id)}`), the import's code: as is.
 * - Eventbrite: the barcode's digits (order, attendee, `001`, as the import derives it, or its
 *   `Barcode #` column): as is.
 * Tito's and other URLs name no code we can vouch for, so a URL without `pk` is only looked up whole.
 *
 * @example
 * ticketCodeCandidates(' https://lu.ma/check-in/evt-NKX?pk=k7Qx2pLm\r') // ['https://lu.ma/check-in/evt-NKX?pk=k7Qx2pLm', 'k7Qx2pLm']
 * ticketCodeCandidates('A-7KQ2M9X') // ['A-7KQ2M9X']
 */
export function ticketCodeCandidates(input: string): string[] {
  const text = input.replace(CONTROL, '').trim()
  if (text === '') return []
  const candidates = [text]
  const url = httpUrl(text)
  const key = url?.searchParams.get('pk')?.trim()
  if (key) candidates.push(key)
  return [...new Set(candidates)]
}

/** The text as an http(s) URL, or null: only a scheme a QR code's link has (no `javascript:`, no `mailto:`). */
function httpUrl(text: string): URL | null {
  if (!/^https?:\/\//i.test(text)) return null
  try {
    return new URL(text)
  } catch {
    return null
  }
}
