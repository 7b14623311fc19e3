import fs from 'node:fs'
import path from 'node:path'
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts'
import { describe, expect, test } from 'vitest'
import { addressOf, ChainKeyError, loadChainSigners } from '../../src/chain/chainKeys.js'
import { ConfigError, ConfigSchema, loadConfig } from '../../src/config.js'
import { testDir } from '../helpers/gateway.js'

const KEY = '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6'
const mode = (file: string) => fs.statSync(file).mode & 0o777

describe('chain keys', () => {
  test("an address from node:crypto's secp256k1 is viem's, checksummed, for anvil's first account and 50 random keys", () => {
    expect(addressOf('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80')).toBe('0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266')
    for (let i = 0; i < 50; i++) {
      const key = generatePrivateKey()
      expect(addressOf(key)).toBe(privateKeyToAddress(key))
    }
  })

  test('the embedded chain keys are generated on first start (mode 0600) and the same ever after', () => {
    const dataDir = testDir()
    const config = ConfigSchema.parse({ dataDir })
    const first = loadChainSigners(config).get(31337)!
    const dir = path.join(dataDir, 'chain/31337')
    expect(mode(path.join(dir, 'relayer.key'))).toBe(0o600)
    expect(mode(path.join(dir, 'signer.key'))).toBe(0o600)
    expect(mode(dir)).toBe(0o700)
    expect(first.relayer.address).not.toBe(first.signer.address)
    expect(first.relayer.address).toBe(privateKeyToAddress(first.relayer.key))
    const again = loadChainSigners(config).get(31337)!
    expect(again).toEqual(first)
  })

  test('another chain takes its relayer key from an environment variable or a key file; the signer defaults to it', () => {
    const dataDir = testDir()
    const keyFile = path.join(dataDir, 'base.key')
    fs.writeFileSync(keyFile, `${KEY.slice(2).toUpperCase()}\n`)
    const config = ConfigSchema.parse({
      dataDir,
      chain: { embedded: false },
      chains: { '8453': { rpcUrl: 'http://127.0.0.1:1', relayerKeyEnv: 'BASE_KEY' }, '10': { rpcUrl: 'http://127.0.0.1:1', relayerKeyFile: keyFile } },
    })
    const signers = loadChainSigners(config, { BASE_KEY: KEY })
    expect(signers.get(8453)!.relayer.address).toBe(privateKeyToAddress(KEY))
    expect(signers.get(8453)!.signer).toEqual(signers.get(8453)!.relayer)
    expect(signers.get(10)!.relayer.key).toBe(KEY)
    expect(signers.has(31337)).toBe(false)
    expect(() => loadChainSigners(config, {})).toThrow(/BASE_KEY is not set/)
    expect(() => loadChainSigners(config, { BASE_KEY: '0x1234' })).toThrow(ChainKeyError)
  })

  test('a key written into the config file itself is refused, naming the setting', () => {
    const dir = testDir()
    const file = path.join(dir, 'tapgate.config.json')
    fs.writeFileSync(file, JSON.stringify({ chains: { '8453': { rpcUrl: 'https://base.example', relayerKey: KEY } } }))
    expect(() => loadConfig({ env: {}, configFile: file })).toThrow(ConfigError)
    expect(() => loadConfig({ env: {}, configFile: file })).toThrow(/chains\.8453\.relayerKey in tapgate\.config\.json: Keys never go in the config file/)
  })

  test('chain 31337 over an RPC needs the embedded chain turned off', () => {
    expect(() => ConfigSchema.parse({ chains: { '31337': { rpcUrl: 'http://127.0.0.1:8545', relayerKeyEnv: 'K' } } })).toThrow(/embedded chain/)
    expect(ConfigSchema.parse({ chain: { embedded: false }, chains: { '31337': { rpcUrl: 'http://127.0.0.1:8545', relayerKeyEnv: 'K' } } }).chains['31337']).toBeDefined()
  })
})
