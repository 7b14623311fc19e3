import { describe, expect, test } from 'vitest'
import { ConfigError, loadConfig } from '../../src/config.js'

describe('media config', () => {
  test('defaults, and the environment names', () => {
    expect(loadConfig({ env: {} }).media).toEqual({ ipfsGateway: 'https://ipfs.io/ipfs/', maxBytes: 5 * 1024 * 1024, fetchTimeoutMs: 5000 })
    const env = { TAPGATE_IPFS_GATEWAY: 'http://127.0.0.1:8080/ipfs/', TAPGATE_MEDIA_MAX_BYTES: '1000', TAPGATE_MEDIA_FETCH_TIMEOUT_MS: '250' }
    expect(loadConfig({ env }).media).toEqual({ ipfsGateway: 'http://127.0.0.1:8080/ipfs/', maxBytes: 1000, fetchTimeoutMs: 250 })
  })

  test('an IPFS gateway must be an http(s) URL; sizes and timeouts positive', () => {
    expect(() => loadConfig({ env: { TAPGATE_IPFS_GATEWAY: 'ipfs://gateway' } })).toThrow(ConfigError)
    expect(() => loadConfig({ env: { TAPGATE_MEDIA_MAX_BYTES: '0' } })).toThrow(/TAPGATE_MEDIA_MAX_BYTES/)
    expect(() => loadConfig({ env: {}, overrides: { 'media.fetchTimeoutMs': -1 } })).toThrow(/media\.fetchTimeoutMs/)
  })
})
