import { createECDH } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { secp256k1 } from '@noble/curves/secp256k1'
import type { Address, Hex } from 'viem'
import { bytesToHex, getAddress, keccak256 } from 'viem/utils'
import type { Config } from '../config.js'

export const EMBEDDED_CHAIN_ID = 31337

export type ChainAccount = { address: Address; key: Hex }

/** What the gateway needs to sign for one chain, with or without its RPC online. */
export type ChainSigner = {
  chainId: number
  embedded: boolean
  /** Sends (and pays for) every transaction; owns the contracts we deploy. */
  relayer: ChainAccount
  /** Signs transfer signatures; the contracts' signVerifier. */
  signer: ChainAccount
}

export class ChainKeyError extends Error {
  override name = 'ChainKeyError'
}

const account = (key: Hex): ChainAccount => ({ key, address: addressOf(key) })

/**
 * The account address of a private key. OpenSSL's secp256k1 (node:crypto) rather than viem's
 * privateKeyToAddress: noble builds its precomputed tables at the first point multiplication,
 * ~45 ms that every `tapgate serve` paid before listening, for a few addresses.
 */
export function addressOf(key: Hex): Address {
  const ecdh = createECDH('secp256k1')
  ecdh.setPrivateKey(Buffer.from(key.slice(2), 'hex'))
  // Uncompressed public key: 0x04, then X and Y; the address is the last 20 bytes of keccak256(X‖Y).
  return getAddress(`0x${keccak256(ecdh.getPublicKey().subarray(1)).slice(-40)}`)
}

function parseKey(text: string, where: string): Hex {
  const value = text.trim()
  const hex = value.startsWith('0x') ? value.slice(2) : value
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new ChainKeyError(`${where} must hold a private key: 64 hex characters, optionally 0x-prefixed`)
  const key = `0x${hex.toLowerCase()}` as Hex
  if (!secp256k1.utils.isValidPrivateKey(hex)) throw new ChainKeyError(`${where} is not a valid secp256k1 private key`)
  return key
}

/** Reads a key file, or creates it (mode 0600) with a fresh key when it does not exist yet. */
export function loadOrCreateKeyFile(file: string): Hex {
  try {
    return parseKey(fs.readFileSync(file, 'utf8'), file)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
  const key = bytesToHex(secp256k1.utils.randomPrivateKey())
  try {
    // wx: two processes starting together must not each write a different key.
    fs.writeFileSync(file, `${key}\n`, { mode: 0o600, flag: 'wx' })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    return parseKey(fs.readFileSync(file, 'utf8'), file)
  }
  return key
}

function keyFrom(source: { env?: string; file?: string }, env: NodeJS.ProcessEnv, setting: string): Hex | undefined {
  if (source.env !== undefined) {
    const value = env[source.env]
    if (!value) throw new ChainKeyError(`${setting}: environment variable ${source.env} is not set`)
    return parseKey(value, `${source.env} (${setting})`)
  }
  if (source.file !== undefined) {
    let text: string
    try {
      text = fs.readFileSync(source.file, 'utf8')
    } catch (error) {
      throw new ChainKeyError(`${setting}: cannot read ${source.file}: ${(error as Error).message}`)
    }
    return parseKey(text, `${source.file} (${setting})`)
  }
  return undefined
}

/**
 * The relayer and signer accounts of every chain the gateway can act on. The
 * embedded chain's keys are generated on first start and kept in the data
 * dir; other chains' keys come from an environment variable or a key file
 * named in the config, never from the config file itself.
 */
export function loadChainSigners(config: Config, env: NodeJS.ProcessEnv = process.env): Map<number, ChainSigner> {
  const signers = new Map<number, ChainSigner>()
  if (config.chain.embedded) {
    const dir = path.join(config.dataDir, 'chain', String(EMBEDDED_CHAIN_ID))
    signers.set(EMBEDDED_CHAIN_ID, {
      chainId: EMBEDDED_CHAIN_ID,
      embedded: true,
      relayer: account(loadOrCreateKeyFile(path.join(dir, 'relayer.key'))),
      signer: account(loadOrCreateKeyFile(path.join(dir, 'signer.key'))),
    })
  }
  for (const [id, settings] of Object.entries(config.chains)) {
    const chainId = Number(id)
    const relayer = keyFrom({ env: settings.relayerKeyEnv, file: settings.relayerKeyFile }, env, `chains.${id}.relayerKey`)!
    const signer = keyFrom({ env: settings.signerKeyEnv, file: settings.signerKeyFile }, env, `chains.${id}.signerKey`) ?? relayer
    signers.set(chainId, { chainId, embedded: false, relayer: account(relayer), signer: account(signer) })
  }
  return signers
}
