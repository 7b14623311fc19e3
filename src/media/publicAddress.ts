import net from 'node:net'

/**
 * IPv4 ranges that are not globally reachable (IANA's special-purpose registry): a product image
 * URL pointing there reaches the gateway's own host or its LAN, never a public image server.
 */
const NON_GLOBAL_V4: ReadonlyArray<readonly [string, number]> = [
  ['0.0.0.0', 8], // "this network", 0.0.0.0 reaches the local host
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata services
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and the broadcast address
]

/**
 * IPv6: only global unicast (2000::/3) is public, less what IANA carves out of it; everything
 * else (::, ::1, fc00::/7, fe80::/10, ff00::/8, …) is outside 2000::/3.
 */
const NON_GLOBAL_V6: ReadonlyArray<readonly [string, number]> = [
  ['2001::', 23], // IETF protocol assignments (Teredo, benchmarking, ORCHID)
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4: the embedded IPv4 address is reached through a relay
  ['3fff::', 20], // documentation
]

const v4Refused = new net.BlockList()
for (const [network, prefix] of NON_GLOBAL_V4) v4Refused.addSubnet(network, prefix, 'ipv4')
const v6Global = new net.BlockList()
v6Global.addSubnet('2000::', 3, 'ipv6')
const v6Refused = new net.BlockList()
for (const [network, prefix] of NON_GLOBAL_V6) v6Refused.addSubnet(network, prefix, 'ipv6')

/** The eight 16-bit groups of an IPv6 address (any notation, including a dotted IPv4 tail). */
function groupsOf(ipv6: string): number[] {
  // The URL parser writes the canonical form: hex groups, at most one "::", no dotted tail.
  const canonical = new URL(`http://[${ipv6}]/`).hostname.slice(1, -1)
  const [head = '', tail] = canonical.split('::')
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((group) => Number.parseInt(group, 16)))
  const front = parse(head)
  const back = tail === undefined ? [] : parse(tail)
  return [...front, ...Array<number>(8 - front.length - back.length).fill(0), ...back]
}

const dotted = (high: number, low: number) => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`

/**
 * The address a connection to `ip` really reaches, as the allow list and the ranges compare it:
 * an IPv4-mapped (::ffff:a.b.c.d) or NAT64 (64:ff9b::a.b.c.d) IPv6 address is its IPv4 address,
 * anything else is returned as given. Null for text that is not an IP address.
 */
export function effectiveAddress(ip: string): { address: string; family: 4 | 6 } | null {
  const family = net.isIP(ip)
  if (family === 4) return { address: ip, family: 4 }
  if (family !== 6 || ip.includes('%')) return null
  const g = groupsOf(ip)
  const mapped = g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff
  const nat64 = g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)
  return mapped || nat64 ? { address: dotted(g[6]!, g[7]!), family: 4 } : { address: ip, family: 6 }
}

/**
 * True for an address on the public internet; false for loopback, private (RFC 1918, CGNAT),
 * link-local, unique-local, multicast, unspecified, documentation and other reserved addresses,
 * in either family and whatever IPv6 wrapping an IPv4 address comes in. Not an address: false.
 *
 * @example
 * isGlobalAddress('93.184.215.14') // true
 * isGlobalAddress('::ffff:127.0.0.1') // false
 */
export function isGlobalAddress(ip: string): boolean {
  const effective = effectiveAddress(ip)
  if (effective === null) return false
  if (effective.family === 4) return !v4Refused.check(effective.address, 'ipv4')
  return v6Global.check(effective.address, 'ipv6') && !v6Refused.check(effective.address, 'ipv6')
}
