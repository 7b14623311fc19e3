/**
 * Where the URI text starts in an NTAG 424 DNA NDEF file holding one short URI
 * record: NLEN (2 bytes), D1 (MB ME SR, TNF 1), type length 01, payload length,
 * type 55 ('U'), the URI identifier code, then the URI. The chip's SDM offsets
 * count from byte 0 of that file, so a field at offset N sits N - 7 characters into the stored URI.
 */
export const NDEF_URI_TEXT_OFFSET = 7

/**
 * The NFC Forum URI record identifier codes (URI RTD 1.0 §3.2.2): the chip stores
 * the code instead of the prefix, so the prefix's characters are not counted in the offsets.
 */
export const NDEF_URI_PREFIXES: readonly string[] = [
  '',
  'http://www.',
  'https://www.',
  'http://',
  'https://',
  'tel:',
  'mailto:',
  'ftp://anonymous:anonymous@',
  'ftp://ftp.',
  'ftps://',
  'sftp://',
  'smb://',
  'nfs://',
  'ftp://',
  'dav://',
  'news:',
  'telnet://',
  'imap:',
  'rtsp://',
  'urn:',
  'pop:',
  'sip:',
  'sips:',
  'tftp:',
  'btspp://',
  'btl2cap://',
  'btgoep://',
  'tcpobex://',
  'irdaobex://',
  'file://',
  'urn:epc:id:',
  'urn:epc:tag:',
  'urn:epc:pat:',
  'urn:epc:raw:',
  'urn:epc:',
  'urn:nfc:',
]

export type NdefUriPrefix = { code: number; prefix: string }

/** The codes provisioning tools pick for web URLs, longest first. */
const WEB_CODES = [0x02, 0x01, 0x04, 0x03] as const

/**
 * The URI identifier code a chip's record uses for `url`: the given code, or by
 * default the longest of 0x01–0x04 ("http://www.", "https://www.", "http://",
 * "https://") the URL starts with, else 0x00 (the whole URI stored, e.g. `lnurlw://`).
 *
 * @returns the code and its prefix, or null when `code` is given and the URL does not start with its prefix
 * @throws RangeError when `code` is not a URI identifier code (0x00–0x23)
 * @example
 * ndefUriPrefix('https://example.com/?e=…') // { code: 4, prefix: 'https://' }
 * ndefUriPrefix('https://example.com/?e=…', 0) // { code: 0, prefix: '' }
 */
export function ndefUriPrefix(url: string, code?: number): NdefUriPrefix | null {
  if (code !== undefined) {
    const prefix = Number.isInteger(code) ? NDEF_URI_PREFIXES[code] : undefined
    if (prefix === undefined) throw new RangeError(`a URI identifier code is 0x00–0x${(NDEF_URI_PREFIXES.length - 1).toString(16)}`)
    return url.startsWith(prefix) ? { code, prefix } : null
  }
  for (const c of WEB_CODES) if (url.startsWith(NDEF_URI_PREFIXES[c]!)) return { code: c, prefix: NDEF_URI_PREFIXES[c]! }
  return { code: 0, prefix: '' }
}

/**
 * Formats a URI identifier code as the operator sees it in provisioning tools.
 *
 * @example
 * describeUriPrefix({ code: 4, prefix: 'https://' }) // '0x04 ("https://")'
 */
export function describeUriPrefix(p: NdefUriPrefix): string {
  return `0x${p.code.toString(16).padStart(2, '0').toUpperCase()} (${p.prefix === '' ? 'no prefix' : JSON.stringify(p.prefix)})`
}
