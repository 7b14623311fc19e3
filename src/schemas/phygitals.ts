import { z } from 'zod'
import { Address, ChainId, Iso, Recipient, TokenId, TokenKeyBody, UidOut } from './common.js'
import { MetadataString } from './metadata.js'

export const TokenKeyQuery = z.object({ contractAddress: Address, chainId: ChainId, tokenId: TokenId })

export const ChipResponse = z.object({
  uid: UidOut,
  uids: z.array(UidOut).meta({ description: 'Extension: every chip linked to the token (uid is the first)' }),
})

const LinkedTokenStrings = z.object({ contractAddress: z.string(), tokenId: z.string(), chainId: z.string() })

export const ClaimRegistrationQuery = TokenKeyQuery.extend({ recipient: Recipient })
export const ClaimRegistrationBody = TokenKeyBody.extend({ recipient: Recipient })
export const RecipientBody = z.object({ recipient: Recipient })

export const ClaimRegistration = z
  .object({ recipient: z.string(), linkedToken: LinkedTokenStrings, allowedAt: Iso, expiresAt: Iso, createdAt: Iso })
  .meta({ id: 'ClaimRegistration' })

export const ClaimRegistrationStatus = z
  .object({
    recipient: z.string(),
    linkedToken: LinkedTokenStrings,
    isRequired: z.boolean().meta({ description: 'false: no 2-tap claim, transfer directly' }),
    isValid: z.boolean().meta({ description: 'true: the recipient may claim now' }),
    allowedAt: Iso.nullable(),
    expiresAt: Iso.nullable(),
    createdAt: Iso.nullable().meta({ description: 'null when the recipient has no registration' }),
  })
  .meta({ id: 'ClaimRegistrationStatus' })

export const MetadataBody = TokenKeyBody.extend({ metadata: MetadataString })

export { ChainId, TokenId }
