import { z } from 'zod'
import { ChipUid, IntId, Iso, Recipient, UidOut } from './common.js'
import { RedirectUrl } from './redirectUrl.js'

/** The tag of the endpoints a hosted-API app calls that tapgate's spec does not name (issue 26). */
export const HOSTED_TAG = 'hosted API compatibility'

const LinkedToken = z.object({ contractAddress: z.string(), chainId: z.number(), tokenId: z.string() })

// Length and case are judged by the tap verification, which gives the one refusal; here only "hex, present".
const Hex = (what: string, length: number) =>
  z
    .string()
    .regex(new RegExp(`^[0-9A-Fa-f]{1,${length}}$`), `Must be hex: the ${what}`)
    .meta({ description: `The chip URL's ${what}, ${length} hex digits as the chip wrote them` })

export const ChipFindQuery = z.object({
  e: Hex('encrypted PICCData', 48),
  c: Hex('SDMMAC', 16),
  d: z.string().max(64).optional().meta({ description: 'Accepted and ignored: not SDM file data (always 101 in hosted chip URLs)' }),
})

export const ChipFindResponse = z
  .object({
    uid: UidOut,
    isValidTap: z.boolean().meta({ description: 'true for a fresh tap (its counter is now spent); false for a URL already used' }),
    linkedToken: LinkedToken.nullable().meta({ description: "The chip's token, or null" }),
    ref: z.string().optional().meta({ description: 'The ref this tap minted (as a tap redirect carries it), on a fresh tap only' }),
  })
  .meta({ id: 'ChipFind' })

export const PatchChipsBody = z.object({
  tagUIDs: z.array(ChipUid).min(1).max(1000).meta({ description: "UIDs of the team's chips; all must be the team's or nothing changes" }),
  updates: z.object({ redirectUrl: RedirectUrl.nullable().meta({ description: 'An http(s) URL; null restores the default tap page' }) }),
})

export const PatchChipsResponse = z
  .object({
    success: z.literal(true),
    updated: z.number().meta({ description: 'How many chips were changed (a UID listed twice counts once)' }),
    chips: z.array(z.object({ uid: UidOut, redirectUrl: z.string().nullable() })),
  })
  .meta({ id: 'PatchChips' })

export const ItemParams = z.object({ id: IntId.meta({ description: "The item's id (its token's id)", example: 1 }) })

export const Item = z
  .object({
    id: z.number(),
    name: z.string(),
    description: z.string(),
    imageUrl: z.string().nullable(),
    attributes: z.array(z.object({ name: z.string(), values: z.array(z.string()) })),
    contract: z.object({ address: z.string(), chainId: z.number() }),
    tokenId: z.string(),
    createdAt: Iso,
  })
  .meta({ id: 'Item', description: "A phygital product: one of the team's tokens, its metadata and its contract" })
export const ItemList = z.array(Item)

export const ItemChip = z.object({ uid: UidOut, linkedToken: LinkedToken }).meta({ id: 'ItemChip' })
export const ItemChipList = z.array(ItemChip)

export const PoapMintBody = z.object({
  poapEventId: IntId.meta({ description: "The proof event's id at the attendance-token provider (proofEvents[].proofEventId of the ref)" }),
  recipient: Recipient,
  deviceId: z.string().max(200).optional().meta({ description: 'Accepted and ignored (hosted apps send the id of the phone)' }),
})
