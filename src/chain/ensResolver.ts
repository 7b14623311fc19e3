import type { EnsResolver } from './resolveRecipient.js'

/**
 * Resolves ENS names through an Ethereum mainnet RPC with viem's ENS actions
 * (normalization, universal resolver, CCIP reads). viem's root entry and its
 * chain table are imported on first use, not at start-up.
 */
export function createEnsResolver(rpcUrl: string): EnsResolver {
  let client: Promise<(name: string) => Promise<string | null>> | undefined
  const load = async () => {
    const [{ createPublicClient, http }, { mainnet }, { normalize }] = await Promise.all([
      import('viem'),
      import('viem/chains'),
      import('viem/ens'),
    ])
    const publicClient = createPublicClient({ chain: mainnet, transport: http(rpcUrl, { timeout: 5_000, retryCount: 1 }) })
    return (name: string) => publicClient.getEnsAddress({ name: normalize(name) })
  }
  return async (name) => {
    client ??= load()
    return (await client)(name)
  }
}
