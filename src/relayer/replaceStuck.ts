import type { Hex } from 'viem'
import { ChainUnreachableError } from '../chain/rpc.js'
import { signTransactionSync } from '../chain/signSync.js'
import { recordTxStep } from '../feed/txProgress.js'
import { broadcast } from './broadcast.js'
import { BATCH, type ChainLoop, fenced, type RelayerContext } from './chainLoop.js'

/** Re-signs transactions sent longer than replaceAfterSeconds ago with fees raised by feeBumpPercent. */
export async function replaceStuck(ctx: RelayerContext, loop: ChainLoop): Promise<void> {
  const { store, config, log, now } = ctx
  const { chain, lease } = loop
  if (chain.embedded) return
  const cutoff = now() - config.chain.replaceAfterSeconds * 1000
  const stuck = (await store.chainTxs.withStatus(chain.chainId, 'sent', BATCH)).filter((row) => (row.sentAt ?? 0) <= cutoff)
  if (stuck.length === 0) return
  const current = await store.chainTxs.getHead(chain.chainId)
  const bump = (value: string) => (BigInt(value) * BigInt(100 + config.chain.feeBumpPercent) + 99n) / 100n
  for (const row of stuck) {
    const maxPriorityFeePerGas = max(bump(row.maxPriorityFeePerGas), BigInt(current?.maxPriorityFeePerGas ?? 0))
    const maxFeePerGas = max(bump(row.maxFeePerGas), BigInt(current?.maxFeePerGas ?? 0), maxPriorityFeePerGas)
    const { raw, hash } = signTransactionSync(chain.relayer.key, {
      type: 'eip1559',
      chainId: chain.chainId,
      nonce: row.nonce,
      to: (row.toAddress ?? undefined) as Hex | undefined,
      data: row.data as Hex,
      gas: BigInt(row.gas),
      maxFeePerGas,
      maxPriorityFeePerGas,
    })
    // Recorded before it is sent: whichever version gets mined, we know its hash.
    const recorded = await lease.write(async (tx) => {
      await tx.chainTxs.replace(row.id, {
        rawTx: raw,
        txHash: hash,
        maxFeePerGas: maxFeePerGas.toString(),
        maxPriorityFeePerGas: maxPriorityFeePerGas.toString(),
        now: now(),
      })
      await recordTxStep(tx, row, { status: 'replaced', hash, now: now() })
    })
    // Fenced out: another gateway took the lease and replaces from now on; this version is never sent.
    if (recorded.fenced) return fenced(ctx, loop)
    log.info({ chainId: chain.chainId, nonce: row.nonce, from: row.txHash, to: hash, maxFeePerGas: maxFeePerGas.toString() }, 'replaced a stuck transaction with higher fees')
    const result = await broadcast(chain, raw)
    if (result.unreachable) throw new ChainUnreachableError(chain.chainId, result.error!)
    if (result.error) await store.chainTxs.setError(row.id, result.error)
  }
}

const max = (...values: bigint[]) => values.reduce((a, b) => (b > a ? b : a))
