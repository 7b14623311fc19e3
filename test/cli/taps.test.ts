import { spawn } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, test } from 'vitest'
import { formatNtag21xMirror } from '../../src/sun/index.js'
import { createTestGateway, seedTeam, type TestGateway } from '../helpers/gateway.js'

const repoRoot = fileURLToPath(new URL('../..', import.meta.url))
const cliPath = path.join(repoRoot, 'src', 'cli', 'tapgate.js')

const CHIP = '04D40000000001'
const OTHER = '04D40000000002'
const UNREGISTERED = '04D400000000FF'

let gw: TestGateway
afterEach(async () => gw?.close())

type Run = { code: number | null; stdout: string; stderr: string }

/** The CLI as staff run it, on the test gateway's data dir (beside the running app, as WAL allows). */
function tapgate(args: string[]): Promise<Run> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('TAPGATE_')))
  const child = spawn(process.execPath, [cliPath, ...args, '--data-dir', gw.dataDir], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })))
}

const tap = (uid: string, counter: number) => gw.app.inject({ url: `/tap?uid=${formatNtag21xMirror({ uid, counter })}` })

async function setup() {
  gw = await createTestGateway({ config: { rateLimit: { max: 100_000 } } })
  const a = await seedTeam(gw, { name: 'A', chips: [{ uid: CHIP, kind: 'ntag21x' }] })
  const b = await seedTeam(gw, { name: 'B', chips: [{ uid: OTHER, kind: 'ntag21x' }] })
  expect((await tap(CHIP, 10)).statusCode).toBe(200)
  expect((await tap(CHIP, 0xfffffe)).statusCode).toBe(400)
  expect((await tap(UNREGISTERED, 1)).statusCode).toBe(400)
  expect((await tap(OTHER, 3)).statusCode).toBe(200)
  return { teamA: a.teamId, teamB: b.teamId }
}

describe('tapgate taps', () => {
  test("list --team ID --refused --json: the team's refusals with reason, presented counter and detail, never a ref id", async () => {
    const { teamA } = await setup()
    const r = await tapgate(['taps', 'list', '--team', String(teamA), '--refused', '--json'])
    expect(r).toMatchObject({ code: 0, stderr: '' })
    const rows = JSON.parse(r.stdout) as Record<string, unknown>[]
    expect(rows).toEqual([
      {
        id: expect.any(Number),
        at: '2026-11-21T10:00:00.000Z',
        source: 'phone',
        uid: CHIP,
        accepted: false,
        authenticated: false,
        reason: 'counter_jump',
        counter: 0xfffffe,
        detail: expect.stringContaining('last accepted counter 10'),
      },
    ])
    expect(r.stdout).not.toContain((await gw.store.tapLog.recent(10)).find((row) => row.refId !== null)!.refId!)

    // The whole team, newest first; --limit; and without --team every row, also those that named no registered chip.
    const all = JSON.parse((await tapgate(['taps', 'list', '--team', String(teamA), '--json'])).stdout) as { reason: string }[]
    expect(all.map((row) => row.reason)).toEqual(['counter_jump', 'accepted'])
    const one = JSON.parse((await tapgate(['taps', 'list', '--limit', '1', '--json'])).stdout) as { uid: string }[]
    expect(one.map((row) => row.uid)).toEqual([OTHER])
    const everything = JSON.parse((await tapgate(['taps', 'list', '--refused', '--json'])).stdout) as { reason: string; uid: string }[]
    expect(everything.map((row) => [row.reason, row.uid])).toEqual([
      ['unknown_chip', UNREGISTERED],
      ['counter_jump', CHIP],
    ])
  })

  test('list without --json: one line per tap, readable, with the reason and the detail', async () => {
    const { teamA } = await setup()
    const r = await tapgate(['taps', 'list', '--team', String(teamA)])
    expect(r.code).toBe(0)
    const lines = r.stdout.trimEnd().split('\n')
    expect(lines).toHaveLength(2)
    expect(lines[0]).toMatch(/^2026-11-21T10:00:00\.000Z\s+phone\s+04D40000000001\s+refused\s+counter_jump\s+ctr 16777214\s+counter 16777214 is/)
    expect(lines[1]).toMatch(/^2026-11-21T10:00:00\.000Z\s+phone\s+04D40000000001\s+accepted\s+ctr 10/)
  })

  test('set-counter: staff move a chip past a refused jump after checking it; the chip then taps on from there', async () => {
    const { teamA, teamB } = await setup()
    expect((await tap(CHIP, 5000)).statusCode).toBe(400)
    const r = await tapgate(['taps', 'set-counter', '--uid', CHIP, '--team', String(teamA), '--counter', '4999'])
    expect(r).toMatchObject({ code: 0, stderr: '' })
    expect(JSON.parse(r.stdout)).toEqual({ uid: CHIP, previousCounter: 10, counter: 4999 })
    expect((await tap(CHIP, 5000)).statusCode).toBe(200)
    // Another team's chip is not found; bad numbers are usage errors.
    expect(await tapgate(['taps', 'set-counter', '--uid', CHIP, '--team', String(teamB), '--counter', '1'])).toMatchObject({ code: 1 })
    expect((await gw.store.chips.get(CHIP))!.lastCounter).toBe(5000)
    for (const counter of ['-1', '16777215', 'x']) expect((await tapgate(['taps', 'set-counter', '--uid', CHIP, '--team', String(teamA), '--counter', counter])).code).toBe(2)
  })

  test('usage errors exit 2', async () => {
    await setup()
    const runs = await Promise.all([tapgate(['taps', 'list', '--limit', '0']), tapgate(['taps', 'list', '--team', 'x']), tapgate(['taps', 'frob'])])
    expect(runs.map((r) => [r.code, r.stdout])).toEqual(Array(3).fill([2, '']))
  })
})
