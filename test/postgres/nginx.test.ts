// Issue 18, several gateways behind a load balancer: two real `tapgate serve` processes (the bin) on one
// PostgreSQL test database, behind Debian's nginx configured with README.md's "Several gateways on
// PostgreSQL" block as written (its `location /`, read from the README). Stations and kiosks point at
// the proxy: their WebSockets get through it, land on either gateway, and a tap verified on one
// reaches a kiosk on the other; plain requests take turns between the gateways, and no tap is lost
// or doubled on the way.
import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import WebSocket from 'ws'
import { STATION_SOCKET_PATH } from '../../station/link/protocol.js'
import type { TapVerdict } from '../../station/tap.js'
import { openKiosk } from '../kiosk-gateway/kioskFixture.js'
import { freePort } from '../helpers/freePort.js'
import { makeTempDir, sunTapUrl } from '../helpers/gateway.js'
import { twoGatewaysOnPostgres } from '../helpers/pgDeployment.js'
import { HAS_POSTGRES, testDatabase } from '../helpers/postgres.js'
import { until } from '../helpers/until.js'
import { collectOutput, repoRoot, stopChild, type Server } from '../helpers/processes.js'

const ZERO_KEY = '00000000000000000000000000000000'
/** The demo chip, under the demo's factory-key (all zero) profile. */
const DEMO_CHIP = '04DE5F1EACC040'
const STATION_TAPS = 5
const API_REQUESTS = 20
const PROXIED_TAPS = 20
/** Counters of each test's taps: above the published tap's (61), and apart, so the tests need no order. */
const STATION_FIRST_COUNTER = 100
const PROXIED_FIRST_COUNTER = 200

/** Debian's nginx (/usr/sbin is not on every user's PATH). */
const NGINX = ['/usr/sbin/nginx', ...(process.env.PATH ?? '').split(path.delimiter).map((dir) => path.join(dir, 'nginx'))].find((file) => {
  try {
    fs.accessSync(file, fs.constants.X_OK)
    return true
  } catch {
    return false
  }
})
if (!NGINX && process.env.CI === 'true') throw new Error('nginx is not installed: under CI the load-balancer test must run (apt-get install -y nginx; .ci/run installs it)')
if (!NGINX) console.warn('nginx is not installed: test/postgres/nginx.test.ts is skipped (apt-get install -y nginx)')

/** README.md's nginx `location /` for several gateways, verbatim: the test runs the documented proxy. */
function readmeLocation(): string {
  const readme = fs.readFileSync(path.join(repoRoot, 'README.md'), 'utf8')
  const section = readme.slice(readme.indexOf('### Several gateways on PostgreSQL'))
  const block = /```nginx\n([\s\S]*?)```/.exec(section)?.[1]
  const location = block && /^( *)location \/ \{\n[\s\S]*?^\1\}$/m.exec(block)?.[0]
  if (!location || !location.includes('proxy_pass http://tapgate;')) throw new Error("README.md's nginx block (Several gateways on PostgreSQL) has no `location /` proxying to upstream tapgate")
  return location
}

/** A whole nginx.conf around README's location: one worker (one round-robin turn for everything), all files in `dir`. */
function nginxConf(dir: string, port: number, gateways: Server[]): string {
  const servers = gateways.map((g) => `    server ${new URL(g.url).host};`).join('\n')
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind) => `  ${kind}_temp_path ${path.join(dir, `${kind}_temp`)};`).join('\n')
  return `worker_processes 1;
error_log ${path.join(dir, 'error.log')} info;
events { worker_connections 256; }
http {
  log_format upstreams '$request_method $uri $status $upstream_addr';
  access_log ${path.join(dir, 'access.log')} upstreams;
${temp}
  upstream tapgate {
${servers}
  }
  server {
    listen 127.0.0.1:${port};
${readmeLocation()}
  }
}
`
}

const describeNginx = describe.skipIf(!HAS_POSTGRES || !NGINX)

describeNginx("two gateways on one PostgreSQL database behind nginx (README.md's block)", () => {
  const db = testDatabase()
  // The proxy trusted; info: each gateway logs every request it serves ("incoming request"), the record of which one got what.
  const gw = twoGatewaysOnPostgres(db, { env: { TAPGATE_TRUST_PROXY: '127.0.0.1', TAPGATE_LOG_LEVEL: 'info' } })
  const sockets: WebSocket[] = []
  const nginxDir = makeTempDir('tapgate-pg-nginx-')
  let nginx: ChildProcess | undefined
  /** The proxy's base URL: what stations and kiosks are given. */
  let proxy = ''

  /** The URLs of the requests a gateway logged as served, in order (its own log, not the proxy's). */
  function served(server: Server): string[] {
    return server
      .stdout()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { msg?: string; req?: { url?: string } })
      .filter((entry) => entry.msg === 'incoming request' && entry.req?.url !== undefined)
      .map((entry) => entry.req!.url!)
  }
  const servedMatching = (server: Server, match: (url: string) => boolean) => served(server).filter(match)

  const nginxLog = () => ['error.log', 'access.log'].map((file) => `${file}:\n${fs.readFileSync(path.join(nginxDir, file), 'utf8').slice(-4000)}`).join('\n')

  beforeAll(async () => {
    // nginx as a child of this test: its prefix, config, logs and PID file in a temp dir (0755: its
    // workers run as nobody when this runs as root), in the foreground, stopped by PID in afterAll.
    fs.chmodSync(nginxDir, 0o755)
    const port = await freePort()
    proxy = `http://127.0.0.1:${port}`
    const conf = path.join(nginxDir, 'nginx.conf')
    fs.writeFileSync(conf, nginxConf(nginxDir, port, [gw.a, gw.b]))
    nginx = spawn(NGINX!, ['-p', nginxDir, '-c', conf, '-e', path.join(nginxDir, 'error.log'), '-g', `daemon off; pid ${path.join(nginxDir, 'nginx.pid')};`], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const output = collectOutput(nginx)
    await until('nginx to proxy /health', async () => {
      if (nginx!.exitCode !== null) throw new Error(`nginx exited ${nginx!.exitCode}: ${output.stderr()}\n${nginxLog()}`)
      const res = await fetch(`${proxy}/health`).catch(() => null)
      return res?.ok ? true : undefined
    }, 10_000)
  })

  afterAll(async () => {
    for (const ws of sockets.splice(0)) ws.terminate()
    if (nginx) await stopChild(nginx)
    fs.rmSync(nginxDir, { recursive: true, force: true })
  })

  const tapUrl = (counter: number) => sunTapUrl({ metaKey: ZERO_KEY, fileKey: ZERO_KEY, uid: DEMO_CHIP, counter, base: 'https://tap.example.com/tap' })

  /** A station's WebSocket through the proxy: sends `{ id, tap }` and resolves with the verdict. */
  async function openStation(token: string) {
    const ws = new WebSocket(`${proxy.replace(/^http/, 'ws')}${STATION_SOCKET_PATH}`, { headers: { 'x-station-token': token } })
    sockets.push(ws)
    const waiting = new Map<string | number, (verdict: TapVerdict) => void>()
    ws.on('message', (data) => {
      const message = JSON.parse(String(data)) as { id?: string | number; verdict?: TapVerdict }
      if (message.id !== undefined && message.verdict) waiting.get(message.id)?.(message.verdict)
    })
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve())
      ws.once('error', reject)
    })
    return {
      tap: (id: string | number, tap: { rfUid: string; url: string }) =>
        new Promise<TapVerdict>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`no answer to station tap ${id} within 10 s`)), 10_000)
          waiting.set(id, (verdict) => {
            clearTimeout(timer)
            waiting.delete(id)
            resolve(verdict)
          })
          ws.send(JSON.stringify({ id, tap }))
        }),
    }
  }

  /** Opens something through the proxy, and which gateway logged its request (`requestPath`) meanwhile. */
  async function reachedGateway<T>(requestPath: string, open: () => Promise<T>): Promise<{ gateway: Server; opened: T }> {
    const { a, b } = gw
    const count = (server: Server) => servedMatching(server, (url) => url === requestPath).length
    const before = [count(a), count(b)]
    const opened = await open()
    const gateways = await until(`a gateway to log ${requestPath}`, () => {
      const grown = [a, b].filter((server, i) => count(server) > before[i]!)
      return grown.length > 0 ? grown : undefined
    }, 5000)
    expect(gateways).toHaveLength(1)
    return { gateway: gateways[0]!, opened }
  }

  /** The status of a kiosk socket handshake through the proxy from a page of `origin` (101: upgraded). */
  function kioskHandshake(origin: string): Promise<number> {
    const ws = new WebSocket(`${proxy.replace(/^http/, 'ws')}/kiosk/ws`, { origin })
    sockets.push(ws)
    return new Promise((resolve, reject) => {
      ws.once('upgrade', (res) => resolve(res.statusCode!))
      ws.once('unexpected-response', (_req, res) => {
        res.resume()
        resolve(res.statusCode!)
      })
      ws.once('error', reject)
    })
  }

  test(`a kiosk socket and a station socket through nginx land on different gateways; ${STATION_TAPS} station taps answered through nginx reach the kiosk`, async () => {
    const { a } = gw
    const { stationId, token } = await gw.cliJson<{ stationId: number; token: string }>('station', 'create', '--team', String(gw.teamId), '--name', 'Front door')
    const kioskUrl = (await gw.cli('station', 'kiosk-url', '--station', String(stationId), '--base-url', proxy)).trim()
    const kioskToken = /#token=(\S+)$/.exec(kioskUrl)?.[1]
    expect(kioskToken, kioskUrl).toBeDefined()
    expect(kioskUrl.startsWith(`${proxy}/`), kioskUrl).toBe(true)

    // The kiosk page is served by the proxy, so its browser sends the proxy's origin; the gateway
    // behind it knows that origin only from X-Forwarded-Host/-Proto (the proxy is trusted).
    // Another page's origin is still refused through the proxy: the check is live, not bypassed.
    // Each gateway's own log says which one each request reached (round robin: the next one each time).
    const { opened: refused } = await reachedGateway('/kiosk/ws', () => kioskHandshake('http://elsewhere.example'))
    expect(refused).toBe(403)
    const { gateway: kioskGateway, opened: kiosk } = await reachedGateway('/kiosk/ws', async () => {
      const client = await openKiosk(proxy, { token: kioskToken }, { origin: proxy })
      sockets.push(client.ws)
      await client.waitFor((m) => m.type === 'welcome', 5000)
      return client
    })
    const { gateway: stationGateway, opened: station } = await reachedGateway(STATION_SOCKET_PATH, () => openStation(token))
    expect(stationGateway).not.toBe(kioskGateway)
    console.log(`through nginx: the kiosk socket reached gateway ${kioskGateway === a ? 'A' : 'B'}, the station socket gateway ${stationGateway === a ? 'A' : 'B'}`)

    for (let i = 0; i < STATION_TAPS; i++) {
      const counter = STATION_FIRST_COUNTER + i
      const verdict = await station.tap(i, { rfUid: DEMO_CHIP, url: tapUrl(counter) })
      expect(verdict, `tap ${i}`).toMatchObject({ accepted: true, uid: DEMO_CHIP, counter })
      await kiosk.waitFor(() => kiosk.events().filter((m) => m.event.kind === 'tap').length > i, 5000)
    }
    // The kiosk's view names no chip or counter: its events are the station's feed rows of these taps, in order.
    const shown = kiosk.events().filter((m) => m.event.kind === 'tap')
    expect(shown.map((m) => m.event.kind === 'tap' && m.event.data.state)).toEqual(Array(STATION_TAPS).fill('accepted'))
    const sql = db.connect()
    const feed = await sql<{ id: number; counter: number }[]>`
      SELECT id::int AS id, (data::json->>'counter')::int AS counter FROM station_events WHERE station_id = ${stationId} AND kind = 'tap' ORDER BY id`
    expect(feed.map((row) => row.counter)).toEqual(Array.from({ length: STATION_TAPS }, (_, i) => STATION_FIRST_COUNTER + i))
    expect(shown.map((m) => m.event.id)).toEqual(feed.map((row) => row.id))
  })

  test(`${API_REQUESTS} API requests through nginx take turns between the two gateways (each gateway's own log)`, async () => {
    const { a, b } = gw
    for (let i = 0; i < API_REQUESTS; i++) {
      const res = await fetch(`${proxy}/events?probe=${i}`, { headers: { 'x-service-api-key': gw.apiKey } })
      expect(res.status, await res.text()).toBe(200)
    }
    const probes = (server: Server) => servedMatching(server, (url) => url.startsWith('/events?probe=')).map((url) => Number(url.split('=')[1]))
    const all = () => [...probes(a), ...probes(b)]
    await until('both gateways to log every probe', () => (all().length >= API_REQUESTS ? true : undefined), 5000)
    expect(all().sort((x, y) => x - y)).toEqual(Array.from({ length: API_REQUESTS }, (_, i) => i))
    // Round robin: consecutive requests on different gateways, so one has the even probes and the other the odd.
    const [first, second] = probes(a)[0]! % 2 === 0 ? [a, b] : [b, a]
    expect(probes(first)).toEqual(Array.from({ length: API_REQUESTS / 2 }, (_, i) => 2 * i))
    expect(probes(second)).toEqual(Array.from({ length: API_REQUESTS / 2 }, (_, i) => 2 * i + 1))
    console.log(`${API_REQUESTS} requests through nginx: A served ${probes(a).length}, B served ${probes(b).length}`)
  })

  test(`${PROXIED_TAPS} taps of the demo chip through nginx: each accepted once, split between the gateways, none lost or doubled`, async () => {
    const { a, b } = gw
    const tapsOn = (server: Server) => servedMatching(server, (url) => url.startsWith('/tap')).length
    const before = { a: tapsOn(a), b: tapsOn(b) }
    for (let i = 0; i < PROXIED_TAPS; i++) {
      const url = new URL(tapUrl(PROXIED_FIRST_COUNTER + i))
      const res = await fetch(`${proxy}${url.pathname}${url.search}`, { redirect: 'manual' })
      expect(res.status, `tap ${i}: ${await res.text()}`).toBeLessThan(400)
    }
    await until('both gateways to log every tap', () => (tapsOn(a) - before.a + tapsOn(b) - before.b >= PROXIED_TAPS ? true : undefined), 5000)
    const split = { a: tapsOn(a) - before.a, b: tapsOn(b) - before.b }
    expect(split).toEqual({ a: PROXIED_TAPS / 2, b: PROXIED_TAPS / 2 })

    const sql = db.connect()
    const rows = await sql<{ counter: number; accepted: boolean; reason: string }[]>`
      SELECT counter::int AS counter, accepted, reason FROM tap_log
      WHERE chip_uid = ${DEMO_CHIP} AND counter >= ${PROXIED_FIRST_COUNTER} ORDER BY id`
    expect(rows).toEqual(Array.from({ length: PROXIED_TAPS }, (_, i) => ({ counter: PROXIED_FIRST_COUNTER + i, accepted: true, reason: 'accepted' })))
    expect(await sql`SELECT count(*)::int AS n FROM refs WHERE chip_uid = ${DEMO_CHIP} AND counter >= ${PROXIED_FIRST_COUNTER}`).toEqual([{ n: PROXIED_TAPS }])
    expect(await sql`SELECT last_counter::int AS c FROM chips WHERE uid = ${DEMO_CHIP}`).toEqual([{ c: PROXIED_FIRST_COUNTER + PROXIED_TAPS - 1 }])
    console.log(`${PROXIED_TAPS} taps through nginx: A verified ${split.a}, B ${split.b}; tap_log ${rows.length} rows, all accepted`)
  })
})
