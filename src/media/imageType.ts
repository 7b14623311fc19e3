/** The image types the kiosk and the phone page show. SVG is served sandboxed (routes/media.ts). */
export const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/avif', 'image/svg+xml'] as const
export type ImageType = (typeof IMAGE_TYPES)[number]

const allowed: ReadonlySet<string> = new Set(IMAGE_TYPES)
// Names servers use for the same formats.
const aliases: Record<string, ImageType> = { 'image/jpg': 'image/jpeg', 'image/pjpeg': 'image/jpeg' }
// A server that does not know what it sends: the bytes may still be an image (raster only, see sniffRaster).
const unlabelled = new Set(['', 'application/octet-stream', 'binary/octet-stream'])

/** The media type of a Content-Type header or a data: URL's header, lower case, without parameters. */
export function mediaTypeOf(header: string | null | undefined): string {
  return (header ?? '').split(';')[0]!.trim().toLowerCase()
}

/** An allowed image type (aliases resolved), or null. */
export function imageTypeOf(header: string | null | undefined): ImageType | null {
  const type = mediaTypeOf(header)
  if (allowed.has(type)) return type as ImageType
  return aliases[type] ?? null
}

const startsWith = (bytes: Uint8Array, magic: readonly number[], at = 0) => magic.every((b, i) => bytes[at + i] === b)
const ascii = (bytes: Uint8Array, from: number, to: number) => Buffer.from(bytes.subarray(from, to)).toString('latin1')

/** The raster format the bytes' magic number names, or null. */
export function sniffRaster(bytes: Uint8Array): Exclude<ImageType, 'image/svg+xml'> | null {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png'
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return 'image/jpeg'
  const head = ascii(bytes, 0, 6)
  if (head === 'GIF87a' || head === 'GIF89a') return 'image/gif'
  if (ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 12) === 'WEBP') return 'image/webp'
  if (ascii(bytes, 4, 8) === 'ftyp' && isAvifBox(bytes)) return 'image/avif'
  return null
}

// An ISO-BMFF ftyp box whose major or a compatible brand is avif/avis (HEIC and MP4 are not).
function isAvifBox(bytes: Uint8Array): boolean {
  const size = Math.min(((bytes[0]! << 24) | (bytes[1]! << 16) | (bytes[2]! << 8) | bytes[3]!) >>> 0, bytes.length, 256)
  for (let at = 8; at + 4 <= size; at += at === 8 ? 8 : 4) {
    const brand = ascii(bytes, at, at + 4)
    if (brand === 'avif' || brand === 'avis') return true
  }
  return false
}

/**
 * SVG has no magic number: markup that opens with `<` (an XML declaration, a comment, a doctype or
 * the element itself) and has an `<svg` element near the start. Compressed SVG (svgz) is refused.
 */
function looksLikeSvg(bytes: Uint8Array): boolean {
  const text = Buffer.from(bytes.subarray(0, 4096)).toString('utf8').replace(/^\uFEFF/, '').trimStart()
  return text.startsWith('<') && /<svg[\s>/]/i.test(text)
}

export type ImageCheck = { ok: true; type: ImageType } | { ok: false; reason: string }

/**
 * Decides what the bytes are served as. The declared type must be an image type we show (or none
 * at all, for a raster image); where the format has a magic number, the bytes must carry one, and
 * the type served is always the one the bytes name, so a mislabelled JPEG still shows.
 */
export function checkImage(declared: string | null | undefined, bytes: Uint8Array): ImageCheck {
  const type = imageTypeOf(declared)
  const sniffed = sniffRaster(bytes)
  if (type === null) {
    if (unlabelled.has(mediaTypeOf(declared)) && sniffed) return { ok: true, type: sniffed }
    return { ok: false, reason: `Not an image type the kiosk shows: ${mediaTypeOf(declared) || 'no content type'}` }
  }
  if (sniffed) return { ok: true, type: sniffed }
  if (type === 'image/svg+xml' && looksLikeSvg(bytes)) return { ok: true, type }
  return { ok: false, reason: `The bytes are not the ${type} the server declared` }
}
