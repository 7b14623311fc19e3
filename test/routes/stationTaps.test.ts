import { spawn } from 'node:child_process'
import path from 'node:path'
import { Writable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, test } from 'vitest'
import type { TapLogRow } from '../../src/db/tapLog.js'
import {
  an10922Input,
  deriveBoltCardKeys,
  deriveSdmBackendMetaKey,
  deriveSdmBackendTagKey,
  diversifyAn10922,
  formatNtag21xMirror,
} from '../../src/sun/index.js'
import { authenticateStation, createStation, revokeStation } from '../../src/stations/stations.js'
import type { TapRejectReason } from '../../src/taps/tapErrors.js'
import { type BackendGateway, call, createBackendGateway, queryRows, seedSunChip, seedSunProfile, seedTeam, sunTapUrl } from '../helpers/gateway.js'

const META = '5ACE7E50AB65D5D51FD5BF5A16B8205B'
const FILE = '97D1F3FCC8A6B3A4F1AE6F1E3B4BD5A0'
const LRP_META = '22222222222222222222222222222222'
const LRP_FILE = '33333333333333333333333333333333'
const WRONG = 'F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0F0'
const MASTER = '00112233445566778899AABBCCDDEEFF'
const BASE = 'https://tap.example.com/tap'

const UID = {
  a: '04B20000000001',
  b: '04B20000000002',
  random: '04B20000000003',
  lrp: '04B20000000004',
  ntag21x: '04B20000000005',
  an10922: '04B2000000000A',
  sdm: '04B2000000000B',
  bolt: '04B2000000000C',
  otherTeam: '04B200000000EE',
  unregistered: '04B200000000FF',
}

let gw: BackendGateway
afterEach(async () => gw?.close())

async function setup() {
  gw = await createBackendGateway()
  const { teamId } = await seedTeam(gw, {
    name: 'A',
    chips: [...[UID.a, UID.b, UID.random, UID.lrp, UID.an10922, UID.sdm, UID.bolt].map((uid) => ({ uid })), { uid: UID.ntag21x, kind: 'ntag21x' }],
  })
  const other = await seedTeam(gw, { name: 'B', chips: [{ uid: UID.otherTeam }] })
  await seedSunProfile(gw, { teamId, name: 'aes', metaKey: META, fileKey: FILE })
  await seedSunProfile(gw, { teamId, name: 'lrp', mode: 'lrp', metaKey: LRP_META, fileKey: LRP_FILE })
  await seedSunProfile(gw, { teamId, name: 'an10922', keyScheme: 'an10922', metaKey: META, masterKey: MASTER })
  await seedSunProfile(gw, { teamId, name: 'sdm', keyScheme: 'sdm_backend', masterKey: MASTER })
  await seedSunProfile(gw, { teamId, name: 'bolt', keyScheme: 'boltcard', masterKey: MASTER, layout: { piccParam: 'p', macParam: 'c' } })
  for (const uid of [UID.a, UID.b]) await seedSunChip(gw, { teamId, uid, profileName: 'aes' })
  await seedSunChip(gw, { teamId, uid: UID.random, profileName: 'aes', randomUid: true })
  await seedSunChip(gw, { teamId, uid: UID.lrp, profileName: 'lrp' })
  await seedSunChip(gw, { teamId, uid: UID.an10922, profileName: 'an10922' })
  await seedSunChip(gw, { teamId, uid: UID.sdm, profileName: 'sdm' })
  await seedSunChip(gw, { teamId, uid: UID.bolt, profileName: 'bolt' })
  await seedSunProfile(gw, { teamId: other.teamId, name: 'aes', metaKey: META, fileKey: FILE })
  await seedSunChip(gw, { teamId: other.teamId, uid: UID.otherTeam, profileName: 'aes' })
  const station = await gw.store.tx((tx) => createStation(tx, { teamId, name: 'front desk', now: gw.clock.now }))
  return { teamId, otherTeamId: other.teamId, token: station.token }
}

const aesUrl = (uid: string | null, counter: number | null, extra: { fileData?: string; metaKey?: string; fileKey?: string } = {}) =>
  sunTapUrl({ metaKey: META, fileKey: FILE, uid, counter, base: BASE, ...extra })

function submit(token: string | undefined, body: Record<string, unknown>) {
  return call(gw, { method: 'POST', url: '/station/taps', headers: token === undefined ? {} : { 'x-station-token': token }, payload: body })
}

const lastLog = async (): Promise<TapLogRow> => (await gw.store.tapLog.recent(1))[0]!

async function expectRejected(token: string, body: { rfUid: string; url: string }, reason: TapRejectReason, status: number) {
  const res = await submit(token, body)
  expect(res.status).toBe(status)
  expect(res.body).toEqual({ success: false, error: reason, message: expect.any(String), detail: expect.any(String) })
  expect(res.body.message).toContain(res.body.detail)
  expect(await lastLog()).toMatchObject({ accepted: 0, reason, source: 'station', refId: null, detail: res.body.detail })
  return res.body as { message: string; detail: string }
}

describe('POST /station/taps: authentication', () => {
  test('401 without a token, with an unknown one, and with a revoked one', async () => {
    const { token } = await setup()
    const body = { rfUid: UID.a, url: aesUrl(UID.a, 1) }
    expect(await submit(undefined, body)).toMatchObject({ status: 401, body: { success: false, error: 'station_token_missing' } })
    expect(await submit('tgs_not-a-real-token', body)).toMatchObject({ status: 401, body: { success: false, error: 'invalid_station_token' } })
    expect(await submit(token.slice(0, -1), body)).toMatchObject({ status: 401, body: { error: 'invalid_station_token' } })
    expect(await revokeStation(gw.store, { tokenOrPrefix: token.slice(0, 10), now: gw.clock.now })).toBe(1)
    expect(await submit(token, body)).toMatchObject({ status: 401, body: { error: 'invalid_station_token' } })
    // None of these reached verification.
    expect(await gw.store.tapLog.recent()).toEqual([])
    expect((await gw.store.chips.get(UID.a))!.lastCounter).toBeNull()
  })

  test('only the token hash and prefix are stored', async () => {
    const { token, teamId } = await setup()
    expect(token).toMatch(/^tgs_[\w-]{32}$/)
    // `team`: PostgreSQL's client camelCases team_id.
    const [row] = await queryRows(gw.store, 'SELECT *, team_id AS team FROM stations')
    expect(JSON.stringify(row)).not.toContain(token)
    expect(row).toMatchObject({ team: teamId, name: 'front desk', prefix: token.slice(0, 10) })
    expect(await authenticateStation(gw.store, token)).toMatchObject({ teamId, name: 'front desk' })
  })

  test('a bad body is a 400 with the standard error body', async () => {
    const { token } = await setup()
    const res = await submit(token, { rfUid: 'nope', url: aesUrl(UID.a, 1), readAt: 'yesterday' })
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ success: false, error: 'validation_failed', errors: { rfUid: expect.any(String), readAt: expect.any(String) } })
  })
})

describe('POST /station/taps: accepted taps', () => {
  test('returns the ref and the verified fields; the RF UID in any case with ":" separators', async () => {
    const { token, teamId } = await setup()
    const rfUid = UID.a.toLowerCase().match(/../g)!.join(':')
    const res = await submit(token, { rfUid, url: aesUrl(UID.a, 0), readerName: 'ACS ACR1252 PICC', readAt: '2026-11-21T09:59:59.500Z' })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ success: true, refId: expect.stringMatching(/^[\w-]{21}$/), uid: UID.a, counter: 0, mode: 'aes', authenticated: true, fileData: null })
    expect(await lastLog()).toMatchObject({ source: 'station', chipUid: UID.a, teamId, accepted: 1, authenticated: 1, counter: 0, refId: res.body.refId })
    expect(await gw.store.refs.get(res.body.refId)).toMatchObject({ source: 'station', authenticated: 1 })
    // The ref is valid exactly once.
    expect((await call(gw, { url: `/refs/${res.body.refId}` })).body).toMatchObject({ uid: UID.a, isValidRef: true })
    expect((await call(gw, { url: `/refs/${res.body.refId}` })).body).toMatchObject({ uid: UID.a, isValidRef: false })
  })

  test('decrypted file data is returned', async () => {
    const { token } = await setup()
    const fileData = '000102030405060708090A0B0C0D0E0F'.repeat(2)
    const res = await submit(token, { rfUid: UID.a, url: aesUrl(UID.a, 3, { fileData }) })
    expect(res.body).toMatchObject({ success: true, uid: UID.a, counter: 3, fileData })
    const lrp = await submit(token, {
      rfUid: UID.lrp,
      url: sunTapUrl({ metaKey: LRP_META, fileKey: LRP_FILE, mode: 'lrp', uid: UID.lrp, counter: 4, fileData, base: BASE }),
    })
    expect(lrp.body).toMatchObject({ success: true, uid: UID.lrp, counter: 4, mode: 'lrp', fileData })
  })

  test('a chip marked as using random UIDs is accepted whatever RF UID the reader saw', async () => {
    const { token } = await setup()
    const res = await submit(token, { rfUid: '08A1B2C3D4E5F6', url: aesUrl(UID.random, 1) })
    expect(res.body).toMatchObject({ success: true, uid: UID.random })
  })

  test('the three key diversification schemes, including a Bolt Card lnurlw URL', async () => {
    const { token } = await setup()
    const bolt = deriveBoltCardKeys({ issuerKey: MASTER, uid: UID.bolt, version: 1 })
    const urls: [string, string][] = [
      [UID.an10922, sunTapUrl({ metaKey: META, fileKey: diversifyAn10922({ masterKey: MASTER, m: an10922Input({ uid: UID.an10922 }) }), uid: UID.an10922, counter: 1, base: BASE })],
      [
        UID.sdm,
        sunTapUrl({
          metaKey: deriveSdmBackendMetaKey({ masterKey: MASTER }),
          fileKey: deriveSdmBackendTagKey({ masterKey: MASTER, uid: UID.sdm, keyNo: 2 }),
          uid: UID.sdm,
          counter: 1,
          fileData: 'CAFE'.repeat(8),
          base: 'https://sdm.example.com/tagpt',
          params: { picc: 'picc_data', mac: 'cmac', enc: 'enc' },
        }),
      ],
      [UID.bolt, sunTapUrl({ metaKey: bolt.k1, fileKey: bolt.k2, uid: UID.bolt, counter: 1, base: 'lnurlw://card.example.com/ln', params: { picc: 'p', mac: 'c' } })],
    ]
    for (const [uid, url] of urls) {
      const res = await submit(token, { rfUid: uid, url })
      expect(res.body, uid).toMatchObject({ success: true, uid, counter: 1, authenticated: true })
    }
  })

  test('an NTAG 21x mirror is accepted, unauthenticated, for an ntag21x chip', async () => {
    const { token } = await setup()
    const res = await submit(token, { rfUid: UID.ntag21x, url: `${BASE}?uid=${formatNtag21xMirror({ uid: UID.ntag21x, counter: 7 })}` })
    expect(res.body).toMatchObject({ success: true, uid: UID.ntag21x, counter: 7, mode: 'ntag21x', authenticated: false, fileData: null })
    expect(await lastLog()).toMatchObject({ accepted: 1, authenticated: 0, counter: 7 })
    expect(await gw.store.refs.get(res.body.refId)).toMatchObject({ authenticated: 0 })
  })
})

describe('POST /station/taps: each rejection reason, with its status and detail', () => {
  test('malformed', async () => {
    const { token } = await setup()
    await expectRejected(token, { rfUid: UID.a, url: `${BASE}?e=1234&c=5678` }, 'malformed', 400)
    await expectRejected(token, { rfUid: UID.a, url: 'not a url at all' }, 'malformed', 400)
    const lower = await expectRejected(token, { rfUid: UID.a, url: aesUrl(UID.a, 1).toLowerCase() }, 'malformed', 400)
    expect(lower.detail).toContain('lower-cased')
  })

  test('not_sun_message: the wrong meta key', async () => {
    const { token } = await setup()
    const url = sunTapUrl({ metaKey: WRONG, fileKey: FILE, uid: UID.a, counter: 1, base: BASE, random: Buffer.alloc(5, 0x5a) })
    await expectRejected(token, { rfUid: UID.a, url }, 'not_sun_message', 400)
  })

  test('mac_mismatch: the wrong file key', async () => {
    const { token } = await setup()
    await expectRejected(token, { rfUid: UID.a, url: aesUrl(UID.a, 1, { fileKey: WRONG }) }, 'mac_mismatch', 403)
    expect(await lastLog()).toMatchObject({ chipUid: UID.a })
  })

  test('mode_mismatch: an LRP message where only AES profiles apply', async () => {
    gw = await createBackendGateway()
    const { teamId } = await seedTeam(gw, { name: 'AES only', chips: [{ uid: UID.a }] })
    await seedSunProfile(gw, { teamId, name: 'aes', metaKey: META, fileKey: FILE })
    await seedSunChip(gw, { teamId, uid: UID.a, profileName: 'aes' })
    const { token } = await gw.store.tx((tx) => createStation(tx, { teamId, now: gw.clock.now }))
    const url = sunTapUrl({ metaKey: META, fileKey: FILE, mode: 'lrp', uid: UID.a, counter: 1, base: BASE })
    await expectRejected(token, { rfUid: UID.a, url }, 'mode_mismatch', 400)
  })

  test("unknown_chip: a chip nobody registered, and another team's chip", async () => {
    const { token } = await setup()
    await expectRejected(token, { rfUid: UID.unregistered, url: aesUrl(UID.unregistered, 1) }, 'unknown_chip', 404)
    const foreign = await expectRejected(token, { rfUid: UID.otherTeam, url: aesUrl(UID.otherTeam, 1) }, 'unknown_chip', 404)
    expect(foreign.detail).toContain("not registered to this station's team")
    // The other team's chip did not spend its counter on this station.
    expect((await gw.store.chips.get(UID.otherTeam))!.lastCounter).toBeNull()
  })

  test('uid_mismatch: a URL copied from one chip, read on another', async () => {
    const { token } = await setup()
    const copied = await expectRejected(token, { rfUid: UID.b, url: aesUrl(UID.a, 1) }, 'uid_mismatch', 403)
    expect(copied.detail).toContain(`the reader saw UID ${UID.b} but the message is from chip ${UID.a}`)
    expect((await gw.store.chips.get(UID.a))!.lastCounter).toBeNull()
    // The genuine chip can still use it.
    expect((await submit(token, { rfUid: UID.a, url: aesUrl(UID.a, 1) })).status).toBe(200)
  })

  test('counter_replay: the same URL twice, and an older counter after a newer one, naming both numbers', async () => {
    const { token } = await setup()
    const url = aesUrl(UID.a, 5)
    expect((await submit(token, { rfUid: UID.a, url })).status).toBe(200)
    const again = await expectRejected(token, { rfUid: UID.a, url }, 'counter_replay', 409)
    expect(again.detail).toBe('counter 5 is not above the last accepted counter 5')
    expect((await submit(token, { rfUid: UID.a, url: aesUrl(UID.a, 20) })).status).toBe(200)
    const older = await expectRejected(token, { rfUid: UID.a, url: aesUrl(UID.a, 11) }, 'counter_replay', 409)
    expect(older.message).toContain('counter 11 is not above the last accepted counter 20')
  })

  test('counter_limit', async () => {
    const { token } = await setup()
    await expectRejected(token, { rfUid: UID.a, url: aesUrl(UID.a, 0xffffff) }, 'counter_limit', 409)
  })

  test('no_counter: a UID-only message', async () => {
    const { token } = await setup()
    await expectRejected(token, { rfUid: UID.a, url: aesUrl(UID.a, null) }, 'no_counter', 400)
  })

  test('counter-only PICCData: the RF UID names the chip when its file key is its own, never under a shared key', async () => {
    const { token } = await setup()
    // Fixed chip randomness: under the other profiles' meta keys this PICCData is garbage, the same garbage every run.
    const random = Buffer.alloc(12, 0x3c)
    // A static profile shares one file key: chip A's copied URL would verify on chip B, so it is refused.
    const shared = sunTapUrl({ metaKey: META, fileKey: FILE, uid: null, counter: 2, base: BASE, random })
    const refused = await expectRejected(token, { rfUid: UID.a, url: shared }, 'malformed', 400)
    expect(refused.detail).toContain('shares one file key across chips')
    // A diversified file key is the chip's own: its MAC proves which chip wrote the message.
    const fileKey = diversifyAn10922({ masterKey: MASTER, m: an10922Input({ uid: UID.an10922 }) })
    const own = sunTapUrl({ metaKey: META, fileKey, uid: null, counter: 2, base: BASE, random })
    const accepted = await submit(token, { rfUid: UID.an10922, url: own })
    expect(accepted.status).toBe(200)
    expect(accepted.body).toMatchObject({ success: true, uid: UID.an10922, counter: 2, authenticated: true })
    // The same message on another chip's reader fails its MAC under that chip's key, and a replay its counter.
    await expectRejected(token, { rfUid: UID.a, url: own }, 'malformed', 400)
    await expectRejected(token, { rfUid: UID.an10922, url: own }, 'counter_replay', 409)
    // Without a reader there is no RF UID, so a phone tap of it names no chip.
    const phone = await gw.app.inject({ url: own.replace(BASE, '/tap') })
    expect(phone.statusCode).toBe(400)
  })

  test('no_mac: an NTAG 21x mirror for an NTAG 424 DNA chip', async () => {
    const { token } = await setup()
    await expectRejected(token, { rfUid: UID.a, url: `${BASE}?uid=${UID.a}x000001` }, 'no_mac', 400)
  })

  test('every accepted and refused station tap is in the tap log', async () => {
    const { token } = await setup()
    const taps: [{ rfUid: string; url: string }, string][] = [
      [{ rfUid: UID.a, url: aesUrl(UID.a, 1) }, 'accepted'],
      [{ rfUid: UID.a, url: aesUrl(UID.a, 1) }, 'counter_replay'],
      [{ rfUid: UID.b, url: aesUrl(UID.a, 2) }, 'uid_mismatch'],
      [{ rfUid: UID.otherTeam, url: aesUrl(UID.otherTeam, 1) }, 'unknown_chip'],
      [{ rfUid: UID.a, url: aesUrl(UID.a, 3, { fileKey: WRONG }) }, 'mac_mismatch'],
      [{ rfUid: UID.a, url: aesUrl(UID.a, 4) }, 'accepted'],
    ]
    for (const [body] of taps) await submit(token, body)
    const rows = (await gw.store.tapLog.recent(100)).reverse()
    expect(rows.map((r) => r.reason)).toEqual(taps.map(([, reason]) => reason))
    expect(rows.every((r) => r.source === 'station')).toBe(true)
    expect(rows.filter((r) => r.refId !== null)).toHaveLength(2)
  })
})

describe('POST /station/taps: logs', () => {
  test('carry the station and the outcome, never the station token or the ref id', async () => {
    const chunks: string[] = []
    const stream = new Writable({
      write(chunk: Buffer | string, _encoding, callback) {
        chunks.push(chunk.toString())
        callback()
      },
    })
    gw = await createBackendGateway({ config: { logLevel: 'info' }, logStream: stream })
    const { teamId } = await seedTeam(gw, { name: 'Logged', chips: [{ uid: UID.a }] })
    await seedSunProfile(gw, { teamId, name: 'aes', metaKey: META, fileKey: FILE })
    await seedSunChip(gw, { teamId, uid: UID.a, profileName: 'aes' })
    const { token, stationId } = await gw.store.tx((tx) => createStation(tx, { teamId, now: gw.clock.now }))
    const accepted = await submit(token, { rfUid: UID.a, url: aesUrl(UID.a, 1), readerName: 'Reader 1' })
    expect(accepted.status).toBe(200)
    expect((await submit(token, { rfUid: UID.a, url: aesUrl(UID.a, 1), readerName: 'Reader 1' })).status).toBe(409)
    expect((await submit(`${token}x`, { rfUid: UID.a, url: aesUrl(UID.a, 2) })).status).toBe(401)

    const completed = () => chunks.join('').split('\n').filter((line) => line.includes('"request completed"')).length
    for (let i = 0; i < 50 && completed() < 3; i++) await new Promise((resolve) => setTimeout(resolve, 10))
    const lines = chunks.join('').split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>)
    expect(lines.filter((l) => l.msg === 'request completed')).toHaveLength(3)
    expect(lines.find((l) => l.msg === 'station tap accepted')).toMatchObject({ stationId, readerName: 'Reader 1', uid: UID.a, counter: 1 })
    expect(lines.find((l) => l.msg === 'station tap refused')).toMatchObject({ stationId, uid: UID.a, reason: 'counter_replay' })
    const text = chunks.join('')
    expect(text).not.toContain(token)
    expect(text).not.toContain(accepted.body.refId)
  })
})

describe('tapgate station', () => {
  const cliPath = path.join(fileURLToPath(new URL('../..', import.meta.url)), 'src/cli/tapgate.js')
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(PORT|HOST|TAPGATE_)/.test(name)))

  function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    // On PostgreSQL the gateway's database; gateways sharing one must not each embed a chain.
    const database = gw.databaseUrl ? { TAPGATE_DATABASE_URL: gw.databaseUrl, TAPGATE_EMBEDDED_CHAIN: 'false' } : {}
    const child = spawn(process.execPath, [cliPath, ...args, '--data-dir', gw.dataDir], {
      cwd: gw.dataDir,
      env: { ...env, ...database },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        if (child.pid !== undefined) process.kill(child.pid, 'SIGKILL')
        reject(new Error(`tapgate ${args.join(' ')} did not finish\nstderr: ${stderr}`))
      }, 20_000)
      child.once('exit', (code) => {
        clearTimeout(timer)
        resolve({ code, stdout, stderr })
      })
    })
  }

  test('create prints the token once; it works until revoked; list shows prefixes only', async () => {
    const { teamId } = await setup()
    const created = await cli(['station', 'create', '--team', String(teamId), '--name', 'kiosk 2'])
    expect(created).toMatchObject({ code: 0, stderr: '' })
    const out = JSON.parse(created.stdout) as { stationId: number; teamId: number; token: string }
    expect(out).toEqual({ stationId: expect.any(Number), teamId, token: expect.stringMatching(/^tgs_[\w-]{32}$/) })
    expect((await submit(out.token, { rfUid: UID.a, url: aesUrl(UID.a, 1) })).status).toBe(200)

    const listed = await cli(['station', 'list', '--team', String(teamId)])
    expect(listed.code).toBe(0)
    expect(listed.stdout).not.toContain(out.token)
    expect(JSON.parse(listed.stdout)).toEqual([
      { stationId: expect.any(Number), name: 'front desk', prefix: expect.stringMatching(/^tgs_/), mode: null, eventId: null, eventName: null, createdAt: expect.any(String), revokedAt: null },
      { stationId: out.stationId, name: 'kiosk 2', prefix: out.token.slice(0, 10), mode: null, eventId: null, eventName: null, createdAt: expect.any(String), revokedAt: null },
    ])

    expect(await cli(['station', 'revoke', '--prefix', out.token.slice(0, 10)])).toMatchObject({ code: 0, stdout: expect.stringContaining('"revoked": 1') })
    expect((await submit(out.token, { rfUid: UID.a, url: aesUrl(UID.a, 2) })).status).toBe(401)
    expect(await cli(['station', 'revoke', '--prefix', out.token])).toMatchObject({ code: 1, stderr: expect.stringContaining('No active station token') })
    expect(await cli(['station', 'create', '--team', '999'])).toMatchObject({ code: 1, stderr: expect.stringContaining('No team with id 999') })
    expect(await cli(['station', 'create'])).toMatchObject({ code: 2, stderr: expect.stringContaining('--team is required') })
  })
})
