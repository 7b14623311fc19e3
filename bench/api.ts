/**
 * API throughput over loopback, against a bare Fastify route measured in the same run.
 *
 *   npm run bench:api            BENCH_SECONDS=10 BENCH_CONNECTIONS=10 npm run bench:api
 *   BENCH_ROUTES=refs BENCH_PROFILE=/tmp/prof npm run bench:api   (only the bare route and refs;
 *   a V8 CPU profile of the server process lands in /tmp/prof, open it in Chrome DevTools)
 *
 * - GET /refs/:id, the write path: every request is the first query of a fresh ref, so it
 *   runs the BEGIN IMMEDIATE transaction that consumes the ref and issues an OTP.
 * - GET /otps/:id, the read path: rotates over pre-issued OTP codes.
 * - GET /bare on a plain `Fastify()` with one route: the baseline.
 *
 * The servers run in a child process (bench/apiServer.ts) so autocannon's own CPU does not
 * share their event loop. Each route gets a short warm-up, then BENCH_SECONDS of load split
 * into alternating rounds (bare, otps, refs, bare, …); each route's best round is reported,
 * so a burst of noise from elsewhere hits every route alike. Compare the ratios, not the
 * absolute numbers across machines or runs. Targets: ../shared/notes/targets.md.
 * A bench reports; it never fails the build (exit code 0 unless it could not run).
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import Database from 'better-sqlite3'
import { ConfigSchema } from '../src/config.js'
import { openStore } from '../src/db/store.js'
import { newPublicId } from '../src/ids.js'
import { importData, parseImportFile } from '../src/importer/importData.js'
import { loadGatewaySecret } from '../src/keys/gatewaySecret.js'
import { queryRef } from '../src/refs/queryRef.js'
import { recordTap } from '../src/taps/recordTap.js'
import { CONNECTIONS, fmt, printTable, ratioRows, runRounds, serverPid, startServers, stopServers, type Route } from './loopback.js'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const ROUNDS = 2
const WARMUP_SECONDS = 1
/** Refs for the write path; the run stops a refs phase early (and says so) rather than reuse one. */
const REF_POOL = Number(process.env.BENCH_REFS ?? 200_000)
const OTP_POOL = 1000
const CHIP = '04BE4C4000AA01'
/** Comma-separated subset of `otps,refs` (the bare route always runs). */
const ONLY = process.env.BENCH_ROUTES?.split(',').map((r) => r.trim())

let dataDir: string | undefined

async function seed(dir: string): Promise<{ refs: string[]; otps: string[] }> {
  const config = ConfigSchema.parse({ dataDir: dir, demo: false, logLevel: 'silent' })
  const store = openStore({ dataDir: dir })
  try {
    const now = Date.now()
    await importData(
      store,
      parseImportFile({
        teams: [
          {
            name: 'Bench',
            chips: [{ uid: CHIP }],
            tokens: [
              {
                chainId: 31337,
                contractAddress: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
                tokenId: '1',
                chips: [CHIP],
                twoTapClaim: true,
                metadata: {
                  name: 'Bench token',
                  collection: 'Bench',
                  description: 'A token for the API bench',
                  image: 'https://example.com/bench.png',
                  attributes: [{ trait_type: 'Size', value: 'M' }],
                  media_gallery: [],
                      },
                    },
                  ],
                },
        ],
      }),
      { config, now, secret: loadGatewaySecret({ dataDir: dir }) },
    )
    const teamId = (await store.teams.getByName('Bench'))!.id
    // The write path's refs go straight in through the refs repository: one transaction, no tap log.
    const refs = await store.tx(async (tx) => {
      const ids: string[] = []
      for (let i = 0; i < REF_POOL; i++) {
        const id = newPublicId()
        await tx.refs.insert({ id, chipUid: CHIP, teamId, source: 'operator', authenticated: false, linksModule: false, counter: null, now })
        ids.push(id)
      }
      return ids
    })
    const otpRefs = await store.tx(async (tx) => {
      const ids: string[] = []
      for (let i = 0; i < OTP_POOL; i++) ids.push((await recordTap(tx, { uid: CHIP, source: 'operator', authenticated: false, now })).refId)
      return ids
    })
    // OTPs to read: issued the real way, by the first query of a ref. A day's lifetime outlasts any run.
    const otps = await Promise.all(
      otpRefs.map(async (refId) => {
        const view = await queryRef(store, { refId, callerTeamId: null, includeMetadata: false, now, otpTtlMs: 86_400_000 })
        const code = view.linkedToken?.otp
        if (!code) throw new Error('seeding: the first query of a ref issued no OTP')
        return code
      }),
    )
    return { refs, otps }
  } finally {
    await store.close()
  }
}

async function main() {
  console.log(`bench/api.ts: node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model.trim() ?? 'unknown'}), ${os.platform()} ${os.arch()}`)
  console.log(`${CONNECTIONS} connections, ${SECONDS} s per route in ${ROUNDS} rounds after a ${WARMUP_SECONDS} s warm-up each; best round reported`)

  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tapgate-bench-api-'))
  let t = performance.now()
  const pool = await seed(dataDir)
  console.log(`seeded ${fmt(pool.refs.length)} refs and ${fmt(pool.otps.length)} OTPs in ${fmt(performance.now() - t)} ms`)

  t = performance.now()
  const ports = await startServers(dataDir)
  console.log(`servers up in ${fmt(performance.now() - t)} ms (gateway :${ports.gateway}, bare :${ports.bare}, pid ${serverPid()})`)

  let nextRef = 0
  let refsRanOut = false
  let nextOtp = 0
  const gateway = `http://127.0.0.1:${ports.gateway}`
  const allRoutes: Route[] = [
    { key: 'bare', name: 'GET /bare (bare Fastify)', url: `http://127.0.0.1:${ports.bare}/bare`, verifyBody: (b) => b === '{"ok":true}' },
    {
      key: 'otps',
      name: 'GET /otps/:id (read)',
      target: 0.7,
      url: gateway,
      verifyBody: (b) => b.includes('"isExpired":false'),
      setupRequest: (request) => {
        request.path = `/otps/${pool.otps[nextOtp++ % pool.otps.length]}`
        return request
      },
    },
    {
      key: 'refs',
      name: 'GET /refs/:id (write)',
      target: 0.5,
      url: gateway,
      verifyBody: (b) => b.includes('"isValidRef":true'),
      remaining: () => pool.refs.length - nextRef,
      setupRequest: (request) => {
        // `amount` keeps this from happening; if it ever did, the reused ref would show as unexpected bodies.
        if (nextRef >= pool.refs.length) refsRanOut = true
        request.path = `/refs/${pool.refs[Math.min(nextRef++, pool.refs.length - 1)]}`
        return request
      },
    },
  ]

  const routes = allRoutes.filter((r) => r.key === 'bare' || !ONLY || ONLY.includes(r.key))
  const { best, problems } = await runRounds(routes, {
    seconds: SECONDS,
    rounds: ROUNDS,
    warmupSeconds: WARMUP_SECONDS,
    onSkip: (route) => {
      refsRanOut = true
      console.log(`  ${route.name}: skipped, its pool is used up (raise BENCH_REFS)`)
    },
  })
  await stopServers()

  // Every write-path request must have hit a fresh ref: count what the database consumed.
  const db = new Database(path.join(dataDir, 'tapgate.sqlite'), { readonly: true, fileMustExist: true })
  const consumed = (db.prepare('SELECT count(*) AS n FROM refs WHERE consumed_at IS NOT NULL').get() as { n: number }).n - OTP_POOL
  const issued = (db.prepare('SELECT count(*) AS n FROM otps').get() as { n: number }).n - OTP_POOL
  db.close()

  const rows = ratioRows(routes, best)
  console.log('')
  printTable(rows)
  console.log('')
  console.log(`write path: ${fmt(nextRef)} fresh refs sent, ${fmt(consumed)} consumed and ${fmt(issued)} OTPs issued in the database` +
    (refsRanOut ? ` — RAN OUT of refs (BENCH_REFS=${REF_POOL}): the refs figure covers less than ${SECONDS} s` : ` (pool ${fmt(REF_POOL)}, never exhausted)`))
  for (const [route, list] of problems) if (list.length) console.log(`WARNING ${route.name}: ${list.join(', ')}`)
}

// Ctrl-C: take the server process down too before leaving.
process.once('SIGINT', () => {
  void stopServers().finally(() => {
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true })
    process.exit(130)
  })
})

try {
  await main()
} catch (error) {
  console.error(`bench/api.ts failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
  process.exitCode = 1
} finally {
  await stopServers()
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true })
}
