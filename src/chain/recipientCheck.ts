import type { Address, Hex } from 'viem'
import { encodeFunctionData } from 'viem/utils'
import { BadRequestError } from '../errors.js'
import { ChainUnreachableError, RpcError, type Rpc } from './rpc.js'

/*
 * A token sent where it can never arrive reverts on chain, after the request
 * was answered and its OTP or registration spent. What can be known before
 * answering is checked here: the zero address never receives, and a contract
 * receives only if it answers the receiver callback the token contract will
 * make (ERC-721 onERC721Received, ERC-1155 onERC1155Received) with its
 * selector. The call is made as the token contract makes it, from the token
 * contract's address, with `from` the zero address (a mint's; a claim's real
 * `from` would cost another read, and receivers that care about it are rare).
 * A chain that cannot be read right now is not waited for: writes are
 * accepted while the RPC is down, and a transaction that reverts later gives
 * back what it spent (src/outbox/settleTx.ts, src/relayer/recoverTransfer.ts).
 */

const zero = '0x0000000000000000000000000000000000000000'

/** How long the check may hold up an answer; past it, the write is accepted unchecked. */
const CHECK_TIMEOUT_MS = 1_500

const receiverAbi = [
  {
    type: 'function',
    name: 'onERC721Received',
    stateMutability: 'nonpayable',
    inputs: [{ type: 'address' }, { type: 'address' }, { type: 'uint256' }, { type: 'bytes' }],
    outputs: [{ type: 'bytes4' }],
  },
  {
    type: 'function',
    name: 'onERC1155Received',
    stateMutability: 'nonpayable',
    inputs: [{ type: 'address' }, { type: 'address' }, { type: 'uint256' }, { type: 'uint256' }, { type: 'bytes' }],
    outputs: [{ type: 'bytes4' }],
  },
] as const

const selectors = { erc721: '0x150b7a02', erc1155: '0xf23a6e61' } as const

export type ReceiverCheck = {
  standard: 'erc721' | 'erc1155'
  /** The token contract (PhygitalToken or Guestbook) that will call the receiver. */
  contract: Address
  /** Who sends the transaction (the relayer): the `operator` the receiver sees. */
  operator: Address
  tokenId: bigint
  recipient: Address
}

const cannotReceive = (recipient: string, why: string) =>
  new BadRequestError('recipient_cannot_receive', `${recipient} cannot receive this token: ${why}`)

/** The zero address never receives a token; refused before anything is looked up or spent. */
export function refuseZeroAddress(recipient: string): void {
  if (recipient.toLowerCase() === zero) throw cannotReceive(recipient, 'it is the zero address (tokens sent there are burned, and ours refuse it)')
}

/**
 * Throws 400 recipient_cannot_receive when the chain says `recipient` would
 * make the mint or transfer revert. Resolves quietly when it can receive, and
 * when the chain cannot be read right now (the write then goes ahead).
 */
export async function checkRecipientCanReceive(rpc: Rpc, p: ReceiverCheck): Promise<void> {
  refuseZeroAddress(p.recipient)
  const options = { timeoutMs: CHECK_TIMEOUT_MS }
  let result: Hex
  try {
    const code = await rpc.request<Hex>('eth_getCode', [p.recipient, 'latest'], options)
    if (code === '0x' || code === '0x0') return
    const data =
      p.standard === 'erc721'
        ? encodeFunctionData({ abi: receiverAbi, functionName: 'onERC721Received', args: [p.operator, zero, p.tokenId, '0x'] })
        : encodeFunctionData({ abi: receiverAbi, functionName: 'onERC1155Received', args: [p.operator, zero, p.tokenId, 1n, '0x'] })
    result = await rpc.request<Hex>('eth_call', [{ from: p.contract, to: p.recipient, data }, 'latest'], options)
  } catch (error) {
    if (error instanceof ChainUnreachableError) return
    // A revert is the receiver refusing; any other refusal by the node says nothing about the recipient.
    if (error instanceof RpcError && (error.code === 3 || /revert/i.test(error.message)))
      throw cannotReceive(p.recipient, `it is a contract that rejects ${p.standard === 'erc721' ? 'ERC-721' : 'ERC-1155'} tokens`)
    if (error instanceof RpcError) return
    throw error
  }
  // The token contract decodes a bytes4 from a full word and compares it with the selector.
  if (result.length < 66 || result.slice(0, 10).toLowerCase() !== selectors[p.standard])
    throw cannotReceive(p.recipient, `it is a contract that does not implement ${p.standard === 'erc721' ? 'onERC721Received' : 'onERC1155Received'}`)
}
