import type { Address, Hex } from 'viem'
import { phygitalTokenAbi } from '../../contracts/artifacts/PhygitalToken.js'
import type { ChainDeps } from '../chain/chainDeps.js'
import type { Chain } from '../chain/chains.js'
import { ChainUnreachableError, ContractRevertError, RpcError } from '../chain/rpc.js'
import type { Tx } from '../db/types.js'
import type { TokenRow } from '../db/tokens.js'
import { ConflictError, UnavailableError } from '../errors.js'

/*
 * The gateway counts a token's moves (tokens.moves) so that an OTP, and a claim, is bound to the
 * token's state when it was issued (src/otps/tokenOtp.ts). Its own transfers are counted when it
 * accepts them. A move it did not make (a user's pull with a signature from GET
 * /phygitals/transfer-signature) shows only on chain, as the token's nonce: every move advances it.
 *
 * Issue 24 §1: when the nonce cannot be read, the request that would move the token is refused
 * (503 chain_state_unknown) instead of going on with the gateway's own moves only: a pull made
 * meanwhile would stay unseen, a stale OTP would pass, and the token would be taken from whoever
 * pulled it (docs/decisions.md, "Issue 24, point 1").
 */

/** Seconds a client is told to wait (Retry-After) before it asks again. */
const RETRY_AFTER_SECONDS = 5

/** 503 chain_state_unknown: the token's moves cannot be known now; nothing was spent, the same request may be sent again. */
export class ChainStateUnknownError extends UnavailableError {
  override name = 'ChainStateUnknownError'
  constructor(
    token: Pick<TokenRow, 'chainId'>,
    /** Why the nonce could not be read, for logs (the relayer's). */
    readonly reason: string,
    cause?: unknown,
  ) {
    super(
      'chain_state_unknown',
      // Shown as is on the phone's claim page: said for a customer, the technical part in brackets.
      `This product's token cannot be checked on the blockchain right now, so nothing was sent and nothing used up: try again in a moment (chain ${token.chainId}: ${reason})`,
      { retryAfterSeconds: RETRY_AFTER_SECONDS, cause },
    )
  }
}

const chainStateUnknownError = (token: Pick<TokenRow, 'chainId'>, reason: string, cause?: unknown) => new ChainStateUnknownError(token, reason, cause)

/**
 * The token's nonce on chain: how many times it has moved. A contract with no code yet (its
 * deploy still queued) holds no token that could have moved: 0.
 *
 * @throws UnavailableError chain_state_unknown: no RPC for the chain, unreachable, a node error, or
 *   no answer within config.chain.tokenNonceReadTimeoutMs
 * @throws ConflictError not_a_phygital_contract: the contract has no getTokenNonce
 */
export function readTokenNonce(deps: Pick<ChainDeps, 'chains' | 'config'>, token: TokenRow): Promise<bigint> {
  return readChainTokenNonce(deps.chains.get(token.chainId), token, deps.config.chain.tokenNonceReadTimeoutMs)
}

/** readTokenNonce on a chain already looked up (the relayer's), `undefined` when the gateway has no RPC for it. */
export async function readChainTokenNonce(chain: Pick<Chain, 'rpc'> | undefined, token: TokenRow, timeoutMs: number): Promise<bigint> {
  if (!chain) throw chainStateUnknownError(token, 'this gateway has no RPC for the chain')
  const address = token.contractAddress as Address
  const read = async (): Promise<bigint> => {
    try {
      return await chain.rpc.read({ address, abi: phygitalTokenAbi, functionName: 'getTokenNonce', args: [BigInt(token.tokenId)] })
    } catch (error) {
      if (!(error instanceof ContractRevertError)) throw error
      if (await chain.rpc.request<Hex>('eth_getCode', [address, 'latest']) === '0x') return 0n
      throw new ConflictError('not_a_phygital_contract', `${address} on chain ${token.chainId} is not a phygital contract of this gateway's kind (no getTokenNonce)`)
    }
  }
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(chainStateUnknownError(token, `no answer within ${timeoutMs} ms`)), timeoutMs)
  })
  try {
    return await Promise.race([read(), timeout])
  } catch (error) {
    if (error instanceof ChainUnreachableError) throw chainStateUnknownError(token, 'its RPC is unreachable', error)
    if (error instanceof RpcError) throw chainStateUnknownError(token, `its RPC answered an error: ${error.message}`, error)
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
 * after it. Called before anything is spent by every request that moves a token.
 *
 * @throws UnavailableError chain_state_unknown, ConflictError not_a_phygital_contract (readTokenNonce)
 */
export async function refreshTokenMoves(deps: Pick<ChainDeps, 'chains' | 'store' | 'config'>, token: TokenRow): Promise<void> {
  const nonce = await readTokenNonce(deps, token)
  await deps.store.tx(async (tx) => {
    const fresh = await tx.tokens.get(token.id)
    if (fresh) await noteChainNonce(tx, fresh, nonce)
  }, { isolation: 'read committed' })
}
