import type { Config } from '../config.js'
import { BadRequestError, UnavailableError } from '../errors.js'
import type { EnsResolver } from './resolveRecipient.js'
import { type ChainSigner, EMBEDDED_CHAIN_ID, loadChainSigners } from './chainKeys.js'
import type { EmbeddedChain } from './embeddedChain.js'
import { createEnsResolver } from './ensResolver.js'
import { createRpc, type Rpc } from './rpc.js'

/** A chain the gateway can sign for and reach (when its RPC is up). */
export type Chain = ChainSigner & {
  rpc: Rpc
  confirmations: number
}

export type Chains = {
  /** Every chain with keys, embedded first. */
  list(): Chain[]
  get(chainId: number): Chain | undefined
  /** The chain of a token or contract, to read from; 400 chain_not_configured when the gateway has no RPC and keys for it, 503 when it is not running here. */
  require(chainId: number): Chain
  /** Keys to sign and queue with: works while the RPC is down. 400 chain_not_configured when the gateway has no keys for the chain. */
  signer(chainId: number): ChainSigner
  /** Like signer(), but undefined instead of an error. */
  findSigner(chainId: number): ChainSigner | undefined
  ens?: EnsResolver
  embedded?: EmbeddedChain
  /** Saves and stops the embedded chain. */
  close(): Promise<void>
}

export type OpenChainsParameters = {
  config: Config
  env?: NodeJS.ProcessEnv
  /** Started by the caller (server.ts) so that it can overlap with the rest of start-up. */
  embedded?: EmbeddedChain
  /** Per-request RPC timeout (default 5 s). */
  rpcTimeoutMs?: number
}

// 400, not 503: nothing will change by retrying; the chain id names a chain this gateway was never set up for.
const notConfigured = (chainId: number) =>
  new BadRequestError(
    'chain_not_configured',
    chainId === EMBEDDED_CHAIN_ID
      ? 'The embedded chain (31337) is turned off on this gateway'
      : `This gateway has no RPC and keys for chain ${chainId}; add it under "chains" in the config`,
  )

/**
 * The chains of this gateway: the embedded anvil (when enabled) and every
 * chain of `config.chains`. Signers are loaded up front so requests can be
 * signed and queued even while an RPC is down.
 */
export function createChains({ config, env = process.env, embedded, rpcTimeoutMs }: OpenChainsParameters): Chains {
  const signers = loadChainSigners(config, env)
  const chains = new Map<number, Chain>()
  for (const signer of signers.values()) {
    if (signer.embedded) {
      if (!embedded) continue
      chains.set(signer.chainId, { ...signer, rpc: createRpc(signer.chainId, embedded.url, { timeoutMs: rpcTimeoutMs }), confirmations: 1 })
    } else {
      const settings = config.chains[String(signer.chainId)]!
      chains.set(signer.chainId, {
        ...signer,
        rpc: createRpc(signer.chainId, settings.rpcUrl, { timeoutMs: rpcTimeoutMs }),
        confirmations: settings.confirmations,
      })
    }
  }
  const mainnetRpc = config.chain.ensRpcUrl ?? config.chains['1']?.rpcUrl
  return {
    list: () => [...chains.values()],
    get: (chainId) => chains.get(chainId),
    require(chainId) {
      const chain = chains.get(chainId)
      if (chain) return chain
      if (signers.get(chainId)?.embedded)
        throw new UnavailableError('chain_unavailable', 'The embedded chain is not running in this process; start the gateway with tapgate serve')
      throw notConfigured(chainId)
    },
    signer(chainId) {
      const signer = signers.get(chainId)
      if (!signer) throw notConfigured(chainId)
      return signer
    },
    findSigner: (chainId) => signers.get(chainId),
    ens: mainnetRpc ? createEnsResolver(mainnetRpc) : undefined,
    embedded,
    close: async () => {
      await embedded?.stop()
    },
  }
}
