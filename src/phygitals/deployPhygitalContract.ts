import type { ChainSigner } from '../chain/chainKeys.js'
import type { Config } from '../config.js'
import type { Tx } from '../db/types.js'
import { queueDeploy } from '../outbox/queueDeploy.js'

/**
 * Queues the deploy of a team's phygital (ERC-721) contract and registers it.
 * The address follows from the relayer and nonce, so tokens can be registered
 * under it before the deploy is mined; transfers queued after it are sent
 * after it. Runs inside the caller's transaction (`tx`).
 */
export async function queuePhygitalDeploy(
  tx: Tx,
  chain: ChainSigner,
  config: Config,
  p: { teamId: number; name: string; symbol: string; now: number },
): Promise<{ id: number; address: string; txHash: string }> {
  const queued = await queueDeploy(tx, chain, config, { contract: 'phygital', ...p })
  const id = await tx.phygitalContracts.insert({
    teamId: p.teamId,
    name: p.name,
    symbol: p.symbol,
    chainId: chain.chainId,
    address: queued.contractAddress,
    deployTxId: queued.id,
    createdAt: p.now,
  })
  return { id, address: queued.contractAddress, txHash: queued.hash }
}
