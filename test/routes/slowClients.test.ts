// Issue 9: clients that hold a connection open (a trickled body or trickled headers) are answered
// and cut off within config.requestTimeoutMs, and what the HTTP layer itself refuses (timeouts,
// oversized headers, garbage) comes back in the API's error shape. Real loopback sockets: app.inject
// never reaches Node's HTTP parser or its timers.
import net from 'node:net'
import { afterEach, expect, test } from 'vitest'
import WebSocket from 'ws'
import { createStation } from '../../src/stations/stations.js'
import { createTestGateway, seedTeam, type TestGateway } from '../helpers/gateway.js'

const TIMEOUT_MS = 400
// Node checks request deadlines on a timer (requestTimeoutMs / 4, at most 1 s) rather than per request;
// the rest is slack for a loaded machine. Without a timeout the connection stays open (3 × this, then the test gives up).
const BOUND_MS = TIMEOUT_MS + TIMEOUT_MS / 4 + 1500

let gw: TestGateway | undefined
const sockets: net.Socket[] = []
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy()
  await gw?.close()
  gw = undefined
})

async function listening(): Promise<{ port: number }> {
  gw = await createTestGateway({ config: { requestTimeoutMs: TIMEOUT_MS } })
  await gw.app.listen({ host: '127.0.0.1', port: 0 })
  const address = gw.app.server.address()
  if (typeof address !== 'object' || address === null) throw new Error('no address')
  return { port: address.port }
}

type Outcome = { response: string; closedAfterMs: number }

/**
 * Opens a socket, writes `head`, then `drip` every 100 ms until the server closes the
 * connection (or `giveUpMs` passes); resolves with what the server sent and when it closed.
 */
function trickle(port: number, head: string, drip: string, giveUpMs: number): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    sockets.push(socket)
    const started = Date.now()
    let response = ''
    let timer: NodeJS.Timeout | undefined
    const giveUp = setTimeout(() => {
      clearInterval(timer)
      socket.destroy()
      reject(new Error(`still open after ${giveUpMs} ms; received: ${JSON.stringify(response)}`))
    }, giveUpMs)
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => (response += chunk))
    socket.on('error', () => {})
    socket.on('close', () => {
      clearInterval(timer)
      clearTimeout(giveUp)
      resolve({ response, closedAfterMs: Date.now() - started })
    })
    socket.on('connect', () => {
      socket.write(head)
      timer = setInterval(() => {
        if (!socket.destroyed) socket.write(drip)
      }, 100)
    })
  })
}

/** Sends `raw` at once and resolves with the whole answer once the server closes. */
function rawRequest(port: number, raw: string): Promise<string> {
  return trickle(port, raw, '', BOUND_MS * 3).then((o) => o.response)
}

function parse(response: string): { status: number; headers: string; body: unknown } {
  const [head = '', body = ''] = response.split('\r\n\r\n')
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1])
  return { status, headers: head, body: body === '' ? undefined : JSON.parse(body) }
}

test('a trickled body is answered 408 request_timeout and the connection closed within requestTimeoutMs', async () => {
  const { port } = await listening()
  const { apiKey } = await seedTeam(gw!, { name: 'A' })
  const head = `POST /events HTTP/1.1\r\nHost: x\r\nx-service-api-key: ${apiKey}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"name":"`
  const outcome = await trickle(port, head, 'a', BOUND_MS * 3)
  expect(outcome.closedAfterMs).toBeLessThan(BOUND_MS)
  expect(outcome.closedAfterMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 50)
  const res = parse(outcome.response)
  expect(res.status).toBe(408)
  expect(res.headers).toMatch(/content-type: application\/json/i)
  expect(res.body).toEqual({ success: false, error: 'request_timeout', message: `The request was not received within ${TIMEOUT_MS} ms` })
})

test('trickled headers are answered 408 request_timeout within requestTimeoutMs', async () => {
  const { port } = await listening()
  const outcome = await trickle(port, 'GET /health HTTP/1.1\r\nHost: x\r\n', 'x-slow: 1\r\n', BOUND_MS * 3)
  expect(outcome.closedAfterMs).toBeLessThan(BOUND_MS)
  expect(parse(outcome.response)).toMatchObject({ status: 408, body: { success: false, error: 'request_timeout' } })
})

test('a connection that sends nothing is closed within requestTimeoutMs', async () => {
  const { port } = await listening()
  const outcome = await trickle(port, '', '', BOUND_MS * 3)
  expect(outcome.closedAfterMs).toBeLessThan(BOUND_MS)
})

test("oversized headers are 431 headers_too_large and garbage is 400 bad_request, in the API's error shape", async () => {
  const { port } = await listening()
  const big = parse(await rawRequest(port, `GET /health HTTP/1.1\r\nHost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`))
  expect(big).toMatchObject({ status: 431, body: { success: false, error: 'headers_too_large', message: expect.any(String) } })
  const garbage = parse(await rawRequest(port, 'NOT HTTP AT ALL\r\n\r\n'))
  expect(garbage).toMatchObject({ status: 400, body: { success: false, error: 'bad_request', message: expect.any(String) } })
})

test('a normal request on the same server is unaffected by the timeout', async () => {
  const { port } = await listening()
  const res = await fetch(`http://127.0.0.1:${port}/health`)
  expect(res.status).toBe(200)
  expect(await res.json()).toMatchObject({ status: 'ok' })
})

test("a request that arrives while the gateway closes is 503 shutting_down in the API's error shape", async () => {
  const { port } = await listening()
  const socket = net.connect(port, '127.0.0.1')
  sockets.push(socket)
  let response = ''
  socket.setEncoding('utf8').on('data', (chunk: string) => (response += chunk))
  await new Promise((resolve) => socket.once('connect', resolve))
  // A request still arriving keeps its connection open through close(); one pipelined behind it then meets the closing gateway.
  const body = JSON.stringify({ recipient: 'x' })
  socket.write(`POST /phygitals/transfer/pullable HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 3)}`)
  await new Promise((resolve) => setTimeout(resolve, 50))
  const closed = gw!.app.close()
  await new Promise((resolve) => setTimeout(resolve, 50))
  socket.write(`${body.slice(3)}GET /health HTTP/1.1\r\nHost: x\r\n\r\n`)
  await closed
  await new Promise((resolve) => (socket.destroyed ? resolve(undefined) : socket.once('close', resolve)))
  const second = response.slice(response.indexOf('HTTP/1.1', 1))
  expect(parse(second)).toMatchObject({ status: 503, body: { success: false, error: 'shutting_down', message: expect.any(String) } })
  expect(second).toMatch(/connection: close/i)
})

test("a station's WebSocket outlives requestTimeoutMs: the timeout covers receiving a request, not an upgraded connection", async () => {
  const { port } = await listening()
  const { teamId } = await seedTeam(gw!, { name: 'A' })
  const { token } = await gw!.store.tx((tx) => createStation(tx, { teamId, name: 'desk', now: gw!.clock.now }))
  const ws = new WebSocket(`ws://127.0.0.1:${port}/station/ws`, { headers: { 'x-station-token': token } })
  let closed = false
  ws.on('close', () => (closed = true))
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject))
  await new Promise((resolve) => setTimeout(resolve, BOUND_MS))
  expect(closed).toBe(false)
  const answer = new Promise<string>((resolve) => ws.once('message', (data) => resolve(String(data))))
  ws.send(JSON.stringify({ id: 1, tap: { rfUid: '04DE5F1EACC040', url: 'https://gateway.example/tap?e=00' } }))
  expect(JSON.parse(await answer)).toMatchObject({ id: 1, verdict: { accepted: false } })
  ws.close()
})
