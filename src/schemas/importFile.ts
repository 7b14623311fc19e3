import { z } from 'zod'
import { proofEventStatuses } from '../db/proofEvents.js'
import { Address, ChainId, ChipUid, IntId, TokenId } from './common.js'
import { GuestbookMetadata, PhygitalMetadata } from './metadata.js'

const Url = z.url({ protocol: /^https?$/ })

const TwoTapClaim = z.union([
  z.boolean(),
  z
    .object({
      delaySeconds: z.number().int().min(0).optional(),
      windowSeconds: z.number().int().positive().optional(),
    })
    .strict(),
])

/**
 * `tapgate import FILE.json`: a list of teams, each with what it owns.
 * Everything is matched by its natural key, so importing a file twice updates
 * rather than duplicates (see README "Import file format").
 */
export const ImportFile = z
  .object({
    teams: z
      .array(
        z
          .object({
            name: z.string().min(1).max(200),
            redirectUrl: Url.nullable().optional(),
            chipGroups: z.array(z.object({ name: z.string().min(1).max(200) }).strict()).default([]),
            chips: z
              .array(
                z
                  .object({
                    uid: ChipUid,
                    kind: z.enum(['ntag424', 'ntag21x']).default('ntag424'),
                    group: z.string().min(1).optional(),
                    redirectUrl: Url.nullable().optional(),
                  })
                  .strict(),
              )
              .default([]),
            tokens: z
              .array(
                z
                  .object({
                    chainId: ChainId,
                    contractAddress: Address,
                    tokenId: TokenId,
                    chips: z.array(ChipUid).default([]),
                    metadata: PhygitalMetadata.optional(),
                    twoTapClaim: TwoTapClaim.default(false),
                  })
                  .strict(),
              )
              .default([]),
            proofEvents: z
              .array(
                z
                  .object({
                    proofEventId: IntId,
                    name: z.string().default(''),
                    status: z.enum(proofEventStatuses).default('active'),
                    chips: z.array(ChipUid).default([]),
                  })
                  .strict(),
              )
              .default([]),
            guestbookContracts: z
              .array(
                z
                  .object({
                    name: z.string().min(1).max(200),
                    symbol: z.string().min(1).max(32),
                    chainId: ChainId,
                    address: Address.optional(),
                    events: z
                      .array(
                        z
                          .object({
                            name: z.string().min(1).max(200),
                            tokenId: TokenId,
                            metadata: GuestbookMetadata,
                            chips: z.array(ChipUid).default([]),
                          })
                          .strict(),
                      )
                      .default([]),
                  })
                  .strict(),
              )
              .default([]),
          })
          .strict(),
      )
      .min(1),
  })
  .strict()

export type ImportFileT = z.infer<typeof ImportFile>
