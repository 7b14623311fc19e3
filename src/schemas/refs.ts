import { z } from 'zod'
import { proofEventStatuses } from '../db/proofEvents.js'
import { QueryBool, UidOut } from './common.js'

export const RefParams = z.object({ id: z.string().min(1).max(64) })

export const RefQuery = z.object({
  includeOwner: QueryBool.meta({ description: 'Add linkedToken.ownerAddress (needs a chain)' }),
  includeMetadata: QueryBool.meta({ description: 'Add linkedToken.metadata' }),
})

const Otp = z.string().meta({ description: 'One-time code; only on the first (valid) query' })

export const ProofEventStatus = z.enum(proofEventStatuses)

export const RefResponse = z
  .object({
    uid: UidOut,
    isValidRef: z.boolean().meta({ description: 'true only on the first query of the ref' }),
    otp: Otp.optional().meta({ description: 'For a chip with no linked token and no events' }),
    linkedToken: z
      .object({
        contractAddress: z.string(),
        chainId: z.number(),
        tokenId: z.string(),
        otp: Otp.optional(),
        ownerAddress: z.string().optional(),
        metadata: z.record(z.string(), z.unknown()).optional(),
      })
      .optional(),
    proofEvents: z.array(
      z.object({ id: z.number(), proofEventId: z.number(), status: ProofEventStatus, otp: Otp.optional() }),
    ),
    poapEvents: z
      .array(z.object({ id: z.number(), poapEventId: z.number(), status: ProofEventStatus, otp: Otp.optional() }))
      .optional()
      .meta({ description: 'compat=iyk only: proofEvents under the hosted API\'s names' }),
    guestbookEvents: z
      .array(
        z.object({
          id: z.number(),
          name: z.string(),
          contractAddress: z.string().nullable(),
          chainId: z.number(),
          tokenId: z.string(),
          otp: Otp.optional(),
        }),
      )
      .meta({ description: 'Extension: guestbook events assigned to the chip, with their OTPs on a valid query' }),
  })
  .meta({ id: 'Ref' })
