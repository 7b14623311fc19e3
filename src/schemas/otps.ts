import { z } from 'zod'
import { otpTypes } from '../db/otps.js'
import { Iso } from './common.js'
import { ProofEventStatus } from './refs.js'

export const OtpParams = z.object({ id: z.string().min(1).max(64) })

export const OtpResponse = z
  .object({
    otp: z.string(),
    isExpired: z.boolean().meta({ description: 'true once expired or used' }),
    expiresAt: Iso,
    createdAt: Iso,
    usedAt: Iso.optional().meta({ description: 'Extension: when the code was used' }),
    type: z.enum(otpTypes),
    linkedToken: z.object({ contractAddress: z.string(), chainId: z.number(), tokenId: z.string() }).optional(),
    proofEvent: z.object({ id: z.number(), proofEventId: z.number(), status: ProofEventStatus }).optional(),
    poapEvent: z
      .object({ id: z.number(), poapEventId: z.number(), status: ProofEventStatus })
      .meta({ description: 'compat=iyk only: proofEvent under the hosted API\'s names' })
      .optional(),
    guestbookEvent: z
      .object({
        id: z.number(),
        name: z.string(),
        contractAddress: z.string().nullable(),
        chainId: z.number(),
        tokenId: z.string(),
        createdAt: Iso,
      })
      .optional(),
  })
  .meta({ id: 'Otp' })
