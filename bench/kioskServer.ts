/**
 * The server half of bench/kiosk.ts, in its own process so the bench's 10 kiosk sockets and its
 * station never share the gateway's event loop: a real gateway (buildApp, SQLite on a temp dir,
 * fixtures/taps/seed.json, no chain) listening on 127.0.0.1, one networked station, and the
 * in-process station on an in-process virtual reader (for the Chromium part).
 *
 * `tsx bench/kioskServer.ts DIR` prints one JSON line: { port, stationToken, stationKioskToken,
 * inProcessKioskToken }. Over IPC it takes { type: 'accepted' } → the acceptance time of every
 * feed row, and { type: 'tap' } → a virtual card placed on the in-process reader (its time back).
 *
 * "Accepted at the gateway" is the moment the tap's feed row is committed: the feed hub's
 * changed() is called right after that commit, and this process notes the time there, against
 * the newest row id. Times are absolute (performance.timeOrigin + performance.now()), so the
 * bench can compare them with its own.
 */
import { EventEmitter } from 'node:events'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildApp } from '../src/app.js'
import { ConfigSchema } from '../src/config.js'
import { openStore } from '../src/db/store.js'
import { importData, parseImportFile } from '../src/importer/importData.js'
import { loadGatewaySecret } from '../src/keys/gatewaySecret.js'
import { createKioskToken } from '../src/kiosk/kioskTokens.js'
import { createStation } from '../src/stations/stations.js'
import { startInProcessStation } from '../station/inProcessStation.js'
import type { Reader, ReaderSource, ReaderSourceEvents } from '../station/reader.js'
import { VirtualNtag424 } from '../station/virtual-card/ntag424.js'
import { createVirtualReader } from '../station/virtual-card/virtualReader.js'

const root = fileURLToPath(new URL('..', import.meta.url))
const dir = process.argv[2]
if (!dir) throw new Error('usage: tsx bench/kioskServer.ts DATA_DIR')

const at = () => performance.timeOrigin + performance.now()

/** One reader that exists from the start (announced on the next turn, like PC/SC's). */
class OneReader implements ReaderSource {
  private readonly emitter = new EventEmitter()
  constructor(private readonly reader: Reader) {}
  on<E extends keyof ReaderSourceEvents>(event: E, listener: ReaderSourceEvents[E]): this {
    this.emitter.on(event, listener as (...args: unknown[]) => void)
    if (event === 'reader') setImmediate(() => (listener as ReaderSourceEvents['reader'])(this.reader))
    return this
  }
  off<E extends keyof ReaderSourceEvents>(event: E, listener: ReaderSourceEvents[E]): this {
    this.emitter.off(event, listener as (...args: unknown[]) => void)
    return this
  }
  close = () => this.reader.close()
}

const seed = JSON.parse(fs.readFileSync(path.join(root, 'fixtures/taps/seed.json'), 'utf8')) as {
  teams: [{ name: string; chipProfiles: { mode: string; metaKey: string; fileKey: string }[] }]
}
const config = ConfigSchema.parse({ dataDir: dir, demo: false, logLevel: 'silent', chain: { embedded: false }, station: { enabled: true } })
const store = openStore({ dataDir: dir })
const secret = loadGatewaySecret({ dataDir: dir, secretHex: config.secret })
const { teams } = await importData(store, parseImportFile(seed), { config, now: Date.now(), secret })
const teamId = teams[0]!.id
const { stationId, token: stationToken } = await store.tx((tx) => createStation(tx, { teamId, name: 'bench door', now: Date.now() }))
const stationKioskToken = (await createKioskToken(store, { stationId, now: Date.now() })).token

const app = await buildApp({ config, store })
const acceptedAt = new Map<number, number>()
const { feed } = app.services
const changed = feed.changed.bind(feed)
feed.changed = async () => {
  acceptedAt.set(await store.stationEvents.maxId(), at())
  changed()
}
await app.listen({ host: '127.0.0.1', port: 0 })
const port = (app.server.address() as { port: number }).port

// The in-process station on a virtual reader: the Chromium part's "virtual-card insert".
const reader = createVirtualReader<VirtualNtag424>('Virtual NTAG 424 reader')
const inProcess = await startInProcessStation({ app, store, config, openReaders: async () => new OneReader(reader) })
if (!inProcess) throw new Error('the in-process station did not start')
const inProcessKioskToken = (await createKioskToken(store, { stationId: inProcess.stationId, now: Date.now() })).token
const aes = seed.teams[0].chipProfiles.find((p) => p.mode === 'aes')!
const chip = new VirtualNtag424({ uid: '04A1B2C3D4E502', metaKey: aes.metaKey, fileKey: aes.fileKey })

process.on('message', (message: { type: string }) => {
  if (message.type === 'accepted') process.send!({ type: 'accepted', acceptedAt: [...acceptedAt] })
  else if (message.type === 'tap') {
    const placedAt = at()
    reader.place(chip)
    inProcess.station.once('verdict', () => {
      // The station's own insert → verdict time: the target compares the rendered result with it.
      const verdictAt = at()
      reader.remove()
      process.send!({ type: 'tapped', placedAt, verdictAt })
    })
  }
})

const stop = async () => {
  await inProcess.close()
  await app.close()
  await store.close()
  process.exit(0)
}
process.once('SIGTERM', () => void stop())
process.once('disconnect', () => void stop())
console.log(JSON.stringify({ port, stationToken, stationKioskToken, inProcessKioskToken }))
