import type { Address } from 'viem'
import { phygitalTokenAbi } from '../../contracts/artifacts/PhygitalToken.js'
import type { Chain } from '../chain/chains.js'
import { checkRecipientCanReceive } from '../chain/recipientCheck.js'
import { ChainUnreachableError, ContractRevertError, RpcError } from '../chain/rpc.js'
import type { Config } from '../config.js'
import type { ChainTxRow } from '../db/chainTxs.js'
import type { Store } from '../db/store.js'
import type { TokenRow } from '../db/tokens.js'
import type { TransferRow } from '../db/transfers.js'
import { BaseError } from '../errors.js'
import { passWatch, recordTxStep } from '../feed/txProgress.js'
import { signTransferTx } from '../transfers/signTransferTx.js'
import { ChainStateUnknownError, noteChainNonce, readChainTokenNonce } from '../tokens/tokenMoves.js'
import type { RelayerLog } from './relayerLog.js'

/** A transfer is re-signed at most this many times before it is given up. */
export const MAX_RESIGNS = 3

/**
 * A relayed transfer reverted. Read the truth from the chain and, when the revert is explained by
 * what the gateway knew when it accepted the transfer (the signature expired during a long
 * outage; the local nonce behind moves the gateway had already read: a user's mint it found before
 * accepting), send a fresh transaction for the same request; the request is never done twice (the
 * old transaction is mined and reverted, so it cannot land later).
 *
 * Issue 24 §1: a revert explained by a move the gateway did not make and did not know of (the chain
 * shows more moves outside the gateway than it had counted: a pull with a signature from GET
 * /phygitals/transfer-signature landed meanwhile) is never re-signed: the request was accepted
 * against a state that no longer holds, and re-signed it would take the token from whoever pulled
 * it. It is given up, and the move is counted so the OTP given back is stale. So is a transfer
 * whose revert cannot be explained because the chain cannot be read (the relayer settles a revert
 * once; there is no later tick for it).
 *
 * A recipient that cannot receive the token (a contract that refuses it) is
 * not helped by re-signing: the transfer is given up, and so is one that
 * reverted MAX_RESIGNS times, and one that a later transfer of the same token
 * supersedes (re-sent now, it would land after that one and undo it: the last
 * request accepted decides where the token goes). Giving up gives back what
 * the request used up (its OTP, its 2-tap registration), since nothing of it
 * is left to land.
 */
export async function recoverTransfer(p: { store: Store; chain: Chain; config: Config; row: ChainTxRow; log: RelayerLog; now: number }): Promise<void> {
  const { store, chain, row, log } = p
  const transfer = await store.transfers.findByTx(row.id)
  if (!transfer) return
  const token = (await store.tokens.get(transfer.tokenId))!
  const contract = token.contractAddress as Address
  const recipient = transfer.recipient as Address
  const tokenId = BigInt(token.tokenId)
  let owner: Address | null = null
  try {
    owner = await chain.rpc.read({ address: contract, abi: phygitalTokenAbi, functionName: 'ownerOf', args: [tokenId] })
  } catch (error) {
    if (error instanceof ChainUnreachableError || error instanceof RpcError)
      return giveUp(p, transfer, token, undefined, `the chain could not be read to explain the revert (${error.message}); not re-signed`)
    if (!(error instanceof ContractRevertError)) throw error
  }
  if (owner === recipient) {
    log.info({ transferId: transfer.id }, 'transfer reverted but the recipient already owns the token; nothing to redo')
    return
  }
  const refusal = await checkRecipientCanReceive(chain.rpc, { standard: 'erc721', contract, operator: chain.relayer.address, tokenId, recipient }).then(
    () => undefined,
    (error: unknown) => {
      if (error instanceof BaseError) return error.message
      throw error
    },
  )
  if (refusal) return giveUp(p, transfer, token, owner, refusal)
  if (await store.transfers.hasLaterOfToken(token.id, transfer.id)) return giveUp(p, transfer, token, owner, 'superseded by a later transfer of the token')
  if (transfer.resigned >= MAX_RESIGNS) return giveUp(p, transfer, token, owner, `reverted again after ${MAX_RESIGNS} re-signs`)
  let onChainNonce: bigint
  try {
    onChainNonce = await readChainTokenNonce(chain, token, p.config.chain.tokenNonceReadTimeoutMs)
  } catch (error) {
    if (error instanceof BaseError && error.code === 'not_a_phygital_contract')
      return giveUp(p, transfer, token, owner, `${contract} has no getTokenNonce (a PhygitalToken deployed by an older gateway?)`)
    if (error instanceof ChainStateUnknownError)
      return giveUp(p, transfer, token, owner, `the token's nonce could not be read to explain the revert (${error.reason}); not re-signed`)
    throw error
  }
  // Moves the chain shows that are neither ours (landed) nor known when the transfer was accepted
  // (kept on the transfer: tokens.outside_moves may have been raised since, by a read made after the
  // revert was recorded). A transfer from before migration 016 has only the token's count.
  const outsideNow = Number(onChainNonce) - await store.transfers.countLandedOfToken(token.id)
  const unknownMoves = outsideNow - (transfer.knownOutsideMoves ?? token.outsideMoves ?? 0)
  if (unknownMoves > 0)
    return giveUp(p, transfer, token, owner, `the token moved ${unknownMoves} time(s) outside the gateway after the transfer was accepted; not re-signed over a move the gateway did not make`, onChainNonce)
  // The head the relayer recorded can be a poll behind the blocks that expired the signature: signed
  // against it, the new transaction would expire as the old one did, re-sign after re-sign.
  let head: number
  try {
    head = Number(await chain.rpc.blockNumber())
  } catch (error) {
    if (error instanceof ChainUnreachableError || error instanceof RpcError)
      return giveUp(p, transfer, token, owner, `the chain's head could not be read to re-sign (${error.message}); not re-signed`)
    throw error
  }
  const method = owner === null ? 'mintNFT' : 'claimNFT'
  const queued = await store.tx(async (tx) => {
    // Transfers of this token still queued will each move it once before ours lands (they were queued first).
    const ahead = await tx.transfers.countPendingOfToken(token.id)
    await tx.chainTxs.setTokenNonce(chain.chainId, contract, token.tokenId, Number(onChainNonce) + ahead)
    const signed = await signTransferTx(tx, chain, { token, recipient, method, now: p.now, config: p.config, head })
    await tx.transfers.resign(transfer.id, signed.id, method)
    await passWatch(tx, row, signed.id)
    return signed
  }, { isolation: 'read committed' })
  log.warn({ transferId: transfer.id, from: row.txHash, to: queued.hash, method }, 'transfer re-signed after a revert')
}

/**
 * Nothing of the transfer is left to land: its OTP and 2-tap registration
 * become usable again, and the token counts as unminted again if the chain
 * says so (`owner` null; undefined: the chain could not say) and no other
 * transfer of it is on its way. A nonce read (`chainNonce`) is counted as the
 * token's moves, so the OTP given back is stale when the token moved outside.
 */
async function giveUp(
  p: { store: Store; log: RelayerLog; row: ChainTxRow; now: number },
  transfer: TransferRow,
  token: TokenRow,
  owner: Address | null | undefined,
  why: string,
  chainNonce?: bigint,
): Promise<void> {
  const { store } = p
  const returned = await store.tx(async (tx) => {
    // A kiosk claim's transfer: its station shows "failed", and staff may retry it.
    await recordTxStep(tx, p.row, { status: 'failed', hash: p.row.txHash, error: why, now: p.now })
    const gaveBack = {
      otp: transfer.otpCode !== null && await tx.otps.release(transfer.otpCode),
      registration: transfer.claimRegistrationId !== null && await tx.claimRegistrations.release(transfer.claimRegistrationId),
      unminted: owner === null && await tx.transfers.countPendingOfToken(token.id) === 0 && (await tx.tokens.setMinted(token.id, false)),
    }
    if (chainNonce !== undefined) await noteChainNonce(tx, (await tx.tokens.get(token.id)) ?? token, chainNonce)
    return gaveBack
  })
  p.log.error({ transferId: transfer.id, tx: p.row.txHash, why, gaveBack: returned }, 'transfer given up after a revert; what it used up is given back')
}
