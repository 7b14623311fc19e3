import { secp256k1 } from '@noble/curves/secp256k1'
import type { Hex, TransactionSerializableEIP1559 } from 'viem'
import { hashMessage, hexToBytes, keccak256, numberToHex, serializeTransaction } from 'viem/utils'

/*
 * Synchronous secp256k1 signing. viem's signers are async (same math, wrapped
 * in a promise), and the relayer must sign *inside* a SQLite transaction so
 * that a nonce is never allocated without its signed transaction being stored
 * next to it: better-sqlite3 transactions cannot span an await.
 */

export type RecoveredSignature = { r: Hex; s: Hex; yParity: 0 | 1 }

/** Signs a 32-byte digest (RFC 6979 deterministic k, low s). */
export function signDigest(privateKey: Hex, digest: Hex): RecoveredSignature {
  const { r, s, recovery } = secp256k1.sign(hexToBytes(digest), hexToBytes(privateKey), { lowS: true })
  return { r: numberToHex(r, { size: 32 }), s: numberToHex(s, { size: 32 }), yParity: recovery === 1 ? 1 : 0 }
}

/** An EIP-191 personal-sign signature over 32 raw bytes, as `toEthSignedMessageHash` expects: 65 bytes r‖s‖v. */
export function signPersonalDigest(privateKey: Hex, digest: Hex): Hex {
  const { r, s, yParity } = signDigest(privateKey, hashMessage({ raw: digest }))
  return `${r}${s.slice(2)}${yParity === 1 ? '1c' : '1b'}` as Hex
}

/** Signs an EIP-1559 transaction and returns the raw transaction and its hash. */
export function signTransactionSync(privateKey: Hex, tx: TransactionSerializableEIP1559): { raw: Hex; hash: Hex } {
  const signature = signDigest(privateKey, keccak256(serializeTransaction(tx)))
  const raw = serializeTransaction(tx, signature)
  return { raw, hash: keccak256(raw) }
}
