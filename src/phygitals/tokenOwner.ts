import type { Address } from 'viem'
import { phygitalTokenAbi } from '../../contracts/artifacts/PhygitalToken.js'
import { readChain } from '../chain/chainDeps.js'
import type { Chains } from '../chain/chains.js'
import { ContractRevertError } from '../chain/rpc.js'
import type { TokenRow } from '../db/tokens.js'

/** The token's current ERC-721 owner on chain, or null while it is not minted. 503 when the chain cannot be asked. */
export async function readTokenOwner(chains: Chains, token: TokenRow): Promise<Address | null> {
  const chain = chains.require(token.chainId)
  return readChain(chain.chainId, async () => {
    try {
      return await chain.rpc.read({ address: token.contractAddress as Address, abi: phygitalTokenAbi, functionName: 'ownerOf', args: [BigInt(token.tokenId)] })
    } catch (error) {
      // ownerOf reverts for a token that does not exist (yet); our deploy may also still be queued.
      if (error instanceof ContractRevertError) return null
      throw error
    }
  })
}
