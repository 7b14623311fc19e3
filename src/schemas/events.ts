import { z } from 'zod'
import { Address, ChainId, ChipUid, IntId, Iso, Recipient, Success, TokenId } from './common.js'
import { MetadataString } from './metadata.js'

export const GuestbookContract = z
  .object({
    id: z.number(),
    name: z.string(),
    symbol: z.string(),
    address: z.string().nullable().meta({ description: 'null while the deployment is pending' }),
    chainId: z.number(),
    createdAt: Iso,
    status: z.enum(['pending', 'confirmed']),
  })
  .meta({ id: 'GuestbookContract' })

export const GuestbookContractList = z.array(GuestbookContract)

export const GuestbookEvent = z
  .object({
    id: z.number(),
    name: z.string(),
    contract: z.object({
      id: z.number(),
      chainId: z.number(),
      tokenId: z.string(),
      address: z.string().nullable(),
      contractAddress: z.string().nullable().meta({ description: 'Same as address (the spec names it both ways)' }),
    }),
    createdAt: Iso,
  })
  .meta({ id: 'GuestbookEvent' })

export const GuestbookEventList = z.array(GuestbookEvent)

export const CreateEventBody = z.object({
  name: z.string().min(1).max(200).meta({ description: 'Private label' }),
  tokenId: TokenId,
  contractId: IntId.meta({ description: 'Guestbook contract id (number or digit string)' }),
  metadata: MetadataString,
})

export const CreateEventResponse = Success.extend({ id: z.number() })

export const ListEventsQuery = z.object({ contractId: IntId.optional() })

/**
 * An event by its id, or by its token (findGuestbookEvent checks which). Said
 * for the document as `anyOf` required sets: a refine would not show there.
 */
const eventSelector = { anyOf: [{ required: ['eventId'] }, { required: ['tokenId', 'contractAddress', 'chainId'] }] }

export const EventMetadataBody = z
  .object({
    eventId: IntId.optional(),
    tokenId: TokenId.optional(),
    contractAddress: Address.optional(),
    chainId: ChainId.optional(),
    metadata: MetadataString,
  })
  .meta(eventSelector)

export const AssignEventBody = z.object({
  tagUIDs: z.array(ChipUid).min(1).max(10_000),
  guestbookEventId: IntId,
})

export const ChipGroup = z.object({ id: z.number(), name: z.string(), createdAt: Iso }).meta({ id: 'ChipGroup' })
export const ChipGroupList = z.array(ChipGroup)

export const DeployContractBody = z.object({
  name: z.string().min(1).max(100),
  symbol: z.string().min(1).max(32),
  chainId: ChainId,
})

export const DeployContractResponse = Success.extend({ contractId: z.number() })

const TxHash = z.string().meta({ description: 'Transaction hash' })
export const TxnResponse = z.object({ success: z.literal(true), txnHash: TxHash })

export const MintEventBody = z
  .object({
    eventId: IntId.optional(),
    tokenId: TokenId.optional(),
    contractAddress: Address.optional(),
    chainId: ChainId.optional(),
    recipient: Recipient,
  })
  .meta(eventSelector)

export const TogglePauseBody = z
  .object({
    contractId: IntId.optional(),
    contractAddress: Address.optional(),
    chainId: ChainId.optional(),
    pauseState: z.boolean().meta({ description: 'true: transfers paused (soulbound); false: transferable' }),
  })
  .refine((b) => b.contractId !== undefined || (b.contractAddress !== undefined && b.chainId !== undefined), {
    message: 'Give contractId, or both contractAddress and chainId',
    path: ['contractId'],
  })
  .meta({ anyOf: [{ required: ['contractId'] }, { required: ['contractAddress', 'chainId'] }] })
