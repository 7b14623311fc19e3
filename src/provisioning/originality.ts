import { createHash, createHmac, randomBytes } from 'node:crypto'
import { Field } from '@noble/curves/abstract/modular'
import { weierstrass } from '@noble/curves/abstract/weierstrass'
import { expectStatus, INS, nativeApdu } from './apdu.js'
import { SecureMessagingError } from './errors.js'
import type { Exchange, SecureSession } from './secureMessaging.js'
import { SW_OK, SW_READ_SIG_OK } from './statusWords.js'

/*
 * The NXP originality signature (NT4H2421Gx §10.10; AN12196 §8.2, Table 30):
 * Read_Sig returns a 56-byte ECDSA signature r ‖ s on curve secp224r1 whose
 * "message hash" is the raw 7-byte UID (no hash function). Checked against NXP's
 * published public key, it rejects counterfeit chips before any key is written.
 *
 * node:crypto knows secp224r1 keys but always hashes the message before ECDSA,
 * so it cannot check a signature over a raw UID. The ECDSA arithmetic comes from
 * @noble/curves' generic Weierstrass implementation (already a dependency, MIT),
 * with the curve's published SEC 2 parameters; only HMAC and random bytes come
 * from node:crypto.
 */

/** NXP's NTAG 424 DNA originality public key, uncompressed (AN12196 Table 30). */
export const NXP_NTAG424_ORIGINALITY_PUBLIC_KEY =
  '048A9B380AF2EE1B98DC417FECC263F8449C7625CECE82D9B916C992DA209D68422B81EC20B65A66B5102A61596AF3379200599316A00A1410'

const sha256 = Object.assign((message: Uint8Array | string) => new Uint8Array(createHash('sha256').update(message).digest()), {
  outputLen: 32,
  blockLen: 64,
  create: () => {
    throw new Error('streaming hashes are not used')
  },
})

/** secp224r1 (SEC 2 §2.6.2), with lowS off: NXP's signatures are not normalised to low s. */
const secp224r1 = weierstrass({
  a: BigInt('0xfffffffffffffffffffffffffffffffefffffffffffffffffffffffe'),
  b: BigInt('0xb4050a850c04b3abf54132565044b0b7d7bfd8ba270b39432355ffb4'),
  Fp: Field(BigInt('0xffffffffffffffffffffffffffffffff000000000000000000000001')),
  n: BigInt('0xffffffffffffffffffffffffffff16a2e0b8f03e13dd29455c5c2a3d'),
  Gx: BigInt('0xb70e0cbd6bb4bf7f321390b94a03c1d356c21122343280d6115c1d21'),
  Gy: BigInt('0xbd376388b5f723fb4c22dfe6cd4375a05a07476444d5819985007e34'),
  h: BigInt(1),
  lowS: false,
  hash: sha256,
  hmac: (key: Uint8Array, ...messages: Uint8Array[]) => {
    const h = createHmac('sha256', key)
    for (const m of messages) h.update(m)
    return new Uint8Array(h.digest())
  },
  randomBytes: (length = 32) => new Uint8Array(randomBytes(length)),
})

function asBytes(input: Uint8Array | string, what: string): Uint8Array {
  if (typeof input === 'string') {
    if (!/^([0-9A-Fa-f]{2})*$/.test(input)) throw new RangeError(`${what} must be hex`)
    return Buffer.from(input, 'hex')
  }
  return input
}

export type VerifyOriginalityParameters = {
  /** The 7-byte UID the chip signed (with Random ID on, the one GetCardUID returns). */
  uid: Uint8Array | string
  /** Read_Sig's 56 bytes, r ‖ s. */
  signature: Uint8Array | string
  /** The public key to trust; NXP's by default. Pass a test key only for software cards. */
  publicKey?: Uint8Array | string
}

/**
 * Checks an originality signature. False for a wrong signature, UID or key, and
 * for malformed input (never throws on what a card sent).
 *
 * @example
 * verifyOriginality({ uid: '04518DFAA96180', signature: 'D1940D17…785D21' }) // true (AN12196 Table 30)
 */
export function verifyOriginality(p: VerifyOriginalityParameters): boolean {
  try {
    const uid = asBytes(p.uid, 'uid')
    const signature = asBytes(p.signature, 'signature')
    if (uid.length !== 7 || signature.length !== 56) return false
    const key = asBytes(p.publicKey ?? NXP_NTAG424_ORIGINALITY_PUBLIC_KEY, 'publicKey')
    return secp224r1.verify(signature, uid, key, { prehash: false, lowS: false })
  } catch {
    return false
  }
}

/** A secp224r1 key pair for a software card's originality signature. Never NXP's. */
export type TestOriginalityKey = { privateKey: Buffer; publicKey: Buffer }

/**
 * A new test key pair (random), or the pair of a given 28-byte private key.
 *
 * @example
 * const key = createTestOriginalityKey()
 * verifyOriginality({ uid, signature: signOriginality(uid, key.privateKey), publicKey: key.publicKey }) // true
 */
export function createTestOriginalityKey(privateKey?: Uint8Array): TestOriginalityKey {
  const priv = privateKey ?? secp224r1.utils.randomPrivateKey()
  return { privateKey: Buffer.from(priv), publicKey: Buffer.from(secp224r1.getPublicKey(priv, false)) }
}

/**
 * Signs a UID as a chip's originality signature (56 bytes r ‖ s), with a test key:
 * for software cards and tests only (real chips are signed by NXP).
 *
 * @example
 * signOriginality(Buffer.from('04DE5F1EACC040', 'hex'), key.privateKey) // 56 bytes
 */
export function signOriginality(uid: Uint8Array, privateKey: Uint8Array): Buffer {
  if (uid.length !== 7) throw new RangeError('the originality signature covers a 7-byte UID')
  return Buffer.from(secp224r1.sign(uid, privateKey, { prehash: false, lowS: false }).toCompactRawBytes())
}

/**
 * Read_Sig (3C) with address 00: `90 3C 00 00 01 00 00` → `r ‖ s` (56 bytes) `91 90`.
 * Send it before authenticating: without Random ID it needs no key. Inside a
 * session (needed with Random ID) it is CommMode.Full; that variant follows the
 * data sheet's secure-messaging rules but no published vector covers it.
 *
 * @example
 * readSig().apdu // 903C0000010000 (AN12196 Table 30)
 */
export function readSig(session?: SecureSession): Exchange<Buffer> {
  const header = Buffer.from([0x00])
  const ok = [SW_READ_SIG_OK, SW_OK]
  const check = (signature: Buffer): Buffer => {
    if (signature.length !== 56) throw new SecureMessagingError('length', `Read_Sig: expected a 56-byte signature, got ${signature.length} bytes`)
    return signature
  }
  if (session) {
    const apdu = session.command(INS.readSig, { header, commMode: 'full' })
    return { apdu, parse: (response) => check(session.response(response, { okStatus: ok })) }
  }
  return { apdu: nativeApdu(INS.readSig, header), parse: (response) => check(expectStatus(response, 'Read_Sig', ok)) }
}
