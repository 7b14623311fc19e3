import { type Address, type Hex, maxUint256, parseEventLogs, zeroAddress } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { phygitalTokenAbi } from '../../contracts/artifacts/PhygitalToken.js'
import { claimSigningHash, signClaim } from '../../src/chain/claimSignature.js'
import { BASE_URI, type Chain, DEPLOYER_KEY, expectRevert, startChain } from './deploy.js'

let chain: Chain
let token: Address
let holder: Address
let stranger: Address

beforeAll(async () => {
  chain = await startChain()
  token = (await chain.deployPhygitalToken()).address
  holder = chain.holder.account.address
  stranger = chain.stranger.account.address
})

afterAll(async () => {
  await chain?.anvil.stop()
})

const read = {
  nonce: (tokenId: bigint) => chain.publicClient.readContract({ address: token, abi: phygitalTokenAbi, functionName: 'getTokenNonce', args: [tokenId] }),
  ownerOf: (tokenId: bigint) => chain.publicClient.readContract({ address: token, abi: phygitalTokenAbi, functionName: 'ownerOf', args: [tokenId] }),
  balanceOf: (account: Address) => chain.publicClient.readContract({ address: token, abi: phygitalTokenAbi, functionName: 'balanceOf', args: [account] }),
}

/** anvil's default chain id, which block.chainid reads. */
const CHAIN_ID = 31337n

/** A claim signed by the contract's signVerifier (or `key`) for the token's current nonce, valid for the next 10 blocks. */
async function sign(recipient: Address, tokenId: bigint, options: { key?: Hex; blockExpiry?: bigint; contract?: Address; chainId?: bigint } = {}) {
  const blockExpiry = options.blockExpiry ?? (await chain.blockNumber()) + 10n
  const nonce = await read.nonce(tokenId)
  const sig = signClaim(options.key ?? chain.verifierKey, { blockExpiry, recipient, tokenId, contract: options.contract ?? token, chainId: options.chainId ?? CHAIN_ID, nonce })
  return { sig, blockExpiry }
}

/** Relayer-style submission: the deployer account sends, whoever the recipient is. */
function mintNFT(sig: Hex, blockExpiry: bigint, recipient: Address, tokenId: bigint) {
  return chain.deployer.writeContract({ address: token, abi: phygitalTokenAbi, functionName: 'mintNFT', args: [sig, blockExpiry, recipient, tokenId] })
}

function claimNFT(sig: Hex, blockExpiry: bigint, recipient: Address, tokenId: bigint) {
  return chain.deployer.writeContract({ address: token, abi: phygitalTokenAbi, functionName: 'claimNFT', args: [sig, blockExpiry, recipient, tokenId] })
}

async function mintTo(recipient: Address, tokenId: bigint) {
  const { sig, blockExpiry } = await sign(recipient, tokenId)
  return chain.mined(await mintNFT(sig, blockExpiry, recipient, tokenId))
}

describe('PhygitalToken deployment', () => {
  it('belongs to the deployer and checks signatures against the given signVerifier', async () => {
    const c = { address: token, abi: phygitalTokenAbi } as const
    expect(await chain.publicClient.readContract({ ...c, functionName: 'owner' })).toBe(chain.deployer.account.address)
    expect(await chain.publicClient.readContract({ ...c, functionName: 'signVerifier' })).toBe(chain.verifier)
    expect(await chain.publicClient.readContract({ ...c, functionName: 'name' })).toBe('Tapgate Phygitals')
    expect(await chain.publicClient.readContract({ ...c, functionName: 'symbol' })).toBe('TGP')
  })

  it('supports ERC-165, ERC-721, ERC-721 Metadata and ERC-4906', async () => {
    const supports = (id: Hex) => chain.publicClient.readContract({ address: token, abi: phygitalTokenAbi, functionName: 'supportsInterface', args: [id] })
    expect(await supports('0x01ffc9a7')).toBe(true)
    expect(await supports('0x80ac58cd')).toBe(true)
    expect(await supports('0x5b5e139f')).toBe(true)
    expect(await supports('0x49064906')).toBe(true)
    expect(await supports('0xd9b67a26')).toBe(false) // ERC-1155
    expect(await supports('0xffffffff')).toBe(false)
  })

  it('computes the same signing hash as claimSigningHash in TS, chain id and token nonce included', async () => {
    const tokenId = 2n ** 200n + 7n
    const p = { blockExpiry: 123_456n, recipient: stranger, tokenId, contract: token, chainId: CHAIN_ID, nonce: await read.nonce(tokenId) }
    const onChain = await chain.publicClient.readContract({
      address: token, abi: phygitalTokenAbi, functionName: 'getClaimSigningHash', args: [p.blockExpiry, p.recipient, p.tokenId],
    })
    expect(onChain).toBe(claimSigningHash(p))
    expect(onChain).not.toBe(claimSigningHash({ ...p, nonce: p.nonce + 1n }))
    expect(onChain).not.toBe(claimSigningHash({ ...p, chainId: 1n }))
  })
})

describe('mintNFT', () => {
  it('mints to the recipient with a valid signature and advances the token nonce', async () => {
    expect(await read.nonce(1n)).toBe(0n)
    const receipt = await mintTo(holder, 1n)
    expect(await read.ownerOf(1n)).toBe(holder)
    expect(await read.balanceOf(holder)).toBe(1n)
    expect(await read.nonce(1n)).toBe(1n)
    const [transfer] = parseEventLogs({ abi: phygitalTokenAbi, logs: receipt.logs, eventName: 'Transfer' })
    expect(transfer?.args).toEqual({ from: zeroAddress, to: holder, tokenId: 1n })
    expect(await chain.publicClient.readContract({ address: token, abi: phygitalTokenAbi, functionName: 'tokenURI', args: [1n] })).toBe(`${BASE_URI}1`)
  })

  it('rejects the same signature twice (InvalidSignature: the nonce moved)', async () => {
    const { sig, blockExpiry } = await sign(holder, 2n)
    await chain.mined(await mintNFT(sig, blockExpiry, holder, 2n))
    await expectRevert(mintNFT(sig, blockExpiry, holder, 2n), 'InvalidSignature')
    await expectRevert(claimNFT(sig, blockExpiry, holder, 2n), 'InvalidSignature')
    expect(await read.nonce(2n)).toBe(1n)
  })

  it('rejects an expired signature (SignatureExpired) and leaves the token unminted', async () => {
    const now = await chain.blockNumber()
    const { sig } = await sign(holder, 3n, { blockExpiry: now })
    expect(await expectRevert(mintNFT(sig, now, holder, 3n), 'SignatureExpired')).toEqual([now])

    const soon = await sign(holder, 3n, { blockExpiry: now + 5n })
    await chain.testClient.mine({ blocks: 10 })
    expect(await expectRevert(mintNFT(soon.sig, soon.blockExpiry, holder, 3n), 'SignatureExpired')).toEqual([now + 5n])
    await expectRevert(read.ownerOf(3n), 'ERC721NonexistentToken')
  })

  it('counts expiry against the block the transaction lands in: expiry = latest + 1 is already too late', async () => {
    // Sent with a fixed gas limit, as the relayer does, so nothing is estimated against a different block.
    const latest = await chain.blockNumber()
    const late = await sign(holder, 4n, { blockExpiry: latest + 1n })
    const hash = await chain.deployer.writeContract({
      address: token, abi: phygitalTokenAbi, functionName: 'mintNFT', args: [late.sig, late.blockExpiry, holder, 4n], gas: 300_000n,
    })
    const receipt = await chain.publicClient.waitForTransactionReceipt({ hash })
    expect(receipt.status).toBe('reverted')
    expect(receipt.blockNumber).toBe(latest + 1n)

    const next = await chain.blockNumber()
    const inTime = await sign(holder, 4n, { blockExpiry: next + 2n })
    const ok = await chain.mined(await chain.deployer.writeContract({
      address: token, abi: phygitalTokenAbi, functionName: 'mintNFT', args: [inTime.sig, inTime.blockExpiry, holder, 4n], gas: 300_000n,
    }))
    expect(ok.blockNumber).toBe(next + 1n)
    expect(await read.ownerOf(4n)).toBe(holder)
  })

  it('rejects a signature for recipient A submitted for recipient B', async () => {
    const { sig, blockExpiry } = await sign(holder, 5n)
    await expectRevert(mintNFT(sig, blockExpiry, stranger, 5n), 'InvalidSignature')
  })

  it('rejects a signature for another token id, contract, chain or expiry', async () => {
    const { sig, blockExpiry } = await sign(holder, 5n)
    await expectRevert(mintNFT(sig, blockExpiry, holder, 6n), 'InvalidSignature')
    await expectRevert(mintNFT(sig, blockExpiry + 1n, holder, 5n), 'InvalidSignature')
    const other = await sign(holder, 5n, { contract: stranger })
    await expectRevert(mintNFT(other.sig, other.blockExpiry, holder, 5n), 'InvalidSignature')
    const otherChain = await sign(holder, 5n, { chainId: 1n })
    await expectRevert(mintNFT(otherChain.sig, otherChain.blockExpiry, holder, 5n), 'InvalidSignature')
  })

  it('rejects a signature from a key other than the signVerifier, and malformed signatures', async () => {
    const { sig, blockExpiry } = await sign(holder, 5n, { key: generatePrivateKey() })
    await expectRevert(mintNFT(sig, blockExpiry, holder, 5n), 'InvalidSignature')
    // The contract owner's key is not the signVerifier either.
    const byOwner = await sign(holder, 5n, { key: DEPLOYER_KEY })
    await expectRevert(mintNFT(byOwner.sig, byOwner.blockExpiry, holder, 5n), 'InvalidSignature')
    const good = await sign(holder, 5n)
    await expectRevert(mintNFT(good.sig.slice(0, -2) as Hex, good.blockExpiry, holder, 5n), 'InvalidSignature') // 64 bytes
    await expectRevert(mintNFT('0x', good.blockExpiry, holder, 5n), 'InvalidSignature')
    await expectRevert(mintNFT(`0x${'00'.repeat(65)}`, good.blockExpiry, holder, 5n), 'InvalidSignature')
    expect(await read.nonce(5n)).toBe(0n)
  })

  it('reverts for an already minted token (ERC721InvalidSender) without using the nonce', async () => {
    const { sig, blockExpiry } = await sign(stranger, 1n)
    expect(await expectRevert(mintNFT(sig, blockExpiry, stranger, 1n), 'ERC721InvalidSender')).toEqual([zeroAddress])
    expect(await read.ownerOf(1n)).toBe(holder)
  })

  it('checks onERC721Received on contract recipients (ERC721InvalidReceiver)', async () => {
    // Another PhygitalToken is a contract that does not implement IERC721Receiver.
    const { address: notAReceiver } = await chain.deployPhygitalToken()
    const { sig, blockExpiry } = await sign(notAReceiver, 7n)
    expect(await expectRevert(mintNFT(sig, blockExpiry, notAReceiver, 7n), 'ERC721InvalidReceiver')).toEqual([notAReceiver])
    expect(await read.nonce(7n)).toBe(0n)
  })
})

describe('claimNFT', () => {
  it('moves a minted token from its owner to the recipient, without the owner approving', async () => {
    await mintTo(holder, 10n)
    expect(await read.nonce(10n)).toBe(1n)
    const { sig, blockExpiry } = await sign(stranger, 10n)
    const receipt = await chain.mined(await claimNFT(sig, blockExpiry, stranger, 10n))
    expect(await read.ownerOf(10n)).toBe(stranger)
    expect(await read.nonce(10n)).toBe(2n)
    const [transfer] = parseEventLogs({ abi: phygitalTokenAbi, logs: receipt.logs, eventName: 'Transfer' })
    expect(transfer?.args).toEqual({ from: holder, to: stranger, tokenId: 10n })
    // And back, with the next nonce.
    const back = await sign(holder, 10n)
    await chain.mined(await claimNFT(back.sig, back.blockExpiry, holder, 10n))
    expect(await read.ownerOf(10n)).toBe(holder)
  })

  it('a signature for one recipient dies as soon as the token moves anywhere else', async () => {
    await mintTo(holder, 12n)
    const forStranger = await sign(stranger, 12n)
    const elsewhere = await sign(chain.deployer.account.address, 12n)
    await chain.mined(await claimNFT(elsewhere.sig, elsewhere.blockExpiry, chain.deployer.account.address, 12n))
    // Neither the new owner's nor the stranger's balance or nonce is involved: the token's nonce moved.
    await expectRevert(claimNFT(forStranger.sig, forStranger.blockExpiry, stranger, 12n), 'InvalidSignature')
    expect(await read.ownerOf(12n)).toBe(chain.deployer.account.address)
  })

  it('reverts for an unminted token (ERC721NonexistentToken)', async () => {
    const { sig, blockExpiry } = await sign(stranger, 11n)
    expect(await expectRevert(claimNFT(sig, blockExpiry, stranger, 11n), 'ERC721NonexistentToken')).toEqual([11n])
  })

  it('checks expiry and signer like mintNFT', async () => {
    const now = await chain.blockNumber()
    const expired = await sign(stranger, 10n, { blockExpiry: now })
    await expectRevert(claimNFT(expired.sig, expired.blockExpiry, stranger, 10n), 'SignatureExpired')
    const forHolder = await sign(holder, 10n)
    await expectRevert(claimNFT(forHolder.sig, forHolder.blockExpiry, stranger, 10n), 'InvalidSignature')
    const wrongKey = await sign(stranger, 10n, { key: generatePrivateKey() })
    await expectRevert(claimNFT(wrongKey.sig, wrongKey.blockExpiry, stranger, 10n), 'InvalidSignature')
    expect(await read.ownerOf(10n)).toBe(holder)
  })
})

describe('public transfers and approvals', () => {
  const c = () => ({ address: token, abi: phygitalTokenAbi }) as const

  it('reject transferFrom and both safeTransferFrom, even from the token owner', async () => {
    expect(await read.ownerOf(1n)).toBe(holder)
    await expectRevert(chain.holder.writeContract({ ...c(), functionName: 'transferFrom', args: [holder, stranger, 1n] }), 'PublicTransfersDisabled')
    await expectRevert(chain.holder.writeContract({ ...c(), functionName: 'safeTransferFrom', args: [holder, stranger, 1n] }), 'PublicTransfersDisabled')
    await expectRevert(chain.holder.writeContract({ ...c(), functionName: 'safeTransferFrom', args: [holder, stranger, 1n, '0x'] }), 'PublicTransfersDisabled')
    // The contract owner has no transfer power either.
    await expectRevert(chain.deployer.writeContract({ ...c(), functionName: 'transferFrom', args: [holder, stranger, 1n] }), 'PublicTransfersDisabled')
    expect(await read.ownerOf(1n)).toBe(holder)
  })

  it('reject approve and setApprovalForAll, even from the token owner', async () => {
    await expectRevert(chain.holder.writeContract({ ...c(), functionName: 'approve', args: [stranger, 1n] }), 'PublicApprovalsDisabled')
    await expectRevert(chain.holder.writeContract({ ...c(), functionName: 'setApprovalForAll', args: [stranger, true] }), 'PublicApprovalsDisabled')
    await expectRevert(chain.holder.writeContract({ ...c(), functionName: 'setApprovalForAll', args: [stranger, false] }), 'PublicApprovalsDisabled')
    expect(await chain.publicClient.readContract({ ...c(), functionName: 'getApproved', args: [1n] })).toBe(zeroAddress)
    expect(await chain.publicClient.readContract({ ...c(), functionName: 'isApprovedForAll', args: [holder, stranger] })).toBe(false)
  })
})

describe('owner functions', () => {
  const c = () => ({ address: token, abi: phygitalTokenAbi }) as const

  it('refreshMetadata emits MetadataUpdate(tokenId) and is onlyOwner', async () => {
    const receipt = await chain.mined(await chain.deployer.writeContract({ ...c(), functionName: 'refreshMetadata', args: [1n] }))
    const logs = parseEventLogs({ abi: phygitalTokenAbi, logs: receipt.logs })
    expect(logs.map((l) => l.eventName)).toEqual(['MetadataUpdate'])
    expect(logs[0]?.args).toEqual({ _tokenId: 1n })
    const [who] = await expectRevert(chain.holder.writeContract({ ...c(), functionName: 'refreshMetadata', args: [1n] }), 'OwnableUnauthorizedAccount')
    expect(who).toBe(holder)
  })

  it('setBaseURI changes tokenURI, emits BatchMetadataUpdate(0, max) and is onlyOwner', async () => {
    const receipt = await chain.mined(await chain.deployer.writeContract({ ...c(), functionName: 'setBaseURI', args: ['ipfs://new/'] }))
    const [update] = parseEventLogs({ abi: phygitalTokenAbi, logs: receipt.logs, eventName: 'BatchMetadataUpdate' })
    expect(update?.args).toEqual({ _fromTokenId: 0n, _toTokenId: maxUint256 })
    expect(await chain.publicClient.readContract({ ...c(), functionName: 'tokenURI', args: [10n] })).toBe('ipfs://new/10')
    await expectRevert(chain.holder.writeContract({ ...c(), functionName: 'setBaseURI', args: ['https://evil/'] }), 'OwnableUnauthorizedAccount')
    await chain.mined(await chain.deployer.writeContract({ ...c(), functionName: 'setBaseURI', args: [BASE_URI] }))
    expect(await chain.publicClient.readContract({ ...c(), functionName: 'tokenURI', args: [10n] })).toBe(`${BASE_URI}10`)
  })

  it('setSignVerifier rotates the key (old signatures stop working), emits SignVerifierSet and is onlyOwner', async () => {
    const newKey = generatePrivateKey()
    const newVerifier = privateKeyToAccount(newKey).address
    const oldSig = await sign(stranger, 20n)
    await expectRevert(chain.holder.writeContract({ ...c(), functionName: 'setSignVerifier', args: [newVerifier] }), 'OwnableUnauthorizedAccount')

    const receipt = await chain.mined(await chain.deployer.writeContract({ ...c(), functionName: 'setSignVerifier', args: [newVerifier] }))
    const [event] = parseEventLogs({ abi: phygitalTokenAbi, logs: receipt.logs, eventName: 'SignVerifierSet' })
    expect(event?.args).toEqual({ previousSignVerifier: chain.verifier, newSignVerifier: newVerifier })
    expect(await chain.publicClient.readContract({ ...c(), functionName: 'signVerifier' })).toBe(newVerifier)

    await expectRevert(mintNFT(oldSig.sig, oldSig.blockExpiry, stranger, 20n), 'InvalidSignature')
    const newSig = await sign(stranger, 20n, { key: newKey })
    await chain.mined(await mintNFT(newSig.sig, newSig.blockExpiry, stranger, 20n))
    expect(await read.ownerOf(20n)).toBe(stranger)

    // address(0) accepts nothing, not even a malformed signature (which recovers to nothing).
    await chain.mined(await chain.deployer.writeContract({ ...c(), functionName: 'setSignVerifier', args: [zeroAddress] }))
    const none = await sign(stranger, 21n, { key: newKey })
    await expectRevert(mintNFT(`0x${'00'.repeat(65)}`, none.blockExpiry, stranger, 21n), 'InvalidSignature')
    await expectRevert(mintNFT('0x', none.blockExpiry, stranger, 21n), 'InvalidSignature')

    await chain.mined(await chain.deployer.writeContract({ ...c(), functionName: 'setSignVerifier', args: [chain.verifier] }))
  })
})
