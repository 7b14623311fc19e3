import type { Address } from 'viem'
import type { ChainDeps } from '../chain/chainDeps.js'
import type { ChainSigner } from '../chain/chainKeys.js'
import { GAS, guestbookMintData, setTransfersPausedData } from '../chain/contractCalls.js'
import { checkRecipientCanReceive } from '../chain/recipientCheck.js'
import type { Config } from '../config.js'
import type { GuestbookContractRow, GuestbookEventRow } from '../db/guestbook.js'
import { isUniqueViolation } from '../db/storeErrors.js'
import type { Tx } from '../db/types.js'
import { BadRequestError, ConflictError, NotFoundError } from '../errors.js'
import { checkOtp, spendOtp } from '../otps/spendOtp.js'
import { queueDeploy } from '../outbox/queueDeploy.js'
import { queueTx } from '../outbox/queueTx.js'
import { type EventSelector, findGuestbookEvent, teamContract } from './guestbookEvents.js'

/**
 * Queues the deploy of a guestbook and lists it as `pending` (address null)
 * until the relayer sees the deploy mined. Runs inside the caller's transaction (`tx`).
 */
export async function queueGuestbookDeploy(
  tx: Tx,
  chain: ChainSigner,
  config: Config,
  p: { teamId: number; name: string; symbol: string; now: number },
): Promise<{ contractId: number; txHash: string }> {
  const queued = await queueDeploy(tx, chain, config, { contract: 'guestbook', ...p })
  const contractId = await tx.guestbook.insertContract({
    teamId: p.teamId,
    name: p.name,
    symbol: p.symbol,
    chainId: chain.chainId,
    address: null,
    plannedAddress: queued.contractAddress,
    deployTxId: queued.id,
    now: p.now,
  })
  return { contractId, txHash: queued.hash }
}

/** POST /events/contracts: answers at once with the new contract's id. */
export function deployGuestbook(deps: ChainDeps, p: { teamId: number; name: string; symbol: string; chainId: number }): Promise<{ contractId: number }> {
  const chain = deps.chains.signer(p.chainId)
  return deps.store.tx(async (tx) => {
    const queued = await queueGuestbookDeploy(tx, chain, deps.config, { ...p, now: deps.now() })
    return queued
  }, { isolation: 'read committed' })
}

/**
 * The chain a team's guestbook goes on when nobody names one (a proof event's first mint, an event
 * made in the console): the embedded chain when the gateway runs one, else the first configured chain
 * (docs/decisions.md, issue 26). Undefined: the gateway has no chain at all.
 */
export const findDefaultGuestbookChain = (deps: Pick<ChainDeps, 'chains'>): ChainSigner | undefined => deps.chains.list()[0]

/**
 * findDefaultGuestbookChain's chain, for a guestbook about to be deployed. `doing` ends the error's sentence.
 *
 * @throws BadRequestError chain_not_configured (no chain at all)
 */
export function defaultGuestbookChain(deps: Pick<ChainDeps, 'chains'>, doing: string): ChainSigner {
  const chain = findDefaultGuestbookChain(deps)
  if (!chain) throw new BadRequestError('chain_not_configured', `This gateway has no chain ${doing}`)
  return chain
}

/** Our relayer owns only the guestbooks it deployed; a contract registered by address cannot be minted or paused from here. */
function managedAddress(contract: GuestbookContractRow): Address {
  if (contract.deployTxId === null)
    throw new ConflictError('contract_not_managed', `Guestbook ${contract.id} was deployed outside this gateway, which cannot mint or pause it`)
  return (contract.address ?? contract.plannedAddress) as Address
}

export type QueuedMint = { txnHash: string; chainId: number; txId: number; mintId: number }

/**
 * Queues one guestbook mint (signed into the outbox, recorded in guestbook_mints) inside the
 * caller's transaction (`tx`): POST /events/mint, /events/mint/self and a kiosk check-in (kiosk/checkIns.ts).
 *
 * @throws ConflictError already_minted (the chip or the recipient has it), contract_not_managed
 */
export async function queueMint(
  tx: Tx,
  deps: Pick<ChainDeps, 'chains' | 'config'>,
  event: GuestbookEventRow,
  recipient: Address,
  chipUid: string | null,
  otpCode: string | null,
  now: number,
): Promise<QueuedMint> {
  const contract = (await tx.guestbook.getContract(event.contractId))!
  const to = managedAddress(contract)
  if (chipUid !== null && await tx.transfers.guestbookMintedByChip(event.id, chipUid))
    throw new ConflictError('already_minted', 'This chip has already minted this event')
  if (await tx.transfers.guestbookMintedTo(event.id, recipient))
    throw new ConflictError('already_minted', `${recipient} already has this event's token`)
  const queued = await queueTx(tx, deps.chains.signer(contract.chainId), {
    kind: 'guestbook_mint',
    to,
    data: guestbookMintData(recipient, BigInt(event.tokenId)),
    gas: GAS.guestbookMint,
    now,
    fallbackMaxFeeGwei: deps.config.chain.fallbackMaxFeeGwei,
    })
  const mintId = await tx.transfers.insertGuestbookMint({ eventId: event.id, recipient, chipUid, otpCode, chainTxId: queued.id, createdAt: now }).catch((error: unknown) => {
    // A concurrent mint (another request, another gateway) got past the checks above first: the unique index says so.
    if (isUniqueViolation(error)) throw new ConflictError('already_minted', `${recipient} already has this event's token, or the chip has minted it`)
    throw error
  })
  return { txnHash: queued.hash, chainId: contract.chainId, txId: queued.id, mintId }
}

/**
 * Before anything is spent: a recipient that would make the mint revert (400
 * recipient_cannot_receive), checked from the guestbook's address as the mint
 * will call it. Skipped while the chain cannot be read: the mint is queued
 * anyway, and if it reverts, settleTx gives back what it used up.
 */
async function checkRecipient(deps: ChainDeps, event: GuestbookEventRow, recipient: Address): Promise<void> {
  const contract = (await deps.store.guestbook.getContract(event.contractId))!
  const guestbook = managedAddress(contract)
  const signer = deps.chains.signer(contract.chainId)
  const chain = deps.chains.get(contract.chainId)
  if (chain)
    await checkRecipientCanReceive(chain.rpc, { standard: 'erc1155', contract: guestbook, operator: signer.relayer.address, tokenId: BigInt(event.tokenId), recipient })
}

/** POST /events/mint (API key): one token of the event per recipient. */
export async function mintGuestbookEvent(deps: ChainDeps, p: { teamId: number; selector: EventSelector; recipient: Address }): Promise<{ txnHash: string; chainId: number }> {
  await checkRecipient(deps, await findGuestbookEvent(deps.store, p.teamId, p.selector), p.recipient)
  const now = deps.now()
  return deps.store.tx(async (tx) => {
    const mint = await queueMint(tx, deps, await findGuestbookEvent(tx, p.teamId, p.selector), p.recipient, null, null, now)
    return mint
  }, { isolation: 'read committed' })
}

/** POST /events/mint/self: the OTP of a tap on a chip assigned to the event; one mint per chip per event. */
export async function mintGuestbookEventSelf(
  deps: ChainDeps,
  p: { code: string | undefined; recipient: Address; onQueued?: (mint: QueuedMint, tx: Tx) => Promise<unknown> },
): Promise<QueuedMint> {
  const unspent = await checkOtp(deps.store, { code: p.code, type: 'GUESTBOOK_EVENT', now: deps.now() })
  const event = await deps.store.guestbook.getEvent(unspent.guestbookEventId!)
  if (event) await checkRecipient(deps, event, p.recipient)
  const now = deps.now()
  return deps.store.tx(async (tx) => {
    const otp = await spendOtp(tx, { code: p.code, type: 'GUESTBOOK_EVENT', usedFor: 'guestbook-mint', now })
    const event = await tx.guestbook.getEvent(otp.guestbookEventId!)
    if (!event) throw new NotFoundError('event_not_found', 'The guestbook event of this OTP no longer exists')
    const mint = await queueMint(tx, deps, event, p.recipient, otp.chipUid, otp.code, now)
    await p.onQueued?.(mint, tx)
    return mint
  }, { isolation: 'read committed' })
}

/** POST /events/toggle-pause-state: paused = soulbound (transfers revert on chain; mints still work). */
export function setGuestbookPaused(
  deps: ChainDeps,
  p: { teamId: number; contractId?: number; contractAddress?: string; chainId?: number; pauseState: boolean },
): Promise<{ txnHash: string; chainId: number }> {
  const { store } = deps
  const now = deps.now()
  return store.tx(async (tx) => {
    let contract: GuestbookContractRow | undefined
    if (p.contractId !== undefined) contract = await teamContract(tx, p.teamId, p.contractId)
    else {
      contract = await tx.guestbook.findContractByAddress(p.chainId!, p.contractAddress!)
      if (!contract || contract.teamId !== p.teamId) throw new NotFoundError('contract_not_found', 'No guestbook contract of your team at this address and chain')
    }
    const queued = await queueTx(tx, deps.chains.signer(contract.chainId), {
      kind: 'pause',
      to: managedAddress(contract),
      data: setTransfersPausedData(p.pauseState),
      gas: GAS.pause,
      now,
      fallbackMaxFeeGwei: deps.config.chain.fallbackMaxFeeGwei,
    })
    await tx.guestbook.setPaused(contract.id, p.pauseState)
    return { txnHash: queued.hash, chainId: contract.chainId }
  }, { isolation: 'read committed' })
}
