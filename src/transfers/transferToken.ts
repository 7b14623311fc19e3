import type { Address } from 'viem'
import type { ChainDeps } from '../chain/chainDeps.js'
import { checkRecipientCanReceive } from '../chain/recipientCheck.js'
import type { TokenKey, TokenRow } from '../db/tokens.js'
import type { TransferRow } from '../db/transfers.js'
import type { Repositories, Tx } from '../db/types.js'
import { ConflictError, NotFoundError } from '../errors.js'
import { checkTokenOtp, spendTokenOtp } from '../otps/tokenOtp.js'
import { findToken } from '../tokens/findTeamToken.js'
import { useClaimRegistration } from './claimGate.js'
import { signTransferTx } from './signTransferTx.js'
import { refreshTokenMoves } from '../tokens/tokenMoves.js'

export type AcceptedTransfer = { initialTxHash: string; token: TokenRow; txId: number; transferId: number; recipient: Address }

/** Runs inside the transfer's transaction, after it is recorded, with its handle: what else must commit with it (a kiosk claim's step, its feed notification). */
export type OnAccepted = (accepted: AcceptedTransfer, tx: Tx) => Promise<unknown>

/**
 * Accepts a transfer: the 2-tap gate, the relayed mintNFT/claimNFT and the
 * transfer record commit together (with the OTP, when one authorized it), so
 * the answer's hash always names a transaction that will be sent. The transfer
 * is a move of the token: every OTP issued before it is stale from now on.
 */
function accept(
  deps: ChainDeps,
  p: { token: (tx: Tx) => Promise<{ token: TokenRow; otpCode?: string }>; recipient: Address; via: TransferRow['via']; onAccepted?: OnAccepted },
): Promise<AcceptedTransfer> {
  const { store, config } = deps
  const now = deps.now()
  return store.tx(async (tx) => {
    const { token: found, otpCode = null } = await p.token(tx)
    // Read again under the row's lock (PostgreSQL: FOR UPDATE to COMMIT): two transfers of one token
    // take turns, so the second sees the first's mint and claims instead of minting again.
    const token = (await tx.tokens.lock(found.id)) ?? found
    const chain = deps.chains.signer(token.chainId)
    const registration = await useClaimRegistration(tx, token, p.recipient, now)
    const method = token.minted ? 'claimNFT' : 'mintNFT'
    const signed = await signTransferTx(tx, chain, { token, recipient: p.recipient, method, now, config })
    const transferId = await tx.transfers.insert({
      tokenId: token.id,
      teamId: token.teamId,
      recipient: p.recipient,
      method,
      via: p.via,
      otpCode,
      claimRegistrationId: registration?.id ?? null,
      chainTxId: signed.id,
      createdAt: now,
      // Read under the token's lock, after this request's nonce read was committed: a re-sign never goes
      // beyond it. A token never read quietly has no outside move the gateway knows of.
      knownOutsideMoves: token.outsideMoves ?? 0,
    })
    await tx.tokens.setMinted(token.id, true)
    const moves = await tx.tokens.addMove(token.id)
    // Given back (its transfer given up, src/relayer/recoverTransfer.ts), this OTP works again until the token's next move.
    if (otpCode !== null) await tx.otps.bindToMoves(otpCode, moves)
    const accepted = { initialTxHash: signed.hash, token, txId: signed.id, transferId, recipient: p.recipient }
    await p.onAccepted?.(accepted, tx)
    return accepted
  }, { isolation: 'read committed' })
}

/**
 * Before anything is spent: a recipient the chain says cannot take the token
 * (400 recipient_cannot_receive). The chain's signer is required first, so a
 * chain this gateway has no keys for is refused as before; an RPC that is down
 * skips the recipient check. The token's moves made outside the gateway must be
 * read though (src/tokens/tokenMoves.ts): a token whose moves cannot be known
 * is not moved (503 chain_state_unknown), and nothing is spent.
 */
export async function checkRecipient(deps: ChainDeps, token: TokenRow, recipient: Address): Promise<void> {
  const signer = deps.chains.signer(token.chainId)
  const chain = deps.chains.get(token.chainId)
  const check = { standard: 'erc721', contract: token.contractAddress as Address, operator: signer.relayer.address, tokenId: BigInt(token.tokenId), recipient } as const
  // Both started before either is awaited: an `await` inside the array let the check reject before
  // Promise.all held it (an unhandled rejection, and the two reads no longer ran side by side).
  // Without an RPC there is no recipient check, but the moves are still required (503 chain_state_unknown).
  await Promise.all([chain ? checkRecipientCanReceive(chain.rpc, check) : undefined, refreshTokenMoves(deps, token)])
}

/** POST /phygitals/transfer: the team's token, by its on-chain key. */
export async function transferWithApiKey(deps: ChainDeps, p: { key: TokenKey; teamId: number; recipient: Address }): Promise<AcceptedTransfer> {
  await checkRecipient(deps, await findToken(deps.store, p.key, p.teamId), p.recipient)
  return accept(deps, { token: async (tx) => ({ token: await findToken(tx, p.key, p.teamId) }), recipient: p.recipient, via: 'api_key' })
}

/**
 * POST /phygitals/transfer/pullable: the token of the tapped chip, authorized by its OTP (spent
 * only if the transfer is accepted). An OTP issued before the token's last move is refused (409
 * token_moved), before and again inside the transaction, with nothing spent.
 */
export async function transferWithOtp(deps: ChainDeps, p: { code: string | undefined; recipient: Address; onAccepted?: OnAccepted }): Promise<AcceptedTransfer> {
  const { token } = await checkTokenOtp(deps.store, { code: p.code, now: deps.now() })
  await checkRecipient(deps, token, p.recipient)
  return accept(deps, {
    recipient: p.recipient,
    via: 'otp',
    onAccepted: p.onAccepted,
    token: async (tx) => {
      const spent = await spendTokenOtp(tx, { code: p.code, usedFor: 'transfer', now: deps.now() })
      return { token: spent.token, otpCode: spent.otp.code }
    },
  })
}

/** POST /phygitals/transfer/self-service: the token linked to one of the team's tags. */
export async function transferBySelfService(deps: ChainDeps, p: { tagUid: string; teamId: number; recipient: Address }): Promise<AcceptedTransfer> {
  const token = async (store: Repositories) => {
    const chip = await store.chips.get(p.tagUid)
    if (!chip || chip.teamId !== p.teamId) throw new NotFoundError('chip_not_found', `No chip ${p.tagUid} in your team`)
    const linked = await store.tokens.findByChip(chip.uid)
    if (!linked) throw new ConflictError('chip_not_linked', `Chip ${p.tagUid} is not linked to a phygital token`)
    return linked
  }
  await checkRecipient(deps, await token(deps.store), p.recipient)
  return accept(deps, { recipient: p.recipient, via: 'self_service', token: async (tx) => ({ token: await token(tx) }) })
}
