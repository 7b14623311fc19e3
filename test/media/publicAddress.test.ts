import { describe, expect, test } from 'vitest'
import { createAddressPolicy, parseAllowEntry } from '../../src/media/allowHosts.js'
import { effectiveAddress, isGlobalAddress } from '../../src/media/publicAddress.js'

describe('isGlobalAddress', () => {
  test('public addresses of both families pass', () => {
    for (const ip of ['93.184.215.14', '8.8.8.8', '1.1.1.1', '100.63.255.255', '100.128.0.0', '172.32.0.1', '2a00:1450:4001:80b::200e', '2606:4700::1111', '::ffff:8.8.8.8'])
      expect(isGlobalAddress(ip), ip).toBe(true)
  })

  test('loopback, private, CGNAT, link-local, unique-local, multicast, unspecified and reserved do not', () => {
    for (const ip of [
      '127.0.0.1', '127.255.255.254', '0.0.0.0', '0.1.2.3', '10.0.0.1', '172.16.0.1', '172.31.255.255', '192.168.0.1', '100.64.0.1', '100.127.255.255',
      '169.254.169.254', '192.0.0.8', '192.0.2.1', '198.18.0.1', '198.51.100.7', '203.0.113.9', '224.0.0.251', '239.255.255.250', '240.0.0.1', '255.255.255.255',
      '::1', '::', 'fc00::1', 'fd12:3456::1', 'fe80::1', 'fec0::1', 'ff02::1', '2001:db8::1', '2001::1', '2002:7f00:1::1', '3fff::1', '100::1',
      // IPv4 inside IPv6: mapped (both notations), NAT64, the deprecated "compatible" form.
      '::ffff:127.0.0.1', '::ffff:7f00:1', '0:0:0:0:0:ffff:a00:1', '::ffff:192.168.1.1', '64:ff9b::127.0.0.1', '64:ff9b::a00:1', '::127.0.0.1',
      'not an address', 'fe80::1%eth0',
    ])
      expect(isGlobalAddress(ip), ip).toBe(false)
  })

  test('an IPv4 address wrapped in IPv6 is compared as the IPv4 address it reaches', () => {
    expect(effectiveAddress('::ffff:7f00:1')).toEqual({ address: '127.0.0.1', family: 4 })
    expect(effectiveAddress('64:ff9b::808:808')).toEqual({ address: '8.8.8.8', family: 4 })
    expect(effectiveAddress('2001:db8::1')).toEqual({ address: '2001:db8::1', family: 6 })
  })
})

describe('media.allowHosts entries', () => {
  test('names, addresses and ranges, each optionally with a port', () => {
    const permits = createAddressPolicy(['127.0.0.1:8080', '10.0.0.0/8', '[::1]:9000', 'fd00::/8', 'Images.LAN', 'cdn.lan:443', '0x7f000002'])
    const at = (hostname: string, port: number, address: string) => permits({ hostname, port, address })
    expect(at('127.0.0.1', 8080, '127.0.0.1')).toBe(true)
    expect(at('localhost', 8080, '127.0.0.1')).toBe(true)
    expect(at('127.0.0.1', 8081, '127.0.0.1')).toBe(false)
    expect(at('x', 8080, '::ffff:127.0.0.1')).toBe(true)
    expect(at('10.2.3.4', 1, '10.2.3.4')).toBe(true)
    expect(at('11.0.0.1', 1, '11.0.0.1')).toBe(true) // public anyway
    expect(at('[::1]', 9000, '::1')).toBe(true)
    expect(at('[::1]', 9001, '::1')).toBe(false)
    expect(at('[fd00::5]', 80, 'fd00::5')).toBe(true)
    expect(at('images.lan', 80, '192.168.1.5')).toBe(true)
    expect(at('other.lan', 80, '192.168.1.5')).toBe(false)
    expect(at('cdn.lan', 443, '192.168.1.6')).toBe(true)
    expect(at('cdn.lan', 80, '192.168.1.6')).toBe(false)
    expect(at('a', 1, '127.0.0.2')).toBe(true) // 0x7f000002, as an image URL would read it
  })

  test('anything else is refused with the reason', () => {
    for (const bad of ['', '10.0.0.0/33', '::1/129', 'host/8', 'a b', 'http://x', 'x:0', 'x:70000', '[x]:80', '[127.0.0.1]', '*.lan', '-x.lan'])
      expect(typeof parseAllowEntry(bad), JSON.stringify(bad)).toBe('string')
  })
})
