import { z } from 'zod'

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
export const PhygitalMetadata = z.looseObject({ ...base, media_gallery: z.array(MediaItem) })

/** Guestbook event metadata: media_gallery may be omitted; a version field may ride along. */
export const GuestbookMetadata = z.looseObject({
  ...base,
  media_gallery: z.array(MediaItem).optional(),
  service_metadata_version: z.union([z.string(), z.number()]).optional(),
})

export type PhygitalMetadataT = z.infer<typeof PhygitalMetadata>
export type GuestbookMetadataT = z.infer<typeof GuestbookMetadata>

/** The `metadata` request field: a string holding the JSON object. */
export const MetadataString = z
  .string()
  .max(64 * 1024)
  .meta({ description: 'JSON text of the metadata object (spec §2, token metadata)' })
