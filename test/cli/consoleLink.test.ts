import { type ChildProcess, spawn } from 'node:child_process'
import { afterEach, describe, expect, test } from 'vitest'
import { testDir } from '../helpers/gateway.js'
import { cliPath, collectOutput, repoRoot, type Server, startServe, stopChild } from '../helpers/processes.js'

// Issue 28: `tapgate console-link --team ID` prints a one-time sign-in link to the team's web console,
// which signs in on a served gateway once; `--revoke-sessions` signs the team's sessions out; the
// demo's first start leads its Try block with one.

// Settings from the real environment (PORT, HOST, TAPGATE_*) must not reach the children.
const baseEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(PORT|HOST|TAPGATE_)/.test(name)))
const children: ChildProcess[] = []
afterEach(async () => {
  for (const child of children.splice(0)) await stopChild(child)
})

type Run = { code: number | null; stdout: string; stderr: string }

async function tapgate(dataDir: string, args: string[], env: Record<string, string> = {}): Promise<Run> {
  const child = spawn(process.execPath, [cliPath, ...args], { cwd: repoRoot, env: { ...baseEnv, TAPGATE_DATA_DIR: dataDir, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  children.push(child)
  const output = collectOutput(child)
  const { code } = await output.exited
  return { code, stdout: output.stdout(), stderr: output.stderr() }
}

function serve(dataDir: string, extra: Record<string, string> = {}): Promise<Server> {
  return startServe({ cwd: dataDir, env: { ...baseEnv, TAPGATE_DATA_DIR: dataDir, PORT: '0', ...extra }, track: (child) => children.push(child) })
}

/** The browser half's sign-in: the fragment's token POSTed from the gateway's own page. */
async function signIn(link: string): Promise<{ status: number; cookie: string | null; body: any }> {
  const url = new URL(link)
  const res = await fetch(`${url.origin}/console/api/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: url.origin },
    body: JSON.stringify({ link: url.hash.slice(1) }),
  })
  return { status: res.status, cookie: /^tapgate_console=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')?.[1] ?? null, body: await res.json() }
}

const session = async (origin: string, cookie: string) => (await fetch(`${origin}/console/api/session`, { headers: { cookie: `tapgate_console=${cookie}` } })).status

describe('tapgate console-link', () => {
  test("prints one line, <base>/console/sign-in#<token>, that signs in once on the served gateway; --revoke-sessions signs it out", async () => {
    const dataDir = testDir('tapgate-console-')
    const team = await tapgate(dataDir, ['team', 'create', '--name', 'Venue'])
    expect(team, team.stderr).toMatchObject({ code: 0 })
    const server = await serve(dataDir, { TAPGATE_DEMO: 'false' })

    const made = await tapgate(dataDir, ['console-link', '--team', '1', '--base-url', `${server.url}/`])
    expect(made).toMatchObject({ code: 0, stderr: '' })
    const lines = made.stdout.trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(new RegExp(`^${server.url.replaceAll('.', '\\.')}/console/sign-in#tgc_[0-9a-f]{32}$`))

    const first = await signIn(lines[0]!)
    expect(first).toMatchObject({ status: 200, body: { success: true, team: { id: 1, name: 'Venue' } } })
    expect(await session(server.url, first.cookie!)).toBe(200)
    expect(await signIn(lines[0]!)).toMatchObject({ status: 401, body: { error: 'console_link_invalid' } })

    const revoked = await tapgate(dataDir, ['console-link', '--team', '1', '--revoke-sessions'])
    expect(revoked).toMatchObject({ code: 0, stderr: '' })
    expect(JSON.parse(revoked.stdout)).toEqual({ teamId: 1, revokedSessions: 1 })
    expect(await session(server.url, first.cookie!)).toBe(401)
  })

  test('the base: --base-url, else publicBaseUrl, else http://127.0.0.1:<port>; usage errors exit 2, an unknown team 1', async () => {
    const dataDir = testDir('tapgate-console-')
    expect((await tapgate(dataDir, ['team', 'create', '--name', 'Venue'])).code).toBe(0)
    expect((await tapgate(dataDir, ['console-link', '--team', '1'])).stdout).toMatch(/^http:\/\/127\.0\.0\.1:8787\/console\/sign-in#tgc_[0-9a-f]{32}\n$/)
    expect((await tapgate(dataDir, ['console-link', '--team', '1'], { PORT: '9000' })).stdout).toMatch(/^http:\/\/127\.0\.0\.1:9000\/console\/sign-in#/)
    expect((await tapgate(dataDir, ['console-link', '--team', '1'], { TAPGATE_PUBLIC_BASE_URL: 'https://gate.example.org/' })).stdout).toMatch(/^https:\/\/gate\.example\.org\/console\/sign-in#/)

    for (const args of [[], ['--team', 'one'], ['--team', '1', '--base-url', 'gate.example'], ['--team', '1', '--revoke-sessions', '--base-url', 'http://x'], ['--team', '1', 'extra']]) {
      const r = await tapgate(dataDir, ['console-link', ...args])
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2)
      expect(r.stdout).toBe('')
    }
    const unknown = await tapgate(dataDir, ['console-link', '--team', '99'])
    expect(unknown).toMatchObject({ code: 1, stdout: '' })
    expect(unknown.stderr).toContain('No team with id 99')

    const help = await tapgate(dataDir, ['--help'])
    expect(help.stdout).toMatch(/^ {2}console-link /m)
    expect((await tapgate(dataDir, ['console-link', '--help'])).stdout).toContain('--revoke-sessions')
  })

  test("the demo's first start leads its Try block with the demo team's console link, which signs in", async () => {
    const dataDir = testDir('tapgate-console-')
    const server = await serve(dataDir)
    await expect.poll(() => server.stdout(), { timeout: 10_000 }).toContain('API docs:')
    const out = server.stdout()
    const tryBlock = out.slice(out.indexOf('Try (API_KEY=<the key above>):')).split('\n')
    const match = /^ {2}Console \(sign in, one use, 1 hour\): (\S+)$/.exec(tryBlock[1]!)
    expect(match, out).not.toBeNull()
    expect(match![1]).toMatch(new RegExp(`^${server.url.replaceAll('.', '\\.')}/console/sign-in#tgc_[0-9a-f]{32}$`))
    // Shown once; the rest of the block as it was.
    expect(out.split('/console/sign-in#').length - 1).toBe(1)
    expect(tryBlock[2]).toBe(`  curl ${server.url}/health`)
    expect(await signIn(match![1]!)).toMatchObject({ status: 200, body: { team: { id: 1 } } })
  })
})
