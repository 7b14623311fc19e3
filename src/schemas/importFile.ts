import { z } from 'zod'
import { keySchemes } from '../db/chipProfiles.js'
import { proofEventStatuses } from '../db/proofEvents.js'
import { checkSunLayout, SunLayoutError, type SunLayout } from '../sun/index.js'
import { Address, ChainId, ChipUid, IntId, TokenIdInFile } from './common.js'
import { GuestbookMetadata, PhygitalMetadata } from './metadata.js'
import { RedirectUrl } from './redirectUrl.js'

// The same rule as every redirect URL (team create, self-service edits).
const Url = RedirectUrl

const TwoTapClaim = z.union([
  z.boolean(),
  z
    .object({
      delaySeconds: z.number().int().min(0).optional(),
      windowSeconds: z.number().int().positive().optional(),
    })
    .strict(),
])

/** An AES-128 key as 32 hex characters. The message never repeats the value: it may be a real key with a typo. */
const HexKey = z.string().regex(/^[0-9a-fA-F]{32}$/, 'Must be 32 hex characters (an AES-128 key)')

/** Where a chip puts its SUN fields: parameter names or SDM offsets (src/sun/sunLayout.ts, docs/sun-verify.md). */
const Layout = z
  .custom<SunLayout>((v) => typeof v === 'object' && v !== null && !Array.isArray(v), 'A layout is an object of parameter names or SDM offsets')
  .superRefine((layout, ctx) => {
    try {
      checkSunLayout(layout)
    } catch (error) {
      if (!(error instanceof SunLayoutError)) throw error
      ctx.addIssue({ code: 'custom', message: error.message })
    }
  })

/**
 * A chip profile: the URL layout, the mode and the keys (or master key) of a
 * set of chips. Which keys each scheme needs is checked on import, since a key
 * already stored may be left out (see upsertChipProfile).
 */
const ChipProfile = z
  .object({
    name: z.string().min(1).max(200),
    /** Left out: the stored profile's mode, else aes. */
    mode: z.enum(['aes', 'lrp']).optional(),
    keyScheme: z.enum(keySchemes),
    layout: Layout.nullable().optional(),
    /** The tap URL chip provision writes (e.g. https://tap.example/t?e={picc}&c={mac}); checked against the layout on import. Null clears it; left out keeps it. */
    urlTemplate: z.string().max(2048).nullable().optional(),
    metaKey: HexKey.optional(),
    fileKey: HexKey.optional(),
    masterKey: HexKey.optional(),
  })
  .strict()

/** A contract of a team: with an address it is registered; without, the relayer deploys ours. */
const Contract = z.object({
  name: z.string().min(1).max(200),
  symbol: z.string().min(1).max(32),
  chainId: ChainId,
  address: Address.optional(),
})

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
            chipProfiles: z.array(ChipProfile).optional(),
            chips: z
              .array(
                z
                  .object({
                    uid: ChipUid,
                    /** ntag424 for a new chip when left out; a stored chip keeps its kind. */
                    kind: z.enum(['ntag424', 'ntag21x']).optional(),
                    group: z.string().min(1).optional(),
                    redirectUrl: Url.nullable().optional(),
                    /** A chip profile of this team (in this file or stored); null takes the chip off its profile. */
                    profile: z.string().min(1).max(200).nullable().optional(),
                    /** The chip's own SDM file read key, for a profile with key scheme per_chip. */
                    fileKey: HexKey.optional(),
                    /** The chip answers anticollision with a random ID (stations then skip the RF UID check). */
                    randomUid: z.boolean().optional(),
                    /** Bolt Card key version (key scheme boltcard). */
                    keyVersion: z.number().int().min(0).max(0xffffffff).optional(),
                    /** NTAG 21x: the chip mirrors its NFC counter (every tap must carry one), or false: its UID only; null: not declared. */
                    counterMirror: z.boolean().nullable().optional(),
                    /** The attendee's wallet: a check-in mints the event's guestbook token to it; null clears it. */
                    wallet: Address.nullable().optional(),
                  })
                  .strict(),
              )
              .default([]),
            /** Phygital (ERC-721) contracts: with an address, registered; without, deployed by the relayer. */
            phygitalContracts: z.array(Contract.strict()).default([]),
            tokens: z
              .array(
                z
                  .object({
                    chainId: ChainId,
                    /** The token's contract: its address, or the name of one of this team's phygitalContracts. */
                    contractAddress: Address.optional(),
                    contract: z.string().min(1).max(200).optional(),
                    tokenId: TokenIdInFile,
                    chips: z.array(ChipUid).default([]),
                    metadata: PhygitalMetadata.optional(),
                    /** false for a new token when left out; a stored token keeps its 2-tap claim. */
                    twoTapClaim: TwoTapClaim.optional(),
                  })
                  .strict()
                  .refine((t) => (t.contractAddress === undefined) !== (t.contract === undefined), {
                    message: 'Give exactly one of contractAddress and contract (the name of a phygital contract)',
                  }),
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
                Contract.extend({
                    events: z
                      .array(
                        z
                          .object({
                            name: z.string().min(1).max(200),
                            tokenId: TokenIdInFile,
                            metadata: GuestbookMetadata,
                            chips: z.array(ChipUid).default([]),
                          })
                          .strict(),
                      )
                      .default([]),
                }).strict(),
              )
              .default([]),
          })
          .strict()
          .superRefine((team, ctx) => {
            // A second entry of the same name would silently overwrite the first.
            const seen = new Set<string>()
            team.chipProfiles?.forEach((p, i) => {
              if (seen.has(p.name)) ctx.addIssue({ code: 'custom', path: ['chipProfiles', i, 'name'], message: `Profile ${JSON.stringify(p.name)} is listed twice` })
              seen.add(p.name)
            })
          }),
      )
      .min(1),
  })
  .strict()

export type ImportFileT = z.infer<typeof ImportFile>
