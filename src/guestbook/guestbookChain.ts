import type { Address } from 'viem'
import type { ChainDeps } from '../chain/chainDeps.js'
import type { ChainSigner } from '../chain/chainKeys.js'
import { GAS, guestbookMintData, setTransfersPausedData } from '../chain/contractCalls.js'
import type { Config } from '../config.js'
import type { GuestbookContractRow, GuestbookEventRow } from '../db/guestbook.js'
import type { Store } from '../db/store.js'
import { ConflictError, NotFoundError } from '../errors.js'
import { spendOtp } from '../otps/spendOtp.js'
import { queueDeploy } from '../relayer/queueDeploy.js'
import { queueTx } from '../relayer/queueTx.js'
import { type EventSelector, findGuestbookEvent, teamContract } from './guestbookEvents.js'

/**
 * Queues the deploy of a guestbook and lists it as `pending` (address null)
 * until the relayer sees the deploy mined. Runs inside the caller's store.tx.
 */
export function queueGuestbookDeploy(
  store: Store,
  chain: ChainSigner,
  config: Config,
  p: { teamId: number; name: string; symbol: string; now: number },
): { contractId: number; txHash: string } {
  const tx = queueDeploy(store, chain, config, { contract: 'guestbook', ...p })
  const contractId = store.guestbook.insertContract({
    teamId: p.teamId,
    name: p.name,
    symbol: p.symbol,
    chainId: chain.chainId,
    address: null,
    plannedAddress: tx.contractAddress,
    deployTxId: tx.id,
    now: p.now,
  })
  return { contractId, txHash: tx.hash }
}

/** POST /events/contracts: answers at once with the new contract's id. */
export function deployGuestbook(deps: ChainDeps, p: { teamId: number; name: string; symbol: string; chainId: number }): { contractId: number } {
  const chain = deps.chains.signer(p.chainId)
  return deps.store.tx(() => queueGuestbookDeploy(deps.store, chain, deps.config, { ...p, now: deps.now() }))
}

/** Our relayer owns only the guestbooks it deployed; a contract registered by address cannot be minted or paused from here. */
function managedAddress(contract: GuestbookContractRow): Address {
  if (contract.deployTxId === null)
    throw new ConflictError('contract_not_managed', `Guestbook ${contract.id} was deployed outside this gateway, which cannot mint or pause it`)
  return (contract.address ?? contract.plannedAddress) as Address
}

function queueMint(
  deps: ChainDeps,
  event: GuestbookEventRow,
  recipient: Address,
  chipUid: string | null,
  otpCode: string | null,
  now: number,
): { txnHash: string; chainId: number } {
  const { store } = deps
  const contract = store.guestbook.getContract(event.contractId)!
  const to = managedAddress(contract)
  if (chipUid !== null && store.transfers.guestbookMintedByChip(event.id, chipUid))
    throw new ConflictError('already_minted', 'This chip has already minted this event')
  if (store.transfers.guestbookMintedTo(event.id, recipient))
    throw new ConflictError('already_minted', `${recipient} already has this event's token`)
  const tx = queueTx(store, deps.chains.signer(contract.chainId), {
    kind: 'guestbook_mint',
    to,
    data: guestbookMintData(recipient, BigInt(event.tokenId)),
    gas: GAS.guestbookMint,
    now,
    fallbackMaxFeeGwei: deps.config.chain.fallbackMaxFeeGwei,
  })
  store.transfers.insertGuestbookMint({ eventId: event.id, recipient, chipUid, otpCode, chainTxId: tx.id, createdAt: now })
  return { txnHash: tx.hash, chainId: contract.chainId }
}

/** POST /events/mint (API key): one token of the event per recipient. */
export function mintGuestbookEvent(deps: ChainDeps, p: { teamId: number; selector: EventSelector; recipient: Address }): { txnHash: string; chainId: number } {
  const now = deps.now()
  return deps.store.tx(() => queueMint(deps, findGuestbookEvent(deps.store, p.teamId, p.selector), p.recipient, null, null, now))
}

/** POST /events/mint/self: the OTP of a tap on a chip assigned to the event; one mint per chip per event. */
export function mintGuestbookEventSelf(deps: ChainDeps, p: { code: string | undefined; recipient: Address }): { txnHash: string; chainId: number } {
  const now = deps.now()
  return deps.store.tx(() => {
    const otp = spendOtp(deps.store, { code: p.code, type: 'GUESTBOOK_EVENT', usedFor: 'guestbook-mint', now })
    const event = deps.store.guestbook.getEvent(otp.guestbookEventId!)
    if (!event) throw new NotFoundError('event_not_found', 'The guestbook event of this OTP no longer exists')
    return queueMint(deps, event, p.recipient, otp.chipUid, otp.code, now)
  })
}

/** POST /events/toggle-pause-state: paused = soulbound (transfers revert on chain; mints still work). */
export function setGuestbookPaused(
  deps: ChainDeps,
  p: { teamId: number; contractId?: number; contractAddress?: string; chainId?: number; pauseState: boolean },
): { txnHash: string; chainId: number } {
  const { store } = deps
  const now = deps.now()
  return store.tx(() => {
    let contract: GuestbookContractRow | undefined
    if (p.contractId !== undefined) contract = teamContract(store, p.teamId, p.contractId)
    else {
      contract = store.guestbook.findContractByAddress(p.chainId!, p.contractAddress!)
      if (!contract || contract.teamId !== p.teamId) throw new NotFoundError('contract_not_found', 'No guestbook contract of your team at this address and chain')
    }
    const tx = queueTx(store, deps.chains.signer(contract.chainId), {
      kind: 'pause',
      to: managedAddress(contract),
      data: setTransfersPausedData(p.pauseState),
      gas: GAS.pause,
      now,
      fallbackMaxFeeGwei: deps.config.chain.fallbackMaxFeeGwei,
    })
    store.guestbook.setPaused(contract.id, p.pauseState)
    return { txnHash: tx.hash, chainId: contract.chainId }
  })
}
