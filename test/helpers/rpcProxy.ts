import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { encodeFunctionData } from 'viem/utils'
import { phygitalTokenAbi } from '../../contracts/artifacts/PhygitalToken.js'

/** The 4 bytes an eth_call of PhygitalToken.getTokenNonce starts with, taken from the ABI. */
export const GET_TOKEN_NONCE_SELECTOR = encodeFunctionData({ abi: phygitalTokenAbi, functionName: 'getTokenNonce', args: [0n] }).slice(0, 10)

/**
 * What the proxy does with an eth_call of getTokenNonce (every other request is passed on at once):
 * pass it on; hold it `delayMs` and then pass it on (a slow node); answer a JSON-RPC error; or
 * close the connection without an answer (an RPC that went away).
 */
export type NonceReadMode = 'pass' | { delayMs: number } | 'error' | 'drop'

export type RpcProxy = {
  url: string
  /** Changed at any time; applies to the requests that arrive after. */
  nonceReads: NonceReadMode
  /** getTokenNonce calls seen, whatever was done with them. */
  nonceReadCount: number
  stop(): Promise<void>
}

type JsonRpcRequest = { id?: unknown; method?: string; params?: unknown[] }

const isNonceRead = (r: JsonRpcRequest) => {
  const call = r.method === 'eth_call' ? (r.params?.[0] as { data?: string; input?: string } | undefined) : undefined
  return (call?.data ?? call?.input ?? '').toLowerCase().startsWith(GET_TOKEN_NONCE_SELECTOR)
}

/**
 * A real JSON-RPC proxy on 127.0.0.1 in front of `target` (the embedded anvil), for tests of what
 * the gateway does when the one read that tells a token's moves is slow or fails.
 */
export async function startRpcProxy(target: string): Promise<RpcProxy> {
  const sockets = new Set<import('node:net').Socket>()
  const proxy: RpcProxy = { url: '', nonceReads: 'pass', nonceReadCount: 0, stop: async () => {} }
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks).toString('utf8')
        const parsed = JSON.parse(body) as JsonRpcRequest | JsonRpcRequest[]
        const nonceRead = [parsed].flat().some(isNonceRead)
        const mode = nonceRead ? proxy.nonceReads : 'pass'
        if (nonceRead) proxy.nonceReadCount++
        if (mode === 'drop') return req.socket.destroy()
        if (mode === 'error') {
          const id = Array.isArray(parsed) ? null : parsed.id
          res.writeHead(200, { 'content-type': 'application/json' })
          return res.end(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32603, message: 'rpc proxy: the node failed this read' } }))
        }
        if (typeof mode === 'object') await new Promise((resolve) => setTimeout(resolve, mode.delayMs))
        const answer = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
        res.writeHead(answer.status, { 'content-type': 'application/json' })
        res.end(await answer.text())
      })().catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(502)
        res.end(String(error))
      })
    })
  })
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  proxy.stop = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy()
      server.close(() => resolve())
    })
  return proxy
}
