/* What the kiosk says about a transaction's steps, a claim, the gateway's refusals, the 2-tap wait. */
import type { ClaimSummary, TxStatus } from '../../../wire/feedProtocol.js'

/**
 * A transaction's step in the strip and on the claimed screen. A product claim is a transfer
 * ("Sending…"); a check-in's guestbook token, collected or not, is minted ("Minting…").
 */
export function chainText(status: TxStatus, hash: string | null, kind: ClaimSummary['kind']): string {
  const short = hash ? `${hash.slice(0, 6)}…${hash.slice(-4)}` : ''
  switch (status) {
    case 'queued':
      return kind === 'token' ? 'Sending…' : 'Minting…'
    case 'sent':
      return `Sent ${short}`
    case 'replaced':
      return `Replaced ${short}`
    case 'confirmed':
      return `In the wallet ✓ ${short}`
    case 'failed':
      return kind === 'token' ? 'Transfer failed: staff will retry' : 'Mint failed: staff will retry'
  }
}

/** The strip's chain column for a claim before its transaction exists. */
export function claimStepText(step: ClaimSummary['step']): string {
  switch (step) {
    case 'open':
      return 'Waiting for a wallet'
    case 'opened':
      return 'Finishing on a phone'
    case 'registered':
    case 'early':
      return 'Registered: tap again later'
    case 'claimed':
      return 'Claimed'
    case 'expired':
      return 'Expired'
    case 'moved':
      return 'Claimed meanwhile'
  }
}

/** The address refusals of POST /kiosk/claims/:id/recipient, in the customer's words. */
const RECIPIENT_ERRORS: Record<string, string> = {
  invalid_recipient: 'This is not a valid wallet address: check it and try again',
  ens_not_configured: 'Names need internet — use the 0x address',
  ens_name_not_found: 'No wallet has this name: check it, or use the 0x address',
  recipient_cannot_receive: 'This address cannot receive the token: use another wallet',
  claim_not_open: 'This claim is being finished on a phone',
  claim_used: 'This claim was already finished',
  claim_expired: 'Time ran out: tap the tag again',
  token_moved: 'This product was claimed meanwhile: nothing was sent',
  chain_state_unknown: 'The blockchain is not answering right now: nothing was sent, try again in a moment',
  network: 'The kiosk lost the gateway: try again in a moment',
}

export function recipientError(error: string, message: string): string {
  return RECIPIENT_ERRORS[error] ?? (message || 'That did not work: please ask staff')
}

export function handoffError(error: string, message: string): string {
  if (error === 'claim_not_open' || error === 'claim_used') return 'This claim is already being finished elsewhere'
  if (error === 'claim_expired') return 'Time ran out: tap the tag again'
  if (error === 'token_moved') return RECIPIENT_ERRORS.token_moved!
  if (error === 'network') return RECIPIENT_ERRORS.network!
  return message || 'No link right now: use the address field'
}

/** "in 4:05" / "in 1:02:03" until `untilMs`, or null once it has passed. */
export function countdown(untilMs: number, nowMs: number): string | null {
  const s = Math.ceil((untilMs - nowMs) / 1000)
  if (s <= 0) return null
  const h = Math.floor(s / 3600)
  const m = Math.floor((s % 3600) / 60)
  const sec = String(s % 60).padStart(2, '0')
  return h > 0 ? `in ${h}:${String(m).padStart(2, '0')}:${sec}` : `in ${m}:${sec}`
}
