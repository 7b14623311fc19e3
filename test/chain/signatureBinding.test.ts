import { type Address, BaseError, ContractFunctionRevertedError, getAddress, type Hex, keccak256, toHex } from 'viem'
import { foundry } from 'viem/chains'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { phygitalTokenAbi } from '../../contracts/artifacts/PhygitalToken.js'
import { claimSigningHash, signClaim } from '../../src/chain/claimSignature.js'
import { type ChainGateway, contractOf, createChainGateway, OTHER, OTHER_KEY, phygitalTeam } from '../helpers/chainGateway.js'
import { ALICE, call, seedTeam } from '../helpers/gateway.js'

/*
 * A transfer signature is bound to the token's current state (a per-token
 * nonce that every move advances) and to the chain: one handed out for X is
 * dead once the gateway moved the token elsewhere, and one made for another
 * chain does not verify here.
 */

let gw: ChainGateway
let apiKey: string
let contract: Address
const CAROL = getAddress(keccak256(toHex('binding carol')).slice(0, 42))

beforeAll(async () => {
  gw = await createChainGateway()
  const seeded = await seedTeam({ store: gw.store, config: gw.config, clock: { now: Date.now() } }, phygitalTeam('B', [
    { tokenId: '1', chips: ['04EE0000000001'] },
    { tokenId: '2', chips: ['04EE0000000002'] },
  ]))
  apiKey = seeded.apiKey
  contract = await contractOf(gw, seeded.teamId)
  gw.relayer.wake(31337)
  await gw.settle()
})
afterAll(async () => gw?.close())

const headers = () => ({ 'x-service-api-key': apiKey })
const ownerOf = (tokenId: bigint) => gw.publicClient.readContract({ address: contract, abi: phygitalTokenAbi, functionName: 'ownerOf', args: [tokenId] })
const tokenKey = (tokenId: string) => ({ contractAddress: contract, chainId: 31337, tokenId })

async function transfer(tokenId: string, recipient: Address) {
  const res = await call(gw, { method: 'POST', url: '/phygitals/transfer', headers: headers(), payload: { ...tokenKey(tokenId), recipient } })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  await gw.settle()
}

async function signatureFor(tokenId: string, recipient: Address): Promise<{ signature: Hex; blockExpiry: string }> {
  const q = new URLSearchParams({ contractAddress: contract, chainId: '31337', tokenId, recipient }).toString()
  const res = await call(gw, { url: `/phygitals/transfer-signature?${q}`, headers: headers() })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  return res.body
}

/** OTHER's wallet submits claimNFT itself; returns the custom error name, or 'success'. */
async function claimAsOther(s: { signature: Hex; blockExpiry: string }, recipient: Address, tokenId: bigint): Promise<string> {
  const args = [s.signature, BigInt(s.blockExpiry), recipient, tokenId] as const
  try {
    await gw.publicClient.simulateContract({ address: contract, abi: phygitalTokenAbi, functionName: 'claimNFT', args, account: OTHER })
  } catch (error) {
    const revert = error instanceof BaseError ? error.walk((e) => e instanceof ContractFunctionRevertedError) : null
    if (revert instanceof ContractFunctionRevertedError) return revert.data?.errorName ?? 'reverted'
    throw error
  }
  const wallet = gw.wallet(OTHER_KEY)
  const hash = await wallet.writeContract({ address: contract, abi: phygitalTokenAbi, functionName: 'claimNFT', args, chain: foundry, account: wallet.account! })
  const receipt = await gw.publicClient.waitForTransactionReceipt({ hash })
  return receipt.status
}

describe('transfer signatures are bound to the token and the chain', () => {
  test('a signature handed out for X stops working once the gateway moved the token to Y: X cannot pull it back', async () => {
    await transfer('1', ALICE)
    const forOther = await signatureFor('1', OTHER)
    await transfer('1', CAROL)
    expect(await ownerOf(1n)).toBe(CAROL)

    expect(await claimAsOther(forOther, OTHER, 1n)).toBe('InvalidSignature')
    expect(await ownerOf(1n)).toBe(CAROL)
    // A signature handed out now works, once.
    const fresh = await signatureFor('1', OTHER)
    expect(await claimAsOther(fresh, OTHER, 1n)).toBe('success')
    expect(await ownerOf(1n)).toBe(OTHER)
    expect(await claimAsOther(fresh, OTHER, 1n)).toBe('InvalidSignature')
  })

  test('the signed digest includes the chain id: the contract computes it with 31337, and a signature for chain 1 does not verify', async () => {
    await transfer('2', ALICE)
    const signer = gw.chains.get(31337)!.signer.key
    const head = await gw.publicClient.getBlockNumber()
    const nonce = await gw.publicClient.readContract({ address: contract, abi: phygitalTokenAbi, functionName: 'getTokenNonce', args: [2n] })
    const p = { blockExpiry: head + 50n, recipient: OTHER, tokenId: 2n, contract, nonce }
    const onChain = await gw.publicClient.readContract({
      address: contract, abi: phygitalTokenAbi, functionName: 'getClaimSigningHash', args: [p.blockExpiry, p.recipient, p.tokenId],
    })
    expect(onChain).toBe(claimSigningHash({ ...p, chainId: 31337n }))
    expect(onChain).not.toBe(claimSigningHash({ ...p, chainId: 1n }))

    const forMainnet = signClaim(signer, { ...p, chainId: 1n })
    expect(await claimAsOther({ signature: forMainnet, blockExpiry: String(p.blockExpiry) }, OTHER, 2n)).toBe('InvalidSignature')
    const forHere = signClaim(signer, { ...p, chainId: 31337n })
    expect(await claimAsOther({ signature: forHere, blockExpiry: String(p.blockExpiry) }, OTHER, 2n)).toBe('success')
  })
})
