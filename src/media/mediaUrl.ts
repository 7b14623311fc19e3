import { createHash } from 'node:crypto'
import { imageTypeOf } from './imageType.js'

/**
 * Where an image URL from metadata is fetched from: the web (http/https), IPFS through the
 * configured gateway, or the URL itself (data:).
 */
export type MediaSource =
  | { kind: 'http'; url: URL }
  | { kind: 'ipfs'; path: string }
  | { kind: 'data'; contentType: string; base64: boolean; payload: string }

/** A media key: sha256 of the URL as metadata wrote it (trimmed), in hex. */
export const mediaKey = (url: string): string => createHash('sha256').update(url).digest('hex')

const KEY = /^[0-9a-f]{64}$/
/** Keys name files in <dataDir>/media: nothing but 64 hex digits may reach a path. */
export const isMediaKey = (key: string): boolean => KEY.test(key)

/** The source of a usable image URL, or null (empty, relative, another scheme, a data: URL that is not an image we show). */
export function parseMediaUrl(raw: string | null | undefined): MediaSource | null {
  const text = raw?.trim() ?? ''
  if (text === '') return null
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(text)?.[1]?.toLowerCase()
  if (scheme === 'http' || scheme === 'https') {
    if (!URL.canParse(text)) return null
    const url = new URL(text)
    // fetch refuses URLs with credentials; they have no place in public metadata anyway.
    return url.hostname === '' || url.username !== '' || url.password !== '' ? null : { kind: 'http', url }
  }
  if (scheme === 'ipfs') return parseIpfs(text)
  if (scheme === 'data') return parseData(text)
  return null
}

// ipfs://<cid>[/path], or the older ipfs://ipfs/<cid>[/path].
function parseIpfs(text: string): MediaSource | null {
  if (text.slice(0, 7).toLowerCase() !== 'ipfs://') return null
  const path = text.slice(7).replace(/^ipfs\//i, '')
  if (path === '' || /[\s\\]/.test(path)) return null
  // The path is appended to the gateway's: it must not climb out of it or name another host.
  const segments = path.split(/[?#]/)[0]!.split('/').map(safeDecode)
  if (segments[0] === '' || segments.some((s) => s === '.' || s === '..')) return null
  return { kind: 'ipfs', path }
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}

function parseData(text: string): MediaSource | null {
  const comma = text.indexOf(',')
  if (comma < 0) return null
  const header = text.slice('data:'.length, comma)
  const params = header.split(';').map((p) => p.trim().toLowerCase())
  const contentType = imageTypeOf(params[0])
  if (contentType === null) return null
  return { kind: 'data', contentType, base64: params.slice(1).includes('base64'), payload: text.slice(comma + 1) }
}

/** The https URL an ipfs:// path is fetched from. */
export function ipfsGatewayUrl(gateway: string, path: string): URL {
  return new URL(gateway.endsWith('/') ? gateway + path : `${gateway}/${path}`)
}

/** The bytes of a data: URL: base64, or percent-encoded bytes. */
export function decodeDataPayload(source: Extract<MediaSource, { kind: 'data' }>): Buffer {
  const bytes = percentDecode(source.payload)
  return source.base64 ? Buffer.from(bytes.toString('latin1').replace(/\s+/g, ''), 'base64') : bytes
}

// %XX is one byte; everything else is its UTF-8 (an SVG written inline, unescaped).
function percentDecode(text: string): Buffer {
  return Buffer.concat(
    text.split(/(%[0-9a-fA-F]{2})/).map((part) => (/^%[0-9a-fA-F]{2}$/.test(part) ? Buffer.of(Number.parseInt(part.slice(1), 16)) : Buffer.from(part, 'utf8'))),
  )
}
