import type { ChainSigner } from '../chain/chainKeys.js'
import { deployGuestbookData, deployPhygitalData, GAS, metadataBaseUri } from '../chain/contractCalls.js'
import type { Config } from '../config.js'
import type { Tx } from '../db/types.js'
import { type QueuedTx, queueTx } from './queueTx.js'

const contracts = {
  phygital: { kind: 'deploy_phygital', data: deployPhygitalData, gas: GAS.deployPhygital },
  guestbook: { kind: 'deploy_guestbook', data: deployGuestbookData, gas: GAS.deployGuestbook },
} as const

/**
 * Queues the deploy of one of our contracts, owned by the relayer, with the
 * chain's signer as its signVerifier and this gateway's metadata route (at
 * the address the contract will get) as its token URI base. Runs inside the
 * caller's transaction (`tx`); `contractAddress` of the result is known at once.
 */
export async function queueDeploy(
  tx: Tx,
  chain: ChainSigner,
  config: Config,
  p: { contract: keyof typeof contracts; name: string; symbol: string; now: number },
): Promise<QueuedTx & { contractAddress: string }> {
  const { kind, data, gas } = contracts[p.contract]
  const queued = await queueTx(tx, chain, {
    kind,
    to: null,
    data: (address) => data({ name: p.name, symbol: p.symbol, signVerifier: chain.signer.address, baseUri: metadataBaseUri(config, chain.chainId, address) }),
    gas,
    now: p.now,
    fallbackMaxFeeGwei: config.chain.fallbackMaxFeeGwei,
  })
  return { ...queued, contractAddress: queued.contractAddress! }
}
