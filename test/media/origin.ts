import http from 'node:http'
import type { AddressInfo } from 'node:net'

/** A 1×1 PNG. */
export const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64')
/** The start of a JPEG (SOI + APP0): enough for the magic check. */
export const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10]), Buffer.from('JFIF\0'), Buffer.alloc(64)])
export const SVG = '<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><script>alert(1)</script><rect width="4" height="4" fill="red"/></svg>'

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void

export type Origin = {
  /** http://127.0.0.1:<port> */
  base: string
  /** 127.0.0.1:<port> (or [::1]:<port>), as media.allowHosts takes it */
  host: string
  port: number
  url: (path: string) => string
  /** Requests seen per path. */
  hits: Map<string, number>
  route: (path: string, handler: Handler) => void
  /** Stops listening and drops open connections: the origin is offline from then on. */
  stop: () => Promise<void>
}

/** A real HTTP server on the loopback (127.0.0.1, or ::1), the image origin of the tests. */
export async function startOrigin(address: '127.0.0.1' | '::1' = '127.0.0.1'): Promise<Origin> {
  const routes = new Map<string, Handler>()
  const hits = new Map<string, number>()
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname
    hits.set(path, (hits.get(path) ?? 0) + 1)
    const handler = routes.get(path)
    if (handler) handler(req, res)
    else res.writeHead(404, { 'content-type': 'text/plain' }).end('not found')
  })
  await new Promise<void>((resolve) => server.listen(0, address, resolve))
  const port = (server.address() as AddressInfo).port
  const host = address === '::1' ? `[::1]:${port}` : `${address}:${port}`
  const base = `http://${host}`
  let stopped = false
  const stop = async () => {
    if (stopped) return
    stopped = true
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
  return { base, host, port, url: (path) => base + path, hits, route: (path, handler) => routes.set(path, handler), stop }
}

/** A handler sending `body` with a content type, after `delayMs`. */
export const serve =
  (type: string, body: string | Buffer, delayMs = 0): Handler =>
  (_req, res) => {
    setTimeout(() => res.writeHead(200, { 'content-type': type, 'content-length': Buffer.byteLength(body) }).end(body), delayMs)
  }
