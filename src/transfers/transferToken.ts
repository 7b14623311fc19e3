import type { Address } from 'viem'
import type { ChainDeps } from '../chain/chainDeps.js'
import { checkRecipientCanReceive } from '../chain/recipientCheck.js'
import type { OtpRow } from '../db/otps.js'
import type { Store } from '../db/store.js'
import type { TokenKey, TokenRow } from '../db/tokens.js'
import type { TransferRow } from '../db/transfers.js'
import { ConflictError, NotFoundError } from '../errors.js'
import { checkOtp, spendOtp } from '../otps/spendOtp.js'
import { findToken } from '../phygitals/findTeamToken.js'
import { useClaimRegistration } from './claimGate.js'
import { signTransferTx } from './signTransferTx.js'

export type AcceptedTransfer = { initialTxHash: string; token: TokenRow; txId: number; transferId: number; recipient: Address }

/** Runs inside the transfer's transaction, after it is recorded: what else must commit with it (a kiosk claim's step). */
export type OnAccepted = (accepted: AcceptedTransfer) => void

/**
 * Accepts a transfer: the 2-tap gate, the relayed mintNFT/claimNFT and the
 * transfer record commit together (with the OTP, when one authorized it), so
 * the answer's hash always names a transaction that will be sent.
 */
function accept(
  deps: ChainDeps,
  p: { token: () => TokenRow; recipient: Address; via: TransferRow['via']; otp?: () => string; onAccepted?: OnAccepted },
): AcceptedTransfer {
  const { store, config } = deps
  const now = deps.now()
  return store.tx(() => {
    const otpCode = p.otp?.() ?? null
    const token = p.token()
    const chain = deps.chains.signer(token.chainId)
    const registration = useClaimRegistration(store, token, p.recipient, now)
    const method = token.minted ? 'claimNFT' : 'mintNFT'
    const tx = signTransferTx(store, chain, { token, recipient: p.recipient, method, now, config })
    const transferId = store.transfers.insert({
      tokenId: token.id,
      teamId: token.teamId,
      recipient: p.recipient,
      method,
      via: p.via,
      otpCode,
      claimRegistrationId: registration?.id ?? null,
      chainTxId: tx.id,
      createdAt: now,
    })
    store.tokens.setMinted(token.id, true)
    const accepted = { initialTxHash: tx.hash, token, txId: tx.id, transferId, recipient: p.recipient }
    p.onAccepted?.(accepted)
    return accepted
  })
}

/**
 * Before anything is spent: a recipient the chain says cannot take the token
 * (400 recipient_cannot_receive). The chain's signer is required first, so a
 * chain this gateway has no keys for is refused as before; an RPC that is down
 * skips the check (the write is still accepted).
 */
export async function checkRecipient(deps: ChainDeps, token: TokenRow, recipient: Address): Promise<void> {
  const signer = deps.chains.signer(token.chainId)
  const chain = deps.chains.get(token.chainId)
  const check = { standard: 'erc721', contract: token.contractAddress as Address, operator: signer.relayer.address, tokenId: BigInt(token.tokenId), recipient } as const
  if (chain) await checkRecipientCanReceive(chain.rpc, check)
}

/** POST /phygitals/transfer: the team's token, by its on-chain key. */
export async function transferWithApiKey(deps: ChainDeps, p: { key: TokenKey; teamId: number; recipient: Address }): Promise<AcceptedTransfer> {
  await checkRecipient(deps, findToken(deps.store, p.key, p.teamId), p.recipient)
  return accept(deps, { token: () => findToken(deps.store, p.key, p.teamId), recipient: p.recipient, via: 'api_key' })
}

/** The token a PHYGITAL_CLAIM OTP is for: the one linked at tap time, else the chip's token now. */
export function tokenOfOtp(store: Store, otp: OtpRow): TokenRow {
  const token = otp.tokenId === null ? store.tokens.findByChip(otp.chipUid) : store.tokens.get(otp.tokenId)
  if (!token) throw new ConflictError('chip_not_linked', 'The tapped chip is not linked to a phygital token')
  return token
}

/** POST /phygitals/transfer/pullable: the token of the tapped chip, authorized by its OTP (spent only if the transfer is accepted). */
export async function transferWithOtp(deps: ChainDeps, p: { code: string | undefined; recipient: Address; onAccepted?: OnAccepted }): Promise<AcceptedTransfer> {
  const unspent = checkOtp(deps.store, { code: p.code, type: 'PHYGITAL_CLAIM', now: deps.now() })
  await checkRecipient(deps, tokenOfOtp(deps.store, unspent), p.recipient)
  let otp: OtpRow | undefined
  return accept(deps, {
    recipient: p.recipient,
    via: 'otp',
    onAccepted: p.onAccepted,
    otp: () => {
      otp = spendOtp(deps.store, { code: p.code, type: 'PHYGITAL_CLAIM', usedFor: 'transfer', now: deps.now() })
      return otp.code
    },
    token: () => tokenOfOtp(deps.store, otp!),
  })
}

/** POST /phygitals/transfer/self-service: the token linked to one of the team's tags. */
export async function transferBySelfService(deps: ChainDeps, p: { tagUid: string; teamId: number; recipient: Address }): Promise<AcceptedTransfer> {
  const token = () => {
    const chip = deps.store.chips.get(p.tagUid)
    if (!chip || chip.teamId !== p.teamId) throw new NotFoundError('chip_not_found', `No chip ${p.tagUid} in your team`)
    const linked = deps.store.tokens.findByChip(chip.uid)
    if (!linked) throw new ConflictError('chip_not_linked', `Chip ${p.tagUid} is not linked to a phygital token`)
    return linked
  }
  await checkRecipient(deps, token(), p.recipient)
  return accept(deps, { recipient: p.recipient, via: 'self_service', token })
}
