import type { ChainDeps } from '../chain/chainDeps.js'
import { GAS, refreshMetadataData } from '../chain/contractCalls.js'
import type { TokenKey } from '../db/tokens.js'
import { queueTx } from '../outbox/queueTx.js'
import { PhygitalMetadata } from '../schemas/metadata.js'
import { parseJsonField } from '../validation/issuesToErrors.js'
import { findToken } from '../tokens/findTeamToken.js'

/**
 * PATCH /phygitals/metadata: validates and replaces a team token's metadata.
 * Unknown fields are kept. Validation happens before the transaction, so bad
 * input never touches what is stored.
 *
 * Marketplaces cache tokenURI; on a contract this gateway deployed, the
 * relayer also emits ERC-4906 MetadataUpdate(tokenId) so they fetch it again.
 * Returns the refresh transaction's hash, if one was queued.
 */
export function updateTokenMetadata(deps: ChainDeps, p: { key: TokenKey; teamId: number; metadata: string }): Promise<{ refreshTxHash: string | null; chainId: number }> {
  const { store } = deps
  const metadata = parseJsonField(p.metadata, PhygitalMetadata, 'metadata')
  const now = deps.now()
  return store.tx(async (tx) => {
    const token = await findToken(tx, p.key, p.teamId)
    await tx.tokens.setMetadata(token.id, JSON.stringify(metadata), now)
    const ours = (await tx.phygitalContracts.findByAddress(token.chainId, token.contractAddress))?.deployTxId != null
    const chain = deps.chains.findSigner(token.chainId)
    if (!ours || !chain) return { refreshTxHash: null, chainId: token.chainId }
    const queued = await queueTx(tx, chain, {
      kind: 'metadata_refresh',
      to: token.contractAddress as `0x${string}`,
      data: refreshMetadataData(BigInt(token.tokenId)),
      gas: GAS.metadataRefresh,
      now,
      fallbackMaxFeeGwei: deps.config.chain.fallbackMaxFeeGwei,
    })
    return { refreshTxHash: queued.hash, chainId: token.chainId }
  }, { isolation: 'read committed' })
}
