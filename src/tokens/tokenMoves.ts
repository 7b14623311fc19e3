import type { Address } from 'viem'
import { phygitalTokenAbi } from '../../contracts/artifacts/PhygitalToken.js'
import type { ChainDeps } from '../chain/chainDeps.js'
import { ChainUnreachableError, ContractRevertError, RpcError } from '../chain/rpc.js'
import type { Tx } from '../db/types.js'
import type { TokenRow } from '../db/tokens.js'

/*
 * The gateway counts a token's moves (tokens.moves) so that an OTP, and a claim, is bound to the
 * token's state when it was issued (src/otps/tokenOtp.ts). Its own transfers are counted when it
 * accepts them. A move it did not make (a user's pull with a signature from GET
 * /phygitals/transfer-signature) shows only on chain, as the token's nonce: every move advances it.
 */

/** How long a nonce read may hold up an answer; past it the request goes on with what is known. */
const READ_TIMEOUT_MS = 1_500

/**
 * The token's nonce on chain (how many times it has moved), or null when the chain cannot tell
 * right now (no RPC for it, unreachable, not a contract of ours): then only the gateway's own
 * moves are known, and the request goes on with them.
 */
export async function readTokenNonce(deps: Pick<ChainDeps, 'chains'>, token: TokenRow): Promise<bigint | null> {
  const chain = deps.chains.get(token.chainId)
  if (!chain) return null
  const read = chain.rpc.read({ address: token.contractAddress as Address, abi: phygitalTokenAbi, functionName: 'getTokenNonce', args: [BigInt(token.tokenId)] })
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), READ_TIMEOUT_MS)))
  try {
    return await Promise.race([read, timeout])
  } catch (error) {
    if (error instanceof ChainUnreachableError || error instanceof ContractRevertError || error instanceof RpcError) return null
    throw error
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Inside the caller's transaction (`tx`): the moves the chain shows beyond our own landed transfers are
 * moves made outside the gateway, and count as moves of the token. Only a quiet read counts: while
 * a transfer of ours is on its way, the chain may already show it and the outbox not yet (a move
 * would be counted twice), so the read waits for the next request.
 * @returns the token's moves now
 */
export async function noteChainNonce(tx: Tx, token: Pick<TokenRow, 'id' | 'moves'>, chainNonce: bigint): Promise<number> {
  if (await tx.transfers.countPendingOfToken(token.id) > 0) return token.moves
  return tx.tokens.noteOutsideMoves(token.id, Number(chainNonce) - await tx.transfers.countLandedOfToken(token.id))
}

/**
 * Reads the token's nonce and commits what it says, in its own transaction: a request refused
 * because of a move found here still leaves the move counted, so the next tap's OTP is bound
 * after it. Best effort (see readTokenNonce).
 */
export async function refreshTokenMoves(deps: Pick<ChainDeps, 'chains' | 'store'>, token: TokenRow): Promise<void> {
  const nonce = await readTokenNonce(deps, token)
  if (nonce === null) return
  await deps.store.tx(async (tx) => {
    const fresh = await tx.tokens.get(token.id)
    if (fresh) await noteChainNonce(tx, fresh, nonce)
  }, { isolation: 'read committed' })
}
