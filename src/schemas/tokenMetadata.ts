import { z } from 'zod'
import { Address, ChainId, TokenId } from './common.js'

// GET /metadata/:chainId/:contract/:tokenId: the token a wallet asks about, and the metadata JSON it
// gets (whatever the team stored: checked when it was written, src/schemas/metadata.ts). Here rather
// than beside the route, so the typed client (src/client) reads the same schemas.

export const MetadataParams = z.object({ chainId: ChainId, contract: Address, tokenId: TokenId })

export const TokenMetadataResponse = z.record(z.string(), z.unknown())
