import { spawn } from 'node:child_process'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, test } from 'vitest'
import { authenticateKiosk, createKioskToken, KIOSK_SEEN_RESOLUTION_MS } from '../../src/kiosk/kioskTokens.js'
import { KIOSK_CLOSE } from '../../src/wire/feedProtocol.js'
import { type BackendGateway, createBackendGateway } from '../helpers/gateway.js'
import { cliPath, collectOutput, repoRoot } from '../helpers/processes.js'
import { openKiosk, seedCheckInTeam, stationTap, UIDS, type KioskClient } from './kioskFixture.js'

// Issue 17 §6: one kiosk token is revoked alone (a lost tablet), `station kiosk-tokens` lists a
// station's tokens with when each was last seen, and a revoked token's open page closes.

let gw: BackendGateway
const clients: KioskClient[] = []
afterEach(async () => {
  for (const c of clients.splice(0)) c.ws.terminate()
  await gw?.close()
})

async function listening() {
  gw = await createBackendGateway()
  await gw.app.listen({ host: '127.0.0.1', port: 0 })
  return `http://127.0.0.1:${(gw.app.server.address() as AddressInfo).port}`
}
async function kiosk(base: string, hello: Record<string, unknown>) {
  const client = await openKiosk(base, hello)
  clients.push(client)
  await client.waitFor((m) => m.type === 'welcome')
  return client
}

/** The CLI as staff run it, on the running gateway's store: its data dir (WAL lets both work), or its PostgreSQL database. */
async function tapgate(args: string[]) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(PORT|HOST|TAPGATE_)/.test(name)))
  // Gateways sharing one database must not each embed a chain.
  const database = gw.databaseUrl ? { TAPGATE_DATABASE_URL: gw.databaseUrl, TAPGATE_EMBEDDED_CHAIN: 'false' } : {}
  const child = spawn(process.execPath, [cliPath, ...args, '--data-dir', gw.dataDir], { cwd: repoRoot, env: { ...env, ...database }, stdio: ['ignore', 'pipe', 'pipe'] })
  const output = collectOutput(child)
  const { code } = await output.exited
  return { code, stdout: output.stdout(), stderr: output.stderr() }
}

const ISO_NOW = '2026-11-21T10:00:00.000Z' // the test gateway's clock

describe('tapgate station kiosk-tokens', () => {
  test('lists prefix, created and last seen; --revoke PREFIX closes that kiosk (4401) and no other; the station goes on', async () => {
    const base = await listening()
    const s = await seedCheckInTeam(gw)
    const tablet = (await createKioskToken(gw.store, { stationId: s.door.stationId, now: gw.clock.now })).token
    const unused = (await createKioskToken(gw.store, { stationId: s.door.stationId, now: gw.clock.now })).token
    const lost = await kiosk(base, { token: tablet })
    const kept = await kiosk(base, { token: s.kiosk })

    const listed = await tapgate(['station', 'kiosk-tokens', '--station', String(s.door.stationId)])
    expect(listed).toMatchObject({ code: 0, stderr: '' })
    expect(JSON.parse(listed.stdout)).toEqual([
      { prefix: s.kiosk.slice(0, 10), createdAt: ISO_NOW, lastSeenAt: ISO_NOW, revokedAt: null },
      { prefix: tablet.slice(0, 10), createdAt: ISO_NOW, lastSeenAt: ISO_NOW, revokedAt: null },
      { prefix: unused.slice(0, 10), createdAt: ISO_NOW, lastSeenAt: null, revokedAt: null },
    ])
    expect(listed.stdout).not.toContain(tablet)

    const revoked = await tapgate(['station', 'kiosk-tokens', '--station', String(s.door.stationId), '--revoke', tablet.slice(0, 10)])
    expect(revoked).toMatchObject({ code: 0, stderr: '' })
    expect(JSON.parse(revoked.stdout)).toEqual({ stationId: s.door.stationId, prefix: tablet.slice(0, 10), revokedAt: expect.any(String) })
    // Closed as a station revoke closes it; the token opens nothing new.
    expect(await lost.closed).toEqual({ code: KIOSK_CLOSE.unauthorized, reason: 'invalid_kiosk_token' })
    const again = await openKiosk(base, { token: tablet })
    clients.push(again)
    expect(await again.closed).toEqual({ code: KIOSK_CLOSE.unauthorized, reason: 'invalid_kiosk_token' })
    // The other kiosk and the station itself go on.
    await stationTap(gw, s.door.token, UIDS[1]!, 1)
    await kept.waitFor((m) => m.type === 'event' && m.event.kind === 'tap' && m.event.data.state === 'accepted')
    expect(kept.ws.readyState).toBe(kept.ws.OPEN)
    const after = JSON.parse((await tapgate(['station', 'kiosk-tokens', '--station', String(s.door.stationId)])).stdout) as { prefix: string; revokedAt: string | null }[]
    expect(after.map((k) => [k.prefix, k.revokedAt !== null])).toEqual([
      [s.kiosk.slice(0, 10), false],
      [tablet.slice(0, 10), true],
      [unused.slice(0, 10), false],
    ])
  }, 30_000)

  test('an ambiguous prefix is exit 2, an unknown one (or a mistyped whole token, or a revoked one) exit 1; nothing is revoked', async () => {
    await listening()
    const s = await seedCheckInTeam(gw)
    const second = (await createKioskToken(gw.store, { stationId: s.door.stationId, now: gw.clock.now })).token
    const mistyped = second.slice(0, -1) + (second.at(-1) === 'A' ? 'B' : 'A')
    const station = String(s.door.stationId)
    const [ambiguous, unknown, wrongWhole, otherStation, noStation] = await Promise.all([
      tapgate(['station', 'kiosk-tokens', '--station', station, '--revoke', 'tgk_']),
      tapgate(['station', 'kiosk-tokens', '--station', station, '--revoke', 'tgk_%%%%%%']),
      tapgate(['station', 'kiosk-tokens', '--station', station, '--revoke', mistyped]),
      // The prefix of a token of another station revokes nothing here.
      tapgate(['station', 'kiosk-tokens', '--station', String(s.side.stationId), '--revoke', second.slice(0, 10)]),
      tapgate(['station', 'kiosk-tokens', '--station', '999']),
    ])
    expect(ambiguous.code).toBe(2)
    expect(ambiguous.stderr).toContain(`--revoke: 2 active kiosk tokens of station ${station} start with tgk_ (${s.kiosk.slice(0, 10)}, ${second.slice(0, 10)}): give more of it`)
    expect(unknown).toMatchObject({ code: 1, stdout: '' })
    expect(unknown.stderr).toContain(`No active kiosk token of station ${station} has the prefix tgk_%%%%%%`)
    expect(wrongWhole.code).toBe(1)
    expect(wrongWhole.stderr).toContain(`has that token (prefix ${second.slice(0, 10)})`)
    expect(otherStation.code).toBe(1)
    expect(noStation).toMatchObject({ code: 1, stderr: 'tapgate: No station with id 999\n' })
    expect((await authenticateKiosk(gw.store, s.kiosk)).id).toBe(s.door.stationId)
    expect((await authenticateKiosk(gw.store, second)).id).toBe(s.door.stationId)
    // Revoked once; a second revoke of the same prefix finds no active token.
    expect((await tapgate(['station', 'kiosk-tokens', '--station', station, '--revoke', second])).code).toBe(0)
    expect((await tapgate(['station', 'kiosk-tokens', '--station', station, '--revoke', second.slice(0, 10)])).code).toBe(1)
    await expect(authenticateKiosk(gw.store, second)).rejects.toThrow(/revoked/)
    expect((await authenticateKiosk(gw.store, s.kiosk)).id).toBe(s.door.stationId)
  }, 30_000)

  test('last seen moves with use, at most once a minute, and not on a check without seenAt', async () => {
    gw = await createBackendGateway()
    const s = await seedCheckInTeam(gw)
    const lastSeen = async () => (await gw.store.kioskTokens.listByStation(s.door.stationId))[0]!.lastSeenAt
    expect(await lastSeen()).toBeNull()
    await authenticateKiosk(gw.store, s.kiosk)
    expect(await lastSeen()).toBeNull()
    const t0 = gw.clock.now
    await authenticateKiosk(gw.store, s.kiosk, { seenAt: t0 })
    expect(await lastSeen()).toBe(t0)
    await authenticateKiosk(gw.store, s.kiosk, { seenAt: t0 + KIOSK_SEEN_RESOLUTION_MS - 1 })
    expect(await lastSeen()).toBe(t0)
    await authenticateKiosk(gw.store, s.kiosk, { seenAt: t0 + KIOSK_SEEN_RESOLUTION_MS })
    expect(await lastSeen()).toBe(t0 + KIOSK_SEEN_RESOLUTION_MS)
  })
})
