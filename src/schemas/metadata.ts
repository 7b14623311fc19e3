import { z } from 'zod'

/**
 * How deep metadata may nest, the metadata object itself being level 1. Real metadata nests three or
 * four levels; a bound keeps every later step (storing it as text, serving it) off a deep recursion.
 */
export const MAX_METADATA_DEPTH = 32
const tooDeep = `Metadata may nest objects and arrays at most ${MAX_METADATA_DEPTH} levels deep`

/**
 * The deepest nesting of JSON text, read without parsing it (brackets inside strings are text), and
 * given up on past `limit`: the request schema can refuse the text before anything walks its tree.
 */
export function jsonTextDepth(text: string, limit = Infinity): number {
  let depth = 0
  let max = 0
  let inString = false
  for (let i = 0; i < text.length && max <= limit; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c) i++ // a backslash: the next character is escaped, a quote included
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x7b || c === 0x5b) max = Math.max(max, ++depth)
    else if (c === 0x7d || c === 0x5d) depth--
  }
  return max
}

/** Whether a parsed value nests deeper than `limit`, walked with a stack of its own rather than the call stack. */
function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 1]]
  for (let next = stack.pop(); next; next = stack.pop()) {
    const [node, depth] = next
    if (typeof node !== 'object' || node === null) continue
    if (depth > limit) return true
    for (const child of Object.values(node)) stack.push([child, depth + 1])
  }
  return false
}

/** Metadata objects given as JSON (the import file) rather than as text are bounded the same way. */
const boundedDepth = (value: unknown) => !nestsDeeperThan(value, MAX_METADATA_DEPTH)

const Attribute = z.looseObject({
  trait_type: z.string(),
  value: z.union([z.string(), z.number()]),
  display_type: z.string().optional(),
})

const MediaItem = z.looseObject({
  media: z.url(),
  type: z.string().regex(/^[\w.+-]+\/[\w.+-]+$/, 'Must be a MIME type such as image/png'),
})

// The spec lets required strings be empty, image included ("" = no image yet).
const ImageUrl = z.string().refine((s) => s === '' || URL.canParse(s), 'Must be a URL (or empty)')

const base = {
  name: z.string(),
  collection: z.string(),
  description: z.string(),
  image: ImageUrl,
  attributes: z.array(Attribute),
}

/** Token metadata (spec §2). Unknown fields are kept, as the spec requires. */
export const PhygitalMetadata = z.looseObject({ ...base, media_gallery: z.array(MediaItem) }).refine(boundedDepth, tooDeep)

/** Guestbook event metadata: media_gallery may be omitted; a version field may ride along. */
export const GuestbookMetadata = z
  .looseObject({
    ...base,
    media_gallery: z.array(MediaItem).optional(),
    service_metadata_version: z.union([z.string(), z.number()]).optional(),
  })
  .refine(boundedDepth, tooDeep)

export type PhygitalMetadataT = z.infer<typeof PhygitalMetadata>
export type GuestbookMetadataT = z.infer<typeof GuestbookMetadata>

/**
 * Metadata sent as a JSON object rather than as text (the console's PATCH): any object, bounded as deep
 * as MetadataString bounds its text, so nothing later walks it on the call stack. The fields are
 * PhygitalMetadata's to check, as for the text.
 */
export const MetadataObject = z.record(z.string(), z.unknown()).refine(boundedDepth, tooDeep)

/** The `metadata` request field: a string holding the JSON object. */
export const MetadataString = z
  .string()
  .max(64 * 1024)
  .refine((text) => jsonTextDepth(text, MAX_METADATA_DEPTH) <= MAX_METADATA_DEPTH, tooDeep)
  .meta({ description: 'JSON text of the metadata object (spec §2, token metadata)' })
