import { z } from 'zod'
import { keySchemes } from '../db/chipProfiles.js'
import { IntId, Iso, Success } from './common.js'
import { MetadataObject } from './metadata.js'

/*
 * The console's products, chip profiles and chip import (issue 28, part 3): hidden from the OpenAPI
 * document like every /console/api route, validated and serialized through these. A 400 names the
 * body's field in `errors` (`metadata.image`, `line 3, uid`), which the console shows next to it.
 */

/** A chip linked to a product: its profile's name (null: none) and its last tap in the team's tap log. */
export const ConsoleProductChip = z.object({ uid: z.string(), profile: z.string().nullable(), lastTapAt: Iso.nullable() })

/**
 * Who holds the token on chain: `owned` with the address, `not_minted` (ownerOf reverts: not minted
 * yet, or its contract's deploy still queued), or `unknown` when the chain could not be asked.
 */
export const ConsoleProductOwner = z.object({ address: z.string().nullable(), state: z.enum(['owned', 'not_minted', 'unknown']) })

/** A phygital token of the team (the hosted API's item), as the Products tab shows it. */
export const ConsoleProduct = z.object({
  /** The token row's id: the item id of the hosted API. */
  id: z.number().int(),
  name: z.string(),
  description: z.string(),
  collection: z.string(),
  /** The metadata image as this gateway's own /media/<key> path; null when the metadata has no usable image. */
  imageUrl: z.string().nullable(),
  contract: z.object({ address: z.string(), chainId: z.number().int() }),
  tokenId: z.string(),
  chips: z.array(ConsoleProductChip),
  owner: ConsoleProductOwner,
  /** The stored metadata JSON, parsed ({} when none): the form edits its fields and sends it back whole. */
  metadata: z.record(z.string(), z.unknown()),
})
export const ConsoleProductsResponse = Success.extend({ products: z.array(ConsoleProduct) })
export const ConsoleProductResponse = Success.extend({ product: ConsoleProduct })
export const ConsoleProductParams = z.object({ id: IntId }).strict()

/** The whole metadata object, edited fields and the rest: PATCH /phygitals/metadata's rules apply (updateTokenMetadata). */
export const ConsoleProductMetadataBody = z.object({ metadata: MetadataObject }).strict()

/** A chip profile as `tapgate profile list` shows it, without its keys. */
export const ConsoleChipProfile = z.object({
  name: z.string(),
  scheme: z.enum(keySchemes),
  mode: z.enum(['aes', 'lrp']),
  urlTemplate: z.string().nullable(),
  /** The team's chips on this profile. */
  chips: z.number().int(),
})
export const ConsoleChipProfilesResponse = Success.extend({ profiles: z.array(ConsoleChipProfile) })

/** The file itself, as the body: a `tapgate import` JSON file or a CSV chip list; the route tells them apart by content type. */
export const ConsoleChipFile = z.unknown().meta({ description: 'A tapgate import file (application/json) or a chip list (text/csv)', type: 'string' })

/** `tapgate import`'s summary (importer/importData.ts ImportSummary): counts, never a key. */
export const ConsoleImportSummary = z.object({
  teams: z.array(z.object({ id: z.number().int(), name: z.string(), created: z.boolean() })),
  chipProfiles: z.number().int(),
  chips: z.number().int(),
  phygitalContracts: z.number().int(),
  deploys: z.number().int(),
  tokens: z.number().int(),
  proofEvents: z.number().int(),
  guestbookContracts: z.number().int(),
  guestbookEvents: z.number().int(),
})
/** `chips`: the chips the file listed (a CSV's data rows). */
export const ConsoleImportChipsResponse = Success.extend({ summary: ConsoleImportSummary, chips: z.number().int() })
