import { describe, expect, test } from 'vitest'
import { ConfigError, loadConfig } from '../../src/config.js'

describe('media config', () => {
  test('defaults, and the environment names', () => {
    expect(loadConfig({ env: {} }).media).toEqual({
      ipfsGateway: 'https://ipfs.io/ipfs/',
      maxBytes: 5 * 1024 * 1024,
      fetchTimeoutMs: 5000,
      cacheMaxBytes: 256 * 1024 * 1024,
      allowHosts: [],
    })
    const env = {
      TAPGATE_IPFS_GATEWAY: 'http://127.0.0.1:8080/ipfs/',
      TAPGATE_MEDIA_MAX_BYTES: '1000',
      TAPGATE_MEDIA_FETCH_TIMEOUT_MS: '250',
      TAPGATE_MEDIA_CACHE_MAX_BYTES: '4000',
      TAPGATE_MEDIA_ALLOW_HOSTS: ' 192.168.1.10:8000, images.lan ,10.0.0.0/8,[::1]:9000',
    }
    expect(loadConfig({ env }).media).toEqual({
      ipfsGateway: 'http://127.0.0.1:8080/ipfs/',
      maxBytes: 1000,
      fetchTimeoutMs: 250,
      cacheMaxBytes: 4000,
      allowHosts: ['192.168.1.10:8000', 'images.lan', '10.0.0.0/8', '[::1]:9000'],
    })
  })

  test('an IPFS gateway must be an http(s) URL; sizes and timeouts positive', () => {
    expect(() => loadConfig({ env: { TAPGATE_IPFS_GATEWAY: 'ipfs://gateway' } })).toThrow(ConfigError)
    expect(() => loadConfig({ env: { TAPGATE_MEDIA_MAX_BYTES: '0' } })).toThrow(/TAPGATE_MEDIA_MAX_BYTES/)
    expect(() => loadConfig({ env: {}, overrides: { 'media.fetchTimeoutMs': -1 } })).toThrow(/media\.fetchTimeoutMs/)
  })

  test('the cache cap holds at least one image; allow-list entries are checked one by one', () => {
    expect(() => loadConfig({ env: { TAPGATE_MEDIA_CACHE_MAX_BYTES: '1000' } })).toThrow(
      /TAPGATE_MEDIA_CACHE_MAX_BYTES: Must be at least media\.maxBytes/,
    )
    expect(() => loadConfig({ env: { TAPGATE_MEDIA_ALLOW_HOSTS: 'images.lan,10.0.0.0/40' } })).toThrow(
      /TAPGATE_MEDIA_ALLOW_HOSTS: Each entry is a host\[:port\], an IP address\[:port\] or a CIDR range: not a CIDR range: 10\.0\.0\.0\/40/,
    )
    expect(() => loadConfig({ env: {}, overrides: { 'media.allowHosts': [42] } })).toThrow(/media\.allowHosts: Must be a list/)
  })
})
