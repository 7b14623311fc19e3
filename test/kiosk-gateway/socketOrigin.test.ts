import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, test } from 'vitest'
import WebSocket from 'ws'
import { KIOSK_CLOSE, type KioskServerMessage } from '../../src/wire/feedProtocol.js'
import { createTestGateway, type TestGateway } from '../helpers/gateway.js'
import { openKiosk, seedCheckInTeam } from './kioskFixture.js'

// Issue 17 §6: GET /kiosk/ws opened from another site's page is refused (403, before the upgrade);
// the gateway's own origin (as the request reached it, trustProxy honoured) and publicBaseUrl's
// are accepted, and so is a client that sends no Origin (not a browser).

let gw: TestGateway
const sockets: WebSocket[] = []
afterEach(async () => {
  for (const ws of sockets.splice(0)) ws.terminate()
  await gw?.close()
})

async function listening(config: Parameters<typeof createTestGateway>[0] = {}) {
  gw = await createTestGateway(config)
  await gw.app.listen({ host: '127.0.0.1', port: 0 })
  const port = (gw.app.server.address() as AddressInfo).port
  return { port, kiosk: (await seedCheckInTeam(gw)).kiosk }
}

type Attempt = { welcome: true } | { status: number; body: string }

/** Opens the kiosk socket over loopback with these handshake headers; the welcome, or the HTTP answer that refused the upgrade. */
function attempt(port: number, token: string, headers: Record<string, string>): Promise<Attempt> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/kiosk/ws`, { headers })
  sockets.push(ws)
  return new Promise((resolve, reject) => {
    ws.once('unexpected-response', (_request, response) => {
      let body = ''
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk))
      response.on('end', () => resolve({ status: response.statusCode!, body }))
    })
    ws.once('open', () => ws.send(JSON.stringify({ type: 'hello', token })))
    ws.on('message', (data) => {
      const message = JSON.parse(String(data)) as KioskServerMessage
      if (message.type === 'welcome') resolve({ welcome: true })
      else reject(new Error(`unexpected message ${String(data)}`))
    })
    ws.once('error', (error) => {
      if (!/Unexpected server response/.test(error.message)) reject(error)
    })
  })
}

const refused = { status: 403, body: expect.stringContaining('"error":"origin_not_allowed"') }

describe('GET /kiosk/ws: Origin', () => {
  test("another site's origin is refused with 403 before the upgrade; the gateway's own is accepted, and no Origin (a program) too", async () => {
    const { port, kiosk } = await listening()
    expect(await attempt(port, kiosk, { origin: 'https://evil.example' })).toEqual(refused)
    // Same host, another port or scheme: another origin.
    expect(await attempt(port, kiosk, { origin: `http://127.0.0.1:${port + 1}` })).toEqual(refused)
    expect(await attempt(port, kiosk, { origin: `https://127.0.0.1:${port}` })).toEqual(refused)
    // A sandboxed frame or a file: page.
    expect(await attempt(port, kiosk, { origin: 'null' })).toEqual(refused)
    expect(await attempt(port, kiosk, { origin: `http://127.0.0.1:${port}` })).toEqual({ welcome: true })
    // The Host as the browser used it (localhost), whatever address it reached.
    expect(await attempt(port, kiosk, { origin: `http://LOCALHOST:${port}`, host: `localhost:${port}` })).toEqual({ welcome: true })
    expect(await attempt(port, kiosk, {})).toEqual({ welcome: true })
  })

  test("publicBaseUrl's origin is accepted (default port normalized); others still are not", async () => {
    const { port, kiosk } = await listening({ config: { publicBaseUrl: 'https://kiosk.example.com/' } })
    expect(await attempt(port, kiosk, { origin: 'https://kiosk.example.com' })).toEqual({ welcome: true })
    expect(await attempt(port, kiosk, { origin: 'https://kiosk.example.com:443' })).toEqual({ welcome: true })
    expect(await attempt(port, kiosk, { origin: 'http://kiosk.example.com' })).toEqual(refused)
    expect(await attempt(port, kiosk, { origin: 'https://kiosk.example.com.evil.example' })).toEqual(refused)
  })

  test('behind a trusted proxy the forwarded host and scheme are the own origin; untrusted, they are ignored', async () => {
    const forwarded = { origin: 'https://tap.example.com', 'x-forwarded-host': 'tap.example.com', 'x-forwarded-proto': 'https' }
    const trusted = await listening({ config: { trustProxy: ['127.0.0.1'] } })
    expect(await attempt(trusted.port, trusted.kiosk, forwarded)).toEqual({ welcome: true })
    await gw.close()
    const untrusted = await listening()
    expect(await attempt(untrusted.port, untrusted.kiosk, forwarded)).toEqual(refused)
  })

  // Issue 24 point 9: the own origin comes from the Host header, which a page of a name an attacker's
  // DNS points at the gateway (DNS rebinding) sets to its own name.
  test('with publicBaseUrl or kiosk.origins set, only those origins: the Host no longer names an own origin', async () => {
    const { port, kiosk } = await listening({ config: { publicBaseUrl: 'https://kiosk.example.com/', kiosk: { origins: ['http://192.168.1.10:8787'] } } })
    const rebound = { origin: `http://rebind.example:${port}`, host: `rebind.example:${port}` }
    expect(await attempt(port, kiosk, rebound)).toEqual(refused)
    expect(await attempt(port, kiosk, { origin: `http://127.0.0.1:${port}` })).toEqual({ status: 403, body: expect.stringContaining('kiosk.origins') })
    expect(await attempt(port, kiosk, { origin: 'https://kiosk.example.com' })).toEqual({ welcome: true })
    expect(await attempt(port, kiosk, { origin: 'http://192.168.1.10:8787' })).toEqual({ welcome: true })
    await gw.close()
    // kiosk.origins alone: the gateway's own address (the Host) must be listed too.
    const listed = await listening({ config: { kiosk: { origins: ['http://localhost:8787'] } } })
    expect(await attempt(listed.port, listed.kiosk, { origin: 'http://localhost:8787' })).toEqual({ welcome: true })
    expect(await attempt(listed.port, listed.kiosk, { origin: `http://127.0.0.1:${listed.port}` })).toEqual(refused)
  })

  test('with nothing configured, a rebinding page passes the origin check and still gets nothing without a kiosk token', async () => {
    const { port } = await listening()
    const page = await openKiosk(`http://127.0.0.1:${port}`, { token: 'tgk_guessed-by-the-page' }, { headers: { origin: `http://rebind.example:${port}`, host: `rebind.example:${port}` } })
    sockets.push(page.ws)
    expect(await page.closed).toEqual({ code: KIOSK_CLOSE.unauthorized, reason: 'invalid_kiosk_token' })
    expect(page.messages).toEqual([{ type: 'error', error: 'invalid_kiosk_token', message: expect.any(String) }])
  })
})

