import net from 'node:net'
import { effectiveAddress, isGlobalAddress } from './publicAddress.js'

/**
 * One exception to "public addresses only" (`media.allowHosts`): a host name (matched as the URL
 * names it, whatever it resolves to), an IP address or a CIDR range (matched on the address
 * connected to), optionally limited to one port.
 */
type AllowEntry = { name: string; port?: number } | { network: net.BlockList; port?: number }

/** Where one request goes: the URL's host and port, and the address it connects to. */
export type Destination = { hostname: string; port: number; address: string }

/** Whether the fetcher may connect to a destination. */
export type AddressPolicy = (destination: Destination) => boolean

const HOST_PORT = /^(?:\[([^\]]+)\]|([^:[\]/]+))(?::(\d{1,5}))?$/
const NAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/

function single(address: string, port?: number): AllowEntry {
  const effective = effectiveAddress(address)!
  const family = effective.family === 4 ? 'ipv4' : 'ipv6'
  const network = new net.BlockList()
  network.addAddress(effective.address, family)
  return { network, port }
}

/**
 * An allow-list entry as the config gives it, or the reason it is not one.
 *
 * @example
 * parseAllowEntry('127.0.0.1:8080') // loopback, port 8080 only
 * parseAllowEntry('10.0.0.0/8') // a LAN range, any port
 * parseAllowEntry('images.lan') // a name, whatever it resolves to
 */
export function parseAllowEntry(text: string): AllowEntry | string {
  const entry = text.trim().toLowerCase()
  const cidr = /^([^/]+)\/(\d{1,3})$/.exec(entry)
  if (cidr) {
    const family = net.isIP(cidr[1]!)
    const prefix = Number(cidr[2])
    if (family === 0 || prefix > (family === 4 ? 32 : 128)) return `not a CIDR range: ${text}`
    const network = new net.BlockList()
    network.addSubnet(cidr[1]!, prefix, family === 4 ? 'ipv4' : 'ipv6')
    return { network }
  }
  // A bare IPv6 address has colons of its own: a port needs the brackets.
  if (net.isIP(entry) === 6) return single(entry)
  const hostPort = HOST_PORT.exec(entry)
  const port = hostPort?.[3] === undefined ? undefined : Number(hostPort[3])
  if (!hostPort || port === 0 || (port ?? 0) > 65535) return `not a host, host:port, IP address or CIDR range: ${text}`
  if (hostPort[1] !== undefined) return net.isIP(hostPort[1]) === 6 ? single(hostPort[1], port) : `not an IPv6 address: ${text}`
  const host = hostPort[2]!
  // The URL parser's reading, so 127.1 or 0x7f000001 here means what it means in an image URL.
  const parsed = URL.canParse(`http://${host}/`) ? new URL(`http://${host}/`).hostname : ''
  if (net.isIP(parsed) === 4) return single(parsed, port)
  return NAME.test(parsed) && parsed === host ? { name: host, port } : `not a host, host:port, IP address or CIDR range: ${text}`
}

function matches(entry: AllowEntry, { hostname, port, address }: Destination): boolean {
  if (entry.port !== undefined && entry.port !== port) return false
  if ('name' in entry) return entry.name === hostname
  const effective = effectiveAddress(address)
  return effective !== null && entry.network.check(effective.address, effective.family === 4 ? 'ipv4' : 'ipv6')
}

/**
 * The fetcher's rule: a public address, or one the allow list names.
 *
 * @example
 * const permits = createAddressPolicy(['127.0.0.1:8080'])
 * permits({ hostname: 'localhost', port: 8080, address: '127.0.0.1' }) // true
 * permits({ hostname: '127.0.0.1', port: 22, address: '127.0.0.1' }) // false
 */
export function createAddressPolicy(allowHosts: readonly string[]): AddressPolicy {
  const entries = allowHosts.map((text) => {
    const entry = parseAllowEntry(text)
    if (typeof entry === 'string') throw new Error(`media.allowHosts: ${entry}`)
    return entry
  })
  return (destination) => {
    const hostname = destination.hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1')
    return isGlobalAddress(destination.address) || entries.some((entry) => matches(entry, { ...destination, hostname }))
  }
}
