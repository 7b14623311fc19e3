import type { Address, Hex } from 'viem'
import { encodeDeployData, encodeFunctionData } from 'viem/utils'
import { guestbookAbi, guestbookBytecode } from '../../contracts/artifacts/Guestbook.js'
import { phygitalTokenAbi, phygitalTokenBytecode } from '../../contracts/artifacts/PhygitalToken.js'
import type { Config } from '../config.js'

/*
 * Calldata for every transaction the gateway sends, with fixed gas limits.
 * Requests are signed when they are accepted, possibly while the RPC is down,
 * so gas cannot be estimated; the limits are the measured use (see
 * test/contracts) with headroom. Only gas used is paid for.
 */

export const GAS = {
  deployPhygital: 2_500_000n,
  deployGuestbook: 3_000_000n,
  transfer: 200_000n,
  guestbookMint: 150_000n,
  pause: 80_000n,
  metadataRefresh: 60_000n,
} as const

export type TransferMethod = 'mintNFT' | 'claimNFT'

/**
 * The gateway's metadata route for a contract: tokenURI = this + tokenId. Without
 * config.publicBaseUrl it is the listen address, which only suits a local kiosk.
 */
export const metadataBaseUri = (config: Pick<Config, 'publicBaseUrl' | 'host' | 'port'>, chainId: number, contract: Address) =>
  `${(config.publicBaseUrl ?? `http://${config.host}:${config.port}`).replace(/\/+$/, '')}/metadata/${chainId}/${contract}/`

export const deployPhygitalData = (p: { name: string; symbol: string; signVerifier: Address; baseUri: string }): Hex =>
  encodeDeployData({ abi: phygitalTokenAbi, bytecode: phygitalTokenBytecode, args: [p.name, p.symbol, p.signVerifier, p.baseUri] })

export const deployGuestbookData = (p: { name: string; symbol: string; signVerifier: Address; baseUri: string }): Hex =>
  encodeDeployData({ abi: guestbookAbi, bytecode: guestbookBytecode, args: [p.name, p.symbol, p.signVerifier, p.baseUri] })

export const transferData = (method: TransferMethod, p: { signature: Hex; blockExpiry: bigint; recipient: Address; tokenId: bigint }): Hex =>
  encodeFunctionData({ abi: phygitalTokenAbi, functionName: method, args: [p.signature, p.blockExpiry, p.recipient, p.tokenId] })

export const refreshMetadataData = (tokenId: bigint): Hex =>
  encodeFunctionData({ abi: phygitalTokenAbi, functionName: 'refreshMetadata', args: [tokenId] })

export const guestbookMintData = (to: Address, id: bigint): Hex =>
  encodeFunctionData({ abi: guestbookAbi, functionName: 'mint', args: [to, id] })

export const setTransfersPausedData = (paused: boolean): Hex =>
  encodeFunctionData({ abi: guestbookAbi, functionName: 'setTransfersPaused', args: [paused] })
