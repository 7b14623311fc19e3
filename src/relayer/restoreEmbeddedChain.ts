import type { Hex } from 'viem'
import type { Chain } from '../chain/chains.js'
import { RpcError } from '../chain/rpc.js'
import type { Store } from '../db/store.js'
import type { RelayerLog } from './relayerLog.js'

/** The relayer's balance on the embedded chain: enough for any event, set at every boot. */
const EMBEDDED_BALANCE = 10n ** 24n

/**
 * After the embedded chain loaded its last saved state, re-sends what the
 * outbox knows was mined but the saved state lacks (the gateway died between
 * two saves, and its anvil with it), each at its original block timestamp so
 * the chain's history reads the same. Then the clock moves to now. What was
 * sent but never mined goes back to the queue for the worker.
 */
export async function restoreEmbeddedChain(p: { store: Store; chain: Chain; log: RelayerLog; now: number }): Promise<{ replayed: number; requeued: number }> {
  const { store, chain } = p
  const { rpc } = chain
  await rpc.request('anvil_setBalance', [chain.relayer.address, `0x${EMBEDDED_BALANCE.toString(16)}`])
  let replayed = 0
  let requeued = 0
  // Only the relayer sends from its key, so every nonce below the chain's count is on chain: look at the tail only.
  const onChain = Number(BigInt(await rpc.request<Hex>('eth_getTransactionCount', [chain.relayer.address, 'latest'])))
  for (const row of await store.chainTxs.fromNonce(chain.chainId, chain.relayer.address, onChain)) {
    if (row.status === 'queued') continue
    if (row.status === 'sent') {
      const known = await Promise.all((await store.chainTxs.attemptHashes(row.id)).map((hash) => rpc.receipt(hash as Hex)))
      if (!known.some(Boolean) && await store.chainTxs.requeue(row.id)) requeued++
      continue
    }
    if (await rpc.receipt(row.txHash as Hex)) continue
    const raw = await store.chainTxs.attemptRaw(row.txHash)
    if (!raw) throw new Error(`outbox row ${row.id} has no signed bytes for its mined hash ${row.txHash}`)
    try {
      await rpc.request('evm_setNextBlockTimestamp', [row.blockTimestamp])
    } catch (error) {
      // Two txs mined in one second: the next block cannot repeat the timestamp; take the next second.
      if (!(error instanceof RpcError)) throw error
    }
    await rpc.request('eth_sendRawTransactionSync', [raw], { timeoutMs: 30_000 })
    replayed++
  }
  await rpc.request('evm_setTime', [Math.floor(p.now / 1000)])
  if (replayed > 0 || requeued > 0) p.log.warn({ replayed, requeued }, 'embedded chain restored from the outbox')
  return { replayed, requeued }
}
