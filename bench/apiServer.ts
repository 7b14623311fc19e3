/**
 * The server side of bench/api.ts, run as its own process so the load
 * generator never shares the server's event loop:
 *
 *   node --import tsx bench/apiServer.ts DATA_DIR
 *
 * Starts the real gateway on DATA_DIR (logLevel warn, rate limit effectively
 * off) and, in the same process, a bare Fastify instance with one route,
 * GET /bare → { ok: true }, as the baseline. Both listen on 127.0.0.1 with an
 * ephemeral port and the ports are printed as one JSON line:
 * `{"gateway":12345,"bare":12346}`. SIGTERM/SIGINT close both and exit.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import { buildApp } from '../src/app.js'
import { ConfigSchema } from '../src/config.js'
import { openStore } from '../src/db/store.js'

const dataDir = process.argv[2]
if (!dataDir) {
  console.error('usage: node --import tsx bench/apiServer.ts DATA_DIR')
  process.exit(2)
}

const config = ConfigSchema.parse({
  dataDir,
  host: '127.0.0.1',
  port: 0,
  logLevel: 'warn',
  demo: false,
  // The limiter still runs on every request (it is part of the real cost); it just never trips.
  rateLimit: { max: 1_000_000_000, windowMs: 60_000 },
})

// As `tapgate serve` opens it: WAL checkpoints in a worker thread, not in commits.
const store = openStore({ dataDir, backgroundCheckpoints: true })
const gateway = await buildApp({ config, store })
const bare = Fastify()
bare.get('/bare', async () => ({ ok: true }))

const portOf = (app: FastifyInstance): number => {
  const address = app.server.address()
  if (typeof address !== 'object' || address === null) throw new Error('server is not listening on a TCP port')
  return address.port
}

await gateway.listen({ host: config.host, port: 0 })
await bare.listen({ host: config.host, port: 0 })
process.stdout.write(`${JSON.stringify({ gateway: portOf(gateway), bare: portOf(bare) })}\n`)

let closing = false
const stop = async () => {
  if (closing) return
  closing = true
  await Promise.all([gateway.close(), bare.close()])
  await store.close()
  process.exit(0)
}
process.once('SIGTERM', () => void stop())
process.once('SIGINT', () => void stop())
