import { z } from 'zod'
import { ChipUid, Recipient, TokenKeyBody, UidOut } from './common.js'
import { ClaimRegistrationBody, ClaimRegistrationQuery, RecipientBody } from './phygitals.js'
import { RedirectUrl } from './redirectUrl.js'

const TxHash = z.string().meta({ description: 'Transaction hash (0x + 64 hex)', example: `0x${'ab'.repeat(32)}` })

export const TransferBody = ClaimRegistrationBody
export const TransferPullableBody = RecipientBody

export const TransferResponse = z
  .object({
    success: z.literal(true),
    initialTxHash: TxHash.meta({ description: 'The relayer may replace the transaction with higher fees; the mined hash can then differ' }),
  })
  .meta({ id: 'TransferResponse' })

export const SelfServiceTransferBody = z.object({ tagUID: ChipUid, recipient: Recipient })

export const SelfServiceTransferResponse = z.object({
  initialTxHash: TxHash,
  tokenRef: z.object({ chainId: z.number(), contractAddress: z.string(), tokenId: z.string() }),
})

export const TransferSignatureQuery = ClaimRegistrationQuery
export const TransferSignaturePullableQuery = z.object({ recipient: Recipient })

export const TransferSignatureResponse = z
  .object({
    signature: z.string().meta({ description: '65-byte EIP-191 signature for mintNFT/claimNFT' }),
    blockExpiry: z.string().meta({ description: 'Block number from which the signature no longer works (valid while block.number < blockExpiry)' }),
    tokenRef: z.object({ contractAddress: z.string(), tokenId: z.string(), chainId: z.string() }),
  })
  .meta({ id: 'TransferSignature' })

const Hex65 = z
  .string()
  .regex(/^0x[0-9a-fA-F]{130}$/, 'Must be a 65-byte signature: 0x + 130 hex characters')
  .transform((s) => s as `0x${string}`)

export const SelfServiceEditBody = TokenKeyBody.extend({
  ownerSignature: Hex65,
  updates: z.object({ redirectUrl: RedirectUrl }).strict(),
  requestExpiryTime: z.number().int().positive().meta({ description: 'Unix seconds at which the signed request expires' }),
})

export const SelfServiceEditResponse = z.object({ success: z.literal(true), updatedTags: z.array(UidOut) })
