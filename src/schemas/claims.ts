import { z } from 'zod'
import { IntId, Iso, Success } from './common.js'

// The claim hand-off's HTTP shapes: the kiosk's (/kiosk/claims/*) and the phone page's (/c/*).
// The kiosk's feed events carry the same ClaimSummary (src/wire/feedProtocol.ts).

const TxStatus = z.enum(['queued', 'sent', 'replaced', 'confirmed', 'failed'])
// moved: the token moved after the claim's tap (claimed meanwhile, by another claim or path): it takes no address.
const ClaimStep = z.enum(['open', 'opened', 'registered', 'early', 'claimed', 'expired', 'moved'])

export const ProductCard = z
  .object({
    name: z.string(),
    description: z.string().nullable(),
    image: z.string().nullable().meta({ description: 'A gateway path (/media/<key>) of the cached image, or null' }),
    attributes: z.array(z.object({ trait: z.string(), value: z.string() })),
  })
  .meta({ id: 'ProductCard' })

export const ClaimSummary = z
  .object({
    id: z.number().int(),
    kind: z.enum(['token', 'guestbook']),
    product: ProductCard,
    step: ClaimStep,
    expiresAt: Iso,
    twoTap: z.boolean(),
    allowedAt: Iso.nullable(),
    via: z.enum(['known', 'phone', 'kiosk']).nullable(),
    tx: z.object({ id: z.number().int(), status: TxStatus, hash: z.string().nullable() }).nullable(),
  })
  .meta({ id: 'ClaimSummary' })

export const PhoneClaim = z
  .object({
    kind: z.enum(['token', 'guestbook']),
    product: ProductCard,
    step: ClaimStep,
    twoTap: z.boolean(),
    allowedAt: Iso.nullable(),
    expiresInMs: z.number().int().meta({ description: 'How long the link has left' }),
    ens: z.boolean().meta({ description: 'ENS names can be resolved here' }),
    tx: z.object({ status: TxStatus, hash: z.string().nullable() }).nullable(),
  })
  .meta({ id: 'PhoneClaim' })

export const ClaimIdParams = z.object({ id: IntId.meta({ description: 'The claim id (from the kiosk feed)' }) }).strict()
export const LinkParams = z.object({ token: z.string().max(64).meta({ description: 'The one-time link token (22 characters)' }) }).strict()

const RecipientText = z.string().min(1).max(200).meta({ description: '0x address (EIP-55 checked when mixed case), ethereum:0x… (EIP-681) or an ENS name' })
const Session = z.string().regex(/^[A-Za-z0-9_-]{22}$/, 'The session the first open returned').meta({ description: 'The session the first open returned' })

export const HandoffResponse = Success.extend({
  url: z.string().meta({ description: 'The one-time claim link (<publicBaseUrl>/c/<token>)' }),
  svg: z.string().meta({ description: 'Its QR code, SVG markup' }),
  expiresAt: Iso,
})
export const KioskRecipientBody = z.object({ recipient: RecipientText }).strict()
export const KioskClaimResponse = Success.extend({ claim: ClaimSummary })

export const PhoneOpenBody = z.object({ session: Session.optional() }).strict()
export const PhoneOpenResponse = Success.extend({ session: Session, claim: PhoneClaim })
export const PhoneResolveBody = z.object({ session: Session, name: z.string().min(1).max(200) }).strict()
export const PhoneResolveResponse = Success.extend({ name: z.string(), address: z.string() })
export const PhoneRecipientBody = z.object({ session: Session, recipient: RecipientText }).strict()
export const PhoneSessionBody = z.object({ session: Session }).strict()
export const PhoneClaimResponse = Success.extend({ claim: PhoneClaim })
