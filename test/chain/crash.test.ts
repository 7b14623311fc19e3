// Issue 4 acceptance: 300 mint requests in flight, SIGKILL the gateway, restart:
// every request that got a 2xx is on chain exactly once, and the chain's blocks,
// receipts and owners survive. Real `tapgate serve` children, real anvil, loopback.
import type { ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import { type Address, createPublicClient, type Hex, http, parseAbiItem } from 'viem'
import { privateKeyToAddress } from 'viem/accounts'
import { afterAll, afterEach, describe, expect, test } from 'vitest'
import { guestbookAbi } from '../../contracts/artifacts/Guestbook.js'
import { makeTempDir } from '../helpers/gateway.js'
import { startServe, stopChild, type Server } from '../helpers/processes.js'

const MINTS = 300
const spawned: ChildProcess[] = []
const dirs: string[] = []

afterEach(async () => {
  for (const child of spawned.splice(0)) await stopChild(child)
})
afterAll(() => {
  // A failed test may leave an anvil orphaned by a SIGKILLed gateway: stop it by its recorded PID.
  for (const dir of dirs) {
    const pidFile = path.join(dir, 'chain/31337/anvil.pid')
    if (fs.existsSync(pidFile)) {
      try {
        process.kill((JSON.parse(fs.readFileSync(pidFile, 'utf8')) as { pid: number }).pid, 'SIGKILL')
      } catch {}
    }
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

const env = (dataDir: string): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  TAPGATE_DATA_DIR: dataDir,
  PORT: '0',
  TAPGATE_LOG_LEVEL: 'warn',
  // Every mint is a block: save rarely, so the crash loses blocks that only the outbox or the orphan still has.
  TAPGATE_CONFIG: writeConfig(dataDir),
})

function writeConfig(dataDir: string): string {
  const file = path.join(dataDir, 'config.json')
  fs.writeFileSync(file, JSON.stringify({ chain: { saveEveryBlocks: 1000, pollIntervalMs: 100 }, rateLimit: { max: 100_000 } }))
  return file
}

const serve = (dataDir: string): Promise<Server> => startServe({ cwd: dataDir, env: env(dataDir), track: (child) => spawned.push(child) })

const anvilOf = (dataDir: string) => JSON.parse(fs.readFileSync(path.join(dataDir, 'chain/31337/anvil.pid'), 'utf8')) as { pid: number; port: number }

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** Outbox rows that are not mined yet, read from the gateway's own database file. */
function openRows(dataDir: string): number {
  const db = new Database(path.join(dataDir, 'tapgate.sqlite'), { readonly: true, fileMustExist: true })
  try {
    return (db.prepare("SELECT count(*) AS n FROM chain_txs WHERE status <> 'mined'").get() as { n: number }).n
  } finally {
    db.close()
  }
}

/** Starts a gateway on a fresh data dir with the demo team and waits for its guestbook to be deployed. */
async function demoGateway() {
  const dataDir = makeTempDir('tapgate-crash-')
  dirs.push(dataDir)
  const server = await serve(dataDir)
  // The demo key is printed right after the listening line.
  const apiKey = await until('the demo API key', () => /^\s+(tg_[\w-]+)$/m.exec(server.stdout())?.[1])
  const api = (url: string, init: RequestInit = {}) =>
    fetch(`${server.url}${url}`, { ...init, headers: { 'content-type': 'application/json', 'x-service-api-key': apiKey, ...init.headers } })
  const guestbook = await until('the demo guestbook deploy', async () => {
    const [contract] = (await (await api('/events/contracts')).json()) as { address: Address | null; status: string }[]
    return contract?.status === 'confirmed' ? contract.address! : undefined
  }).catch((error: Error) => {
    throw new Error(`${error.message}\nstdout: ${server.stdout()}\nstderr: ${server.stderr()}`)
  })
  const [event] = (await (await api('/events')).json()) as { id: number }[]
  return { dataDir, server, apiKey, guestbook, eventId: event!.id }
}

type Victims = 'gateway' | 'gateway and anvil' | 'anvil'

/** 300 mints to distinct recipients, fired together; the victims are SIGKILLed once a third have answered. */
async function mintsThenKill(gateway: Awaited<ReturnType<typeof demoGateway>>, victims: Victims) {
  // Keys 1…300: distinct recipients (a padding digit that can also lead a number would repeat some).
  const recipients = Array.from({ length: MINTS }, (_, i) => privateKeyToAddress(`0x${(i + 1).toString(16).padStart(64, '0')}` as Hex))
  let answered = 0
  const accepted = new Map<Address, Hex>()
  const refused: string[] = []
  let killed: () => void
  const kill = new Promise<void>((resolve) => (killed = resolve))
  const requests = recipients.map(async (recipient) => {
    try {
      const res = await fetch(`${gateway.server.url}/events/mint`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-api-key': gateway.apiKey },
        body: JSON.stringify({ eventId: gateway.eventId, recipient }),
      })
      if (res.status === 200) accepted.set(recipient, ((await res.json()) as { txnHash: Hex }).txnHash)
      else refused.push(`${res.status}: ${await res.text()}`)
    } catch {
      // The connection died with the gateway: this request may or may not have been accepted.
    } finally {
      if (++answered === MINTS / 3) killed()
    }
  })
  await kill
  const anvil = anvilOf(gateway.dataDir)
  if (victims !== 'anvil') gateway.server.child.kill('SIGKILL')
  if (victims !== 'gateway') process.kill(anvil.pid, 'SIGKILL')
  await Promise.all(requests)
  // A gateway that answers at all answers 2xx: the outbox takes mints whether or not the chain is up.
  expect(new Set(recipients).size).toBe(MINTS)
  expect(refused).toEqual([])
  console.log(`crash test: ${accepted.size} of ${MINTS} mints answered 2xx (SIGKILL of the ${victims} after ${MINTS / 3})`)
  return { recipients, accepted }
}

async function checkExactlyOnce(dataDir: string, guestbook: Address, recipients: Address[], accepted: Map<Address, Hex>) {
  await until('the outbox to drain', () => (openRows(dataDir) === 0 ? true : undefined), 60_000)
  const client = createPublicClient({ transport: http(`http://127.0.0.1:${anvilOf(dataDir).port}`) })
  const balances = await Promise.all(
    recipients.map((r) => client.readContract({ address: guestbook, abi: guestbookAbi, functionName: 'balanceOf', args: [r, 1n] })),
  )
  const byRecipient = new Map(recipients.map((r, i) => [r, balances[i]!]))
  // Every 2xx is on chain exactly once; no request (answered or cut off) minted twice.
  for (const [recipient] of accepted) expect(byRecipient.get(recipient), recipient).toBe(1n)
  for (const balance of balances) expect(balance === 0n || balance === 1n).toBe(true)
  // The chain holds exactly the mints the outbox recorded, each once.
  const logs = await client.getLogs({
    address: guestbook,
    event: parseAbiItem('event TransferSingle(address indexed operator, address indexed from, address indexed to, uint256 id, uint256 value)'),
    fromBlock: 0n,
  })
  const db = new Database(path.join(dataDir, 'tapgate.sqlite'), { readonly: true })
  const minted = db.prepare("SELECT count(*) AS n FROM chain_txs WHERE kind = 'guestbook_mint' AND status = 'mined' AND reverted = 0").get() as { n: number }
  db.close()
  expect(logs.length).toBe(minted.n)
  expect(new Set(logs.map((l) => l.args.to)).size).toBe(logs.length)
  expect(logs.length).toBeGreaterThanOrEqual(accepted.size)
  return client
}

describe('crash safety', () => {
  test(`${MINTS} mints in flight, SIGKILL the gateway, restart: every 2xx on chain exactly once; history survives`, { timeout: 120_000 }, async () => {
    const gateway = await demoGateway()
    const before = createPublicClient({ transport: http(`http://127.0.0.1:${anvilOf(gateway.dataDir).port}`) })
    const deployBlock = await before.getBlock()
    const { recipients, accepted } = await mintsThenKill(gateway, 'gateway')
    expect(accepted.size).toBeGreaterThan(0)

    const restarted = await serve(gateway.dataDir)
    const client = await checkExactlyOnce(gateway.dataDir, gateway.guestbook, recipients, accepted)
    // Blocks from before the crash are the same blocks; receipts of accepted mints are there.
    expect((await client.getBlock({ blockNumber: deployBlock.number })).hash).toBe(deployBlock.hash)
    const someHash = [...accepted.values()][0]!
    expect((await client.getTransactionReceipt({ hash: someHash })).status).toBe('success')
    await stopChild(restarted.child)
  })

  test('the same with the anvil killed too (power loss): the outbox replays what the saved state lacks', { timeout: 120_000 }, async () => {
    const gateway = await demoGateway()
    const { recipients, accepted } = await mintsThenKill(gateway, 'gateway and anvil')
    const restarted = await serve(gateway.dataDir)
    await checkExactlyOnce(gateway.dataDir, gateway.guestbook, recipients, accepted)
    // Restarting once more from the saved state (SIGTERM saves) keeps everything.
    await stopChild(restarted.child)
    const again = await serve(gateway.dataDir)
    await checkExactlyOnce(gateway.dataDir, gateway.guestbook, recipients, accepted)
    await stopChild(again.child)
  })

  test('anvil killed under a running gateway: restarted on its port from the saved state, the outbox replays, every mint answered 2xx', { timeout: 120_000 }, async () => {
    const gateway = await demoGateway()
    const first = anvilOf(gateway.dataDir)
    const { recipients, accepted } = await mintsThenKill(gateway, 'anvil')
    expect(accepted.size).toBe(MINTS)
    const client = await checkExactlyOnce(gateway.dataDir, gateway.guestbook, recipients, accepted)
    const second = anvilOf(gateway.dataDir)
    expect(second.pid).not.toBe(first.pid)
    expect(second.port).toBe(first.port)
    // Nothing was saved yet (saveEveryBlocks 1000): every block came back from the outbox, the same signed
    // transactions (so the same hashes, each with its receipt) at their first timestamps, in blocks of their own.
    for (const hash of accepted.values()) expect((await client.getTransactionReceipt({ hash })).status).toBe('success')
    expect(gateway.server.stdout()).toContain('embedded chain (anvil) exited unexpectedly; restarting it')
    // The gateway never went away, and its health says the chain answers again.
    const health = (await (await fetch(`${gateway.server.url}/health`)).json()) as { chains: { chainId: number; reachable: boolean }[] }
    expect(health.chains.find((c) => c.chainId === 31337)).toMatchObject({ reachable: true })
    // The restarted anvil is the one a SIGTERM saves and stops.
    await stopChild(gateway.server.child)
    expect(() => process.kill(second.pid, 0)).toThrow()
  })
})
