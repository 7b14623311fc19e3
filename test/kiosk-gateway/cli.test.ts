import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, expect, test } from 'vitest'
import { ConfigSchema } from '../../src/config.js'
import { openStore } from '../../src/db/store.js'
import { importData, parseImportFile } from '../../src/importer/importData.js'
import { loadGatewaySecret } from '../../src/keys/gatewaySecret.js'
import { authenticateKiosk } from '../../src/kiosk/kioskTokens.js'
import { openStaffSession } from '../../src/kiosk/staffAuth.js'
import { createStation } from '../../src/stations/stations.js'
import { metadata, testDir } from '../helpers/gateway.js'
import { cliPath, repoRoot } from '../helpers/processes.js'

// Issue 10's CLI, as users run it (a real process on a temp data dir): station set / list /
// kiosk-url / staff-pin, chip set --wallet, and `wallet` in the import file.

const baseEnv: NodeJS.ProcessEnv = {
  ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(PORT|HOST|TAPGATE_)/.test(name))),
  TAPGATE_STATION: 'false',
}
const children = new Set<ChildProcess>()
afterEach(() => {
  for (const child of children) if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) process.kill(child.pid, 'SIGKILL')
  children.clear()
})

type Result = { code: number | null; stdout: string; stderr: string }
function cli(args: string[], dataDir: string, opts: { stdin?: string; env?: Record<string, string> } = {}): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath, ...args], {
      cwd: repoRoot,
      env: { ...baseEnv, TAPGATE_DATA_DIR: dataDir, ...opts.env },
      stdio: [opts.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    })
    children.add(child)
    if (opts.stdin !== undefined) child.stdin!.end(opts.stdin)
    let stdout = ''
    let stderr = ''
    child.stdout!.setEncoding('utf8').on('data', (c: string) => (stdout += c))
    child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c))
    child.once('error', reject)
    child.once('close', (code) => resolve({ code, stdout, stderr }))
  })
}

const UID = '04C1C000000001'
const WALLET = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC'

async function seeded() {
  const dataDir = testDir('tapgate-kiosk-cli-')
  const store = openStore({ dataDir })
  try {
    const config = ConfigSchema.parse({ logLevel: 'silent', dataDir })
    const team = {
      name: 'Venue',
      chips: [{ uid: UID, wallet: WALLET.toLowerCase() }, { uid: '04C1C000000002' }],
      guestbookContracts: [{ name: 'Guests', symbol: 'GST', chainId: 31337, events: [{ name: 'Opening', tokenId: '1', metadata: metadata() }] }],
    }
    const summary = await importData(store, parseImportFile({ teams: [team] }), { config, now: Date.now(), secret: loadGatewaySecret({ dataDir }) })
    const teamId = summary.teams[0]!.id
    const station = await store.tx((tx) => createStation(tx, { teamId, name: 'Door A', now: Date.now() }))
    return { dataDir, teamId, stationId: station.stationId, eventId: (await store.guestbook.listEvents(teamId))[0]!.id, wallet: (await store.chips.get(UID))!.wallet }
  } finally {
    await store.close()
  }
}

test('station set / list: a check-in station for an event, closed, none; bad input exits 2 or 1 with a message', async () => {
  const { dataDir, teamId, stationId, eventId } = await seeded()
  const set = await cli(['station', 'set', '--station', String(stationId), '--mode', 'checkin', '--event', String(eventId)], dataDir)
  expect(set).toMatchObject({ code: 0 })
  expect(JSON.parse(set.stdout)).toEqual({ stationId, name: 'Door A', mode: 'checkin', eventId })
  const list = await cli(['station', 'list', '--team', String(teamId)], dataDir)
  expect(JSON.parse(list.stdout)).toEqual([expect.objectContaining({ stationId, mode: 'checkin', eventId, eventName: 'Opening' })])
  expect(JSON.parse((await cli(['station', 'set', '--station', String(stationId), '--mode', 'closed'], dataDir)).stdout)).toMatchObject({ mode: 'closed', eventId })

  const noEvent = await cli(['station', 'set', '--station', String(stationId), '--mode', 'checkin'], dataDir)
  expect(noEvent.code).toBe(2)
  expect(noEvent.stderr).toContain('--mode checkin needs --event')
  const badMode = await cli(['station', 'set', '--station', String(stationId), '--mode', 'open'], dataDir)
  expect(badMode.code).toBe(2)
  const otherEvent = await cli(['station', 'set', '--station', String(stationId), '--mode', 'checkin', '--event', '77'], dataDir)
  expect(otherEvent.code).toBe(1)
  expect(otherEvent.stderr).toContain('no guestbook event 77')
  const unknown = await cli(['station', 'set', '--station', '99', '--mode', 'closed'], dataDir)
  expect(unknown.code).toBe(1)
  expect(unknown.stderr).toContain('No active station with id 99')
  expect(JSON.parse((await cli(['station', 'set', '--station', String(stationId), '--mode', 'none'], dataDir)).stdout)).toMatchObject({ mode: null })
}, 60_000)

test('station kiosk-url prints one line with a working token in the fragment; --base-url and publicBaseUrl set the base', async () => {
  const { dataDir, stationId } = await seeded()
  const plain = await cli(['station', 'kiosk-url', '--station', String(stationId)], dataDir)
  expect(plain.code).toBe(0)
  expect(plain.stdout).toMatch(/^http:\/\/127\.0\.0\.1:8787\/kiosk#token=tgk_[\w-]{32}\n$/)
  const based = await cli(['station', 'kiosk-url', '--station', String(stationId), '--base-url', 'http://192.168.1.20:8787/'], dataDir)
  expect(based.stdout).toMatch(/^http:\/\/192\.168\.1\.20:8787\/kiosk#token=tgk_[\w-]{32}\n$/)
  const configured = await cli(['station', 'kiosk-url', '--station', String(stationId)], dataDir, { env: { TAPGATE_PUBLIC_BASE_URL: 'https://kiosk.example.org' } })
  expect(configured.stdout).toMatch(/^https:\/\/kiosk\.example\.org\/kiosk#token=tgk_/)
  const store = openStore({ dataDir })
  try {
    for (const out of [plain, based, configured]) expect((await authenticateKiosk(store, out.stdout.trim().split('#token=')[1])).id).toBe(stationId)
    // Stored hashed only.
    expect(JSON.stringify(store.db.prepare('SELECT * FROM kiosk_tokens').all())).not.toContain(plain.stdout.trim().split('#token=')[1])
  } finally {
    await store.close()
  }
  expect((await cli(['station', 'kiosk-url', '--station', '99'], dataDir)).code).toBe(1)
}, 60_000)

test('station staff-pin reads the PIN from stdin and stores a slow hash; a bad PIN exits 2', async () => {
  const { dataDir, stationId } = await seeded()
  const bad = await cli(['station', 'staff-pin', '--station', String(stationId)], dataDir, { stdin: '12a4\n' })
  expect(bad.code).toBe(2)
  expect(bad.stderr).toContain('4 to 12 digits')
  const ok = await cli(['station', 'staff-pin', '--station', String(stationId)], dataDir, { stdin: '90210\n' })
  expect(ok).toMatchObject({ code: 0 })
  expect(JSON.parse(ok.stdout)).toEqual({ stationId, pinSet: true })
  const store = openStore({ dataDir })
  try {
    const row = store.db.prepare('SELECT pin_hash AS h FROM staff_pins').get() as { h: string }
    expect(row.h).toMatch(/^scrypt\$32768\$8\$1\$/)
    expect(row.h).not.toContain('90210')
    const station = (await store.stations.get(stationId))!
    await expect(openStaffSession(store, { station, pin: '90210', now: Date.now() })).resolves.toMatchObject({ session: expect.stringMatching(/^tgss_/) })
  } finally {
    await store.close()
  }
}, 60_000)

test('chip set --wallet sets and clears the wallet; the import file sets it too (EIP-55)', async () => {
  const { dataDir, teamId, wallet } = await seeded()
  expect(wallet).toBe(WALLET)
  const other = '0x90F79bf6EB2c4f870365E785982E1f101E93b906'
  const set = await cli(['chip', 'set', '--uid', '04:c1:c0:00:00:00:02', '--team', String(teamId), '--wallet', other.toLowerCase()], dataDir)
  expect(set).toMatchObject({ code: 0 })
  expect(JSON.parse(set.stdout)).toEqual({ uid: '04C1C000000002', teamId, wallet: other })
  expect(JSON.parse((await cli(['chip', 'set', '--uid', UID, '--team', String(teamId), '--wallet', 'none'], dataDir)).stdout)).toMatchObject({ wallet: null })
  const bad = await cli(['chip', 'set', '--uid', UID, '--team', String(teamId), '--wallet', '0x1234'], dataDir)
  expect(bad.code).toBe(2)
  expect(bad.stderr).toContain('--wallet')
  const foreign = await cli(['chip', 'set', '--uid', '04C1C0000000FF', '--team', String(teamId), '--wallet', other], dataDir)
  expect(foreign.code).toBe(1)
  const store = openStore({ dataDir })
  try {
    expect((await store.chips.get('04C1C000000002'))!.wallet).toBe(other)
    expect((await store.chips.get(UID))!.wallet).toBeNull()
  } finally {
    await store.close()
  }
  expect(fs.existsSync(path.join(dataDir, 'tapgate.sqlite'))).toBe(true)
}, 60_000)
