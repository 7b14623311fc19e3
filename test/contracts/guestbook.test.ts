import { type Address, type Hex, parseEventLogs, zeroAddress } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { guestbookAbi } from '../../contracts/artifacts/Guestbook.js'
import { claimSigningHash, signClaim } from '../../src/chain/claimSignature.js'
import { BASE_URI, type Chain, expectRevert, startChain } from './deploy.js'

let chain: Chain
let guestbook: Address
let holder: Address
let stranger: Address

beforeAll(async () => {
  chain = await startChain()
  guestbook = (await chain.deployGuestbook()).address
  holder = chain.holder.account.address
  stranger = chain.stranger.account.address
})

afterAll(async () => {
  await chain?.anvil.stop()
})

const c = () => ({ address: guestbook, abi: guestbookAbi }) as const
const balanceOf = (account: Address, id: bigint) => chain.publicClient.readContract({ ...c(), functionName: 'balanceOf', args: [account, id] })
const nonceOf = (account: Address) => chain.publicClient.readContract({ ...c(), functionName: 'getMintNonce', args: [account] })
const uri = (id: bigint) => chain.publicClient.readContract({ ...c(), functionName: 'uri', args: [id] })

async function sign(account: Address, id: bigint, options: { key?: Hex; blockExpiry?: bigint; chainId?: bigint } = {}) {
  const blockExpiry = options.blockExpiry ?? (await chain.blockNumber()) + 10n
  const nonce = await nonceOf(account)
  const sig = signClaim(options.key ?? chain.verifierKey, { blockExpiry, recipient: account, tokenId: id, contract: guestbook, chainId: options.chainId ?? 31337n, nonce })
  return { sig, blockExpiry }
}

/** Relayer-style: the deployer submits someone else's signed mint. */
function mintWithSig(account: Address, id: bigint, sig: Hex, blockExpiry: bigint, data: Hex = '0x') {
  return chain.deployer.writeContract({ ...c(), functionName: 'mintWithSig', args: [account, id, data, sig, blockExpiry] })
}

function transfer(from: Address, to: Address, id: bigint) {
  return chain.holder.writeContract({ ...c(), functionName: 'safeTransferFrom', args: [from, to, id, 1n, '0x'] })
}

describe('Guestbook deployment', () => {
  it('has a name, a symbol, the deployer as owner, the signVerifier, and transfers on', async () => {
    expect(await chain.publicClient.readContract({ ...c(), functionName: 'name' })).toBe('Tapgate Guestbook')
    expect(await chain.publicClient.readContract({ ...c(), functionName: 'symbol' })).toBe('TGG')
    expect(await chain.publicClient.readContract({ ...c(), functionName: 'owner' })).toBe(chain.deployer.account.address)
    expect(await chain.publicClient.readContract({ ...c(), functionName: 'signVerifier' })).toBe(chain.verifier)
    expect(await chain.publicClient.readContract({ ...c(), functionName: 'transfersPaused' })).toBe(false)
  })

  it('supports ERC-165, ERC-1155 and ERC-1155 Metadata URI', async () => {
    const supports = (id: Hex) => chain.publicClient.readContract({ ...c(), functionName: 'supportsInterface', args: [id] })
    expect(await supports('0x01ffc9a7')).toBe(true)
    expect(await supports('0xd9b67a26')).toBe(true)
    expect(await supports('0x0e89341c')).toBe(true)
    expect(await supports('0x80ac58cd')).toBe(false)
  })
})

describe('mint (owner)', () => {
  it('mints one token to the given account', async () => {
    const receipt = await chain.mined(await chain.deployer.writeContract({ ...c(), functionName: 'mint', args: [holder, 1n] }))
    expect(await balanceOf(holder, 1n)).toBe(1n)
    const [event] = parseEventLogs({ abi: guestbookAbi, logs: receipt.logs, eventName: 'TransferSingle' })
    expect(event?.args).toEqual({ operator: chain.deployer.account.address, from: zeroAddress, to: holder, id: 1n, value: 1n })
  })

  it('is onlyOwner', async () => {
    const [who] = await expectRevert(chain.holder.writeContract({ ...c(), functionName: 'mint', args: [holder, 1n] }), 'OwnableUnauthorizedAccount')
    expect(who).toBe(holder)
    expect(await balanceOf(holder, 1n)).toBe(1n)
  })
})

describe('mintWithSig', () => {
  it('computes the same signing hash as claimSigningHash in TS, chain id included', async () => {
    const p = { blockExpiry: 99n, recipient: stranger, tokenId: 5n, contract: guestbook, chainId: 31337n, nonce: await nonceOf(stranger) }
    const onChain = await chain.publicClient.readContract({ ...c(), functionName: 'getMintSigningHash', args: [p.blockExpiry, p.recipient, p.tokenId] })
    expect(onChain).toBe(claimSigningHash(p))
    expect(onChain).not.toBe(claimSigningHash({ ...p, chainId: 1n }))
    const forMainnet = await sign(stranger, 5n, { chainId: 1n })
    await expectRevert(mintWithSig(stranger, 5n, forMainnet.sig, forMainnet.blockExpiry), 'InvalidSignature')
  })

  it('mints one token with a valid signature and bumps the nonce; the same signature again is InvalidSignature', async () => {
    const { sig, blockExpiry } = await sign(stranger, 2n)
    await chain.mined(await mintWithSig(stranger, 2n, sig, blockExpiry, '0x1234'))
    expect(await balanceOf(stranger, 2n)).toBe(1n)
    expect(await nonceOf(stranger)).toBe(1n)
    await expectRevert(mintWithSig(stranger, 2n, sig, blockExpiry), 'InvalidSignature')
    expect(await balanceOf(stranger, 2n)).toBe(1n)
  })

  it('rejects expired signatures (SignatureExpired)', async () => {
    const now = await chain.blockNumber()
    const expired = await sign(stranger, 2n, { blockExpiry: now })
    expect(await expectRevert(mintWithSig(stranger, 2n, expired.sig, now), 'SignatureExpired')).toEqual([now])
    const soon = await sign(stranger, 2n, { blockExpiry: now + 3n })
    await chain.testClient.mine({ blocks: 5 })
    expect(await expectRevert(mintWithSig(stranger, 2n, soon.sig, soon.blockExpiry), 'SignatureExpired')).toEqual([now + 3n])
  })

  it('rejects a signature for another account, id, or from another key (InvalidSignature)', async () => {
    const { sig, blockExpiry } = await sign(stranger, 3n)
    await expectRevert(mintWithSig(holder, 3n, sig, blockExpiry), 'InvalidSignature')
    await expectRevert(mintWithSig(stranger, 4n, sig, blockExpiry), 'InvalidSignature')
    const wrongKey = await sign(stranger, 3n, { key: generatePrivateKey() })
    await expectRevert(mintWithSig(stranger, 3n, wrongKey.sig, wrongKey.blockExpiry), 'InvalidSignature')
    await expectRevert(mintWithSig(stranger, 3n, '0x', blockExpiry), 'InvalidSignature')
    expect(await balanceOf(holder, 3n)).toBe(0n)
    expect(await balanceOf(stranger, 3n)).toBe(0n)
    expect(await nonceOf(stranger)).toBe(1n)
  })

  it('checks onERC1155Received on contract recipients', async () => {
    const { address: notAReceiver } = await chain.deployGuestbook()
    const { sig, blockExpiry } = await sign(notAReceiver, 1n)
    expect(await expectRevert(mintWithSig(notAReceiver, 1n, sig, blockExpiry), 'ERC1155InvalidReceiver')).toEqual([notAReceiver])
  })
})

describe('uri', () => {
  it('is baseURI + decimal id by default', async () => {
    expect(await uri(1n)).toBe(`${BASE_URI}1`)
    expect(await uri(2n ** 64n)).toBe(`${BASE_URI}18446744073709551616`)
  })

  it('setTokenURI overrides one id, emits URI(value, id), clears with "" and is onlyOwner', async () => {
    const receipt = await chain.mined(await chain.deployer.writeContract({ ...c(), functionName: 'setTokenURI', args: [7n, 'ipfs://event-7'] }))
    const [event] = parseEventLogs({ abi: guestbookAbi, logs: receipt.logs, eventName: 'URI' })
    expect(event?.args).toEqual({ value: 'ipfs://event-7', id: 7n })
    expect(await uri(7n)).toBe('ipfs://event-7')
    expect(await uri(8n)).toBe(`${BASE_URI}8`)
    await expectRevert(chain.holder.writeContract({ ...c(), functionName: 'setTokenURI', args: [7n, 'https://evil'] }), 'OwnableUnauthorizedAccount')
    await chain.mined(await chain.deployer.writeContract({ ...c(), functionName: 'setTokenURI', args: [7n, ''] }))
    expect(await uri(7n)).toBe(`${BASE_URI}7`)
  })

  it('setBaseURI changes the default and is onlyOwner', async () => {
    await chain.mined(await chain.deployer.writeContract({ ...c(), functionName: 'setBaseURI', args: ['https://other.example/gb/'] }))
    expect(await uri(9n)).toBe('https://other.example/gb/9')
    await expectRevert(chain.holder.writeContract({ ...c(), functionName: 'setBaseURI', args: ['https://evil/'] }), 'OwnableUnauthorizedAccount')
    await chain.mined(await chain.deployer.writeContract({ ...c(), functionName: 'setBaseURI', args: [BASE_URI] }))
    expect(await uri(9n)).toBe(`${BASE_URI}9`)
  })
})

describe('transfer pause', () => {
  it('transfers work while not paused', async () => {
    await chain.mined(await chain.deployer.writeContract({ ...c(), functionName: 'mint', args: [holder, 10n] }))
    await chain.mined(await chain.deployer.writeContract({ ...c(), functionName: 'mint', args: [holder, 10n] }))
    await chain.mined(await transfer(holder, stranger, 10n))
    expect(await balanceOf(holder, 10n)).toBe(1n)
    expect(await balanceOf(stranger, 10n)).toBe(1n)
  })

  it('setTransfersPaused(true) emits TransfersPausedSet(true) and blocks transfers, not mints', async () => {
    const receipt = await chain.mined(await chain.deployer.writeContract({ ...c(), functionName: 'setTransfersPaused', args: [true] }))
    const [event] = parseEventLogs({ abi: guestbookAbi, logs: receipt.logs, eventName: 'TransfersPausedSet' })
    expect(event?.args).toEqual({ paused: true })
    expect(await chain.publicClient.readContract({ ...c(), functionName: 'transfersPaused' })).toBe(true)

    await expectRevert(transfer(holder, stranger, 10n), 'TransfersPaused')
    await expectRevert(
      chain.holder.writeContract({ ...c(), functionName: 'safeBatchTransferFrom', args: [holder, stranger, [10n], [1n], '0x'] }),
      'TransfersPaused',
    )
    // An approved operator cannot move them either.
    await chain.mined(await chain.holder.writeContract({ ...c(), functionName: 'setApprovalForAll', args: [stranger, true] }))
    await expectRevert(
      chain.stranger.writeContract({ ...c(), functionName: 'safeTransferFrom', args: [holder, stranger, 10n, 1n, '0x'] }),
      'TransfersPaused',
    )
    expect(await balanceOf(holder, 10n)).toBe(1n)

    await chain.mined(await chain.deployer.writeContract({ ...c(), functionName: 'mint', args: [holder, 11n] }))
    const { sig, blockExpiry } = await sign(holder, 11n)
    await chain.mined(await mintWithSig(holder, 11n, sig, blockExpiry))
    expect(await balanceOf(holder, 11n)).toBe(2n)
  })

  it('setTransfersPaused(false) lets transfers through again', async () => {
    const receipt = await chain.mined(await chain.deployer.writeContract({ ...c(), functionName: 'setTransfersPaused', args: [false] }))
    expect(parseEventLogs({ abi: guestbookAbi, logs: receipt.logs, eventName: 'TransfersPausedSet' })[0]?.args).toEqual({ paused: false })
    await chain.mined(await transfer(holder, stranger, 11n))
    expect(await balanceOf(holder, 11n)).toBe(1n)
    expect(await balanceOf(stranger, 11n)).toBe(1n)
  })

  it('setTransfersPaused is onlyOwner', async () => {
    await expectRevert(chain.holder.writeContract({ ...c(), functionName: 'setTransfersPaused', args: [true] }), 'OwnableUnauthorizedAccount')
    expect(await chain.publicClient.readContract({ ...c(), functionName: 'transfersPaused' })).toBe(false)
  })
})

describe('setSignVerifier', () => {
  it('rotates the key, emits SignVerifierSet and is onlyOwner', async () => {
    const newKey = generatePrivateKey()
    const newVerifier = privateKeyToAccount(newKey).address
    await expectRevert(chain.holder.writeContract({ ...c(), functionName: 'setSignVerifier', args: [newVerifier] }), 'OwnableUnauthorizedAccount')
    const oldSig = await sign(holder, 12n)
    const receipt = await chain.mined(await chain.deployer.writeContract({ ...c(), functionName: 'setSignVerifier', args: [newVerifier] }))
    expect(parseEventLogs({ abi: guestbookAbi, logs: receipt.logs, eventName: 'SignVerifierSet' })[0]?.args)
      .toEqual({ previousSignVerifier: chain.verifier, newSignVerifier: newVerifier })
    await expectRevert(mintWithSig(holder, 12n, oldSig.sig, oldSig.blockExpiry), 'InvalidSignature')
    const newSig = await sign(holder, 12n, { key: newKey })
    await chain.mined(await mintWithSig(holder, 12n, newSig.sig, newSig.blockExpiry))
    expect(await balanceOf(holder, 12n)).toBe(1n)
  })
})
