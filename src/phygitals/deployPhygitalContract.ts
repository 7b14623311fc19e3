import type { ChainSigner } from '../chain/chainKeys.js'
import { deployPhygitalData, GAS, metadataBaseUri } from '../chain/contractCalls.js'
import type { Config } from '../config.js'
import type { Store } from '../db/store.js'
import { queueTx } from '../relayer/queueTx.js'

/**
 * Queues the deploy of a phygital (ERC-721) contract owned by the relayer,
 * with the chain's signer as its signVerifier and this gateway's metadata
 * route as its tokenURI base. The address follows from the relayer and nonce,
 * so tokens can be registered under it before the deploy is mined; transfers
 * queued after it are sent after it. Runs inside the caller's store.tx.
 */
export function queuePhygitalDeploy(
  store: Store,
  chain: ChainSigner,
  config: Config,
  p: { teamId: number; name: string; symbol: string; now: number },
): { id: number; address: string; txHash: string } {
  const tx = queueTx(store, chain, {
    kind: 'deploy_phygital',
    to: null,
    data: (address) =>
      deployPhygitalData({ name: p.name, symbol: p.symbol, signVerifier: chain.signer.address, baseUri: metadataBaseUri(config, chain.chainId, address) }),
    gas: GAS.deployPhygital,
    now: p.now,
    fallbackMaxFeeGwei: config.chain.fallbackMaxFeeGwei,
  })
  const address = tx.contractAddress!
  const id = store.phygitalContracts.insert({
    teamId: p.teamId,
    name: p.name,
    symbol: p.symbol,
    chainId: chain.chainId,
    address,
    deployTxId: tx.id,
    createdAt: p.now,
  })
  return { id, address, txHash: tx.hash }
}
