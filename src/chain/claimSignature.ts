// Types from 'viem' (erased at runtime); values from 'viem/utils', which loads much faster than the root.
import type { Address, Hex } from 'viem'
import { encodePacked, keccak256 } from 'viem/utils'
import { signPersonalDigest } from './signSync.js'

export type ClaimSignatureParams = {
  /** Last block number + 1 at which the signature works: valid while `block.number < blockExpiry`. */
  blockExpiry: bigint
  /** PhygitalToken: the recipient; Guestbook.mintWithSig: the account. */
  recipient: Address
  /** PhygitalToken: the token id; Guestbook: the token (event) id. */
  tokenId: bigint
  /** The PhygitalToken or Guestbook contract the signature is for. */
  contract: Address
  /** The chain the contract is on: a signature never verifies on another chain. */
  chainId: bigint
  /** PhygitalToken: the token's `getTokenNonce` (it moves with every move of the token); Guestbook: the account's `getMintNonce`. */
  nonce: bigint
}

/**
 * The hash PhygitalToken.mintNFT/claimNFT and Guestbook.mintWithSig check:
 * keccak256(abi.encodePacked(uint256 blockExpiry, address recipient, uint256 tokenId, address contract, uint256 chainId, uint256 nonce)),
 * which the signVerifier key signs with EIP-191 personal_sign. Equals the contracts' getClaimSigningHash / getMintSigningHash.
 */
export function claimSigningHash(p: ClaimSignatureParams): Hex {
  return keccak256(encodePacked(
    ['uint256', 'address', 'uint256', 'address', 'uint256', 'uint256'],
    [p.blockExpiry, p.recipient, p.tokenId, p.contract, p.chainId, p.nonce],
  ))
}

/** The 65-byte signature (r‖s‖v) that mintNFT/claimNFT/mintWithSig accept when `signerKey` is the contract's signVerifier. Synchronous. */
export function signClaim(signerKey: Hex, p: ClaimSignatureParams): Hex {
  return signPersonalDigest(signerKey, claimSigningHash(p))
}
