import { type ChildProcess, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { gunzipSync } from 'node:zlib'
import { createPublicClient, http, parseAbiItem } from 'viem'
import { afterEach, describe, expect, it } from 'vitest'
import { startEmbeddedChain, type EmbeddedChain, type EmbeddedChainOptions } from '../../src/chain/embeddedChain.js'
import { exited, stopChild } from '../helpers/processes.js'
import { DEV_ADDRESS, EMIT_ON_DEPLOY, RECIPIENT, sendTransfer, sendTx } from './fixtures/transfers.js'

const fixture = fileURLToPath(new URL('./fixtures/gatewayChild.ts', import.meta.url))

const chains: EmbeddedChain[] = []
const children: ChildProcess[] = []
const strayPids: number[] = []
const dirs: string[] = []

afterEach(async () => {
  for (const chain of chains.splice(0)) await chain.stop().catch(() => {})
  for (const child of children.splice(0)) await stopChild(child)
  for (const pid of strayPids.splice(0)) if (isAlive(pid)) process.kill(pid, 'SIGKILL')
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tapgate-chain-'))
  dirs.push(dir)
  return dir
}

async function start(options: EmbeddedChainOptions): Promise<EmbeddedChain> {
  const chain = await startEmbeddedChain(options)
  chains.push(chain)
  return chain
}

/** Stops a chain started with start() and forgets it. */
async function stop(chain: EmbeddedChain): Promise<void> {
  await chain.stop()
  chains.splice(chains.indexOf(chain), 1)
}

/** Alive, and not a zombie (PID 1 here reaps killed orphans late). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2))
  } catch {
    return process.platform !== 'linux'
  }
}

function recordingLog() {
  const lines: { level: 'info' | 'warn'; obj: object; msg?: string }[] = []
  return {
    lines,
    info: (obj: object, msg?: string) => void lines.push({ level: 'info', obj, msg }),
    warn: (obj: object, msg?: string) => void lines.push({ level: 'warn', obj, msg }),
  }
}

const client = (chain: EmbeddedChain) => createPublicClient({ transport: http(chain.url) })
const chainDir = (dataDir: string, chainId = 31337) => path.join(dataDir, 'chain', String(chainId))
const mode = (file: string) => fs.statSync(file).mode & 0o777

/** Starts the fixture gateway in a child process; resolves with what it printed after `ready`. */
async function startChildGateway(dataDir: string, txs: number, saveAfter: number, exitMode?: 'exit') {
  const child = spawn(process.execPath, ['--import', 'tsx', fixture, dataDir, String(txs), String(saveAfter), ...(exitMode ? [exitMode] : [])], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.push(child)
  let stdout = ''
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const ready = await new Promise<{ pid: number; url: string; hashes: `0x${string}`[] }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`fixture not ready in 20 s\n${stderr}`)), 20_000)
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk
      const match = /^ready (.*)$/m.exec(stdout)
      if (match) {
        clearTimeout(timer)
        resolve(JSON.parse(match[1]!))
      }
    })
    child.once('exit', (code) => {
      if (!/^ready /m.test(stdout)) reject(new Error(`fixture exited (${code})\n${stderr}`))
    })
  })
  strayPids.push(ready.pid) // the anvil it started: killed in afterEach should a test fail before the rescue
  return { child, ...ready }
}

describe('embedded chain', () => {
  it('keeps blocks, receipts, logs, balances and nonces across a stop and a start', async () => {
    const dataDir = tempDir()
    const bootStarted = performance.now()
    const first = await start({ dataDir })
    const freshBootMs = performance.now() - bootStarted
    console.log(`boot, fresh data dir: ${freshBootMs.toFixed(0)} ms`)
    expect(first.restored).toBe(false)
    expect(first.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)

    const deploy = await sendTx(first.url, { nonce: 0, data: EMIT_ON_DEPLOY, gas: 100_000n })
    expect(deploy.status).toBe('0x1')
    const transfers = [await sendTransfer(first.url, 1), await sendTransfer(first.url, 2), await sendTransfer(first.url, 3)]
    const before = client(first)
    const blockNumber = await before.getBlockNumber()
    const latestBlock = await before.getBlock()
    const receipts = await Promise.all([deploy, ...transfers].map((r) => before.getTransactionReceipt({ hash: r.transactionHash })))
    const logs = await before.getLogs({ fromBlock: 0n })
    const balances = [await before.getBalance({ address: DEV_ADDRESS }), await before.getBalance({ address: RECIPIENT })]
    expect(blockNumber).toBe(4n)
    expect(logs).toHaveLength(1)
    expect(logs[0]!.topics).toEqual([`0x${'1'.padStart(64, '0')}`])
    await stop(first)
    expect(isAlive(first.pid)).toBe(false)
    expect(fs.existsSync(path.join(chainDir(dataDir), 'anvil.pid'))).toBe(false)

    const second = await start({ dataDir })
    expect(second.restored).toBe(true)
    const after = client(second)
    expect(await after.getBlockNumber()).toBe(blockNumber)
    expect(await after.getBlock()).toEqual(latestBlock)
    expect(await Promise.all(receipts.map((r) => after.getTransactionReceipt({ hash: r.transactionHash })))).toEqual(receipts)
    expect(await after.getLogs({ fromBlock: 0n })).toEqual(logs)
    expect(await after.getLogs({ event: parseAbiItem('event Anything()'), fromBlock: 0n })).toEqual([]) // a filter still filters
    expect([await after.getBalance({ address: DEV_ADDRESS }), await after.getBalance({ address: RECIPIENT })]).toEqual(balances)
    expect(await after.getTransactionCount({ address: DEV_ADDRESS })).toBe(4)

    const next = await sendTransfer(second.url, 4)
    expect(next.status).toBe('0x1')
    expect(BigInt(next.blockNumber)).toBe(blockNumber + 1n)
    // The clock resumes where it stopped: no block is stamped before the loaded ones.
    expect((await after.getBlock()).timestamp).toBeGreaterThanOrEqual(latestBlock.timestamp)
  })

  it('saves atomically with mode 0600 and removes a .tmp left by an interrupted save', async () => {
    const dataDir = tempDir()
    const chain = await start({ dataDir })
    await sendTransfer(chain.url, 0)
    await Promise.all([chain.saveState(), chain.saveState(), chain.saveState()]) // serialized, all resolve
    const dir = chainDir(dataDir)
    expect(fs.readdirSync(dir).sort()).toEqual(['anvil.pid', 'owner.lock', 'state.bin'])
    expect(mode(dir)).toBe(0o700)
    expect(mode(path.join(dir, 'state.bin'))).toBe(0o600)
    expect(mode(path.join(dir, 'anvil.pid'))).toBe(0o600)
    // state.bin is anvil_dumpState hex-decoded: a gzip of anvil's JSON dump.
    const dump = JSON.parse(gunzipSync(fs.readFileSync(path.join(dir, 'state.bin'))).toString()) as { best_block_number: number | string }
    expect(Number(dump.best_block_number)).toBe(1)
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'anvil.pid'), 'utf8'))).toMatchObject({ pid: chain.pid, port: Number(new URL(chain.url).port) })
    await stop(chain)

    fs.writeFileSync(path.join(dir, 'state.bin.tmp'), 'half a dump')
    const log = recordingLog()
    const again = await start({ dataDir, log })
    expect(fs.existsSync(path.join(dir, 'state.bin.tmp'))).toBe(false)
    expect(again.restored).toBe(true)
    expect(await client(again).getBlockNumber()).toBe(1n)
    expect(log.lines.some((l) => l.msg?.includes('interrupted write'))).toBe(true)
  })

  it('boots a fresh chain from a corrupt state file, keeping the file as *.corrupt', async () => {
    const dataDir = tempDir()
    const chain = await start({ dataDir })
    await sendTransfer(chain.url, 0)
    await stop(chain)
    const statePath = path.join(chainDir(dataDir), 'state.bin')
    const truncated = fs.readFileSync(statePath).subarray(0, 300)
    fs.writeFileSync(statePath, truncated)

    const log = recordingLog()
    const fresh = await start({ dataDir, log })
    expect(fresh.restored).toBe(false)
    expect(await client(fresh).getBlockNumber()).toBe(0n)
    const kept = fs.readdirSync(chainDir(dataDir)).filter((name) => name.endsWith('.corrupt'))
    expect(kept).toHaveLength(1)
    expect(kept[0]).toMatch(/^state\.\d{4}-\d\d-\d\dT[\d-]+Z\.corrupt$/)
    expect(fs.readFileSync(path.join(chainDir(dataDir), kept[0]!))).toEqual(truncated)
    expect(fs.existsSync(statePath)).toBe(false)
    expect(log.lines.filter((l) => l.level === 'warn').map((l) => l.msg)).toEqual(['embedded chain state unloadable; starting a fresh chain'])
    expect((await sendTransfer(fresh.url, 0)).status).toBe('0x1')

    // an empty file is corrupt too
    await stop(fresh)
    fs.writeFileSync(statePath, '')
    const again = await start({ dataDir })
    expect(again.restored).toBe(false)
    expect(fs.readdirSync(chainDir(dataDir)).filter((name) => name.endsWith('.corrupt'))).toHaveLength(2)
  })

  it('rescues the unsaved state of an anvil orphaned by a SIGKILLed gateway, then kills it', async () => {
    const dataDir = tempDir()
    const gateway = await startChildGateway(dataDir, 6, 2) // saved after 2 transfers, 4 more unsaved
    gateway.child.kill('SIGKILL')
    expect(await exited(gateway.child, 5_000)).toBe(true)
    expect(isAlive(gateway.pid)).toBe(true) // the orphan, holding blocks 3..6 in memory only
    const saved = JSON.parse(gunzipSync(fs.readFileSync(path.join(chainDir(dataDir), 'state.bin'))).toString()) as { best_block_number: number }
    expect(Number(saved.best_block_number)).toBe(2)

    const log = recordingLog()
    const started = performance.now()
    const chain = await start({ dataDir, log })
    console.log(`boot with orphan rescue (6 blocks): ${(performance.now() - started).toFixed(0)} ms`)
    expect(isAlive(gateway.pid)).toBe(false)
    expect(chain.pid).not.toBe(gateway.pid)
    expect(chain.restored).toBe(true)
    const reader = client(chain)
    expect(await reader.getBlockNumber()).toBe(6n)
    for (const hash of gateway.hashes) expect((await reader.getTransactionReceipt({ hash })).status).toBe('success')
    expect(await reader.getTransactionCount({ address: DEV_ADDRESS })).toBe(6)
    expect(log.lines.some((l) => l.msg === 'rescued the state of an orphaned anvil')).toBe(true)
    expect((await sendTransfer(chain.url, 6)).status).toBe('0x1')
  })

  it.runIf(process.platform === 'linux')('kills a wedged orphan that holds the recorded port, and loads the last save', async () => {
    const dataDir = tempDir()
    const gateway = await startChildGateway(dataDir, 3, 1)
    gateway.child.kill('SIGKILL')
    expect(await exited(gateway.child, 5_000)).toBe(true)
    process.kill(gateway.pid, 'SIGSTOP') // alive, holds its port, answers nothing

    const log = recordingLog()
    const chain = await start({ dataDir, log })
    expect(isAlive(gateway.pid)).toBe(false)
    expect(chain.restored).toBe(true)
    expect(await client(chain).getBlockNumber()).toBe(1n)
    expect(log.lines.filter((l) => l.level === 'warn').map((l) => l.msg)).toEqual([
      'orphaned anvil does not answer; killing it, state since the last save is lost',
    ])
  })

  it('never kills a live process that is not anvil, nor a running gateway’s anvil', async () => {
    const dataDir = tempDir()
    const dir = chainDir(dataDir)
    fs.mkdirSync(dir, { recursive: true })
    const sleeper = spawn('sleep', ['60'], { stdio: 'ignore' })
    children.push(sleeper)
    for (const pid of [sleeper.pid!, process.pid]) {
      fs.writeFileSync(path.join(dir, 'anvil.pid'), JSON.stringify({ pid, port: 1, startedAt: new Date().toISOString() }))
      const chain = await start({ dataDir })
      expect(isAlive(pid)).toBe(true)
      expect(JSON.parse(fs.readFileSync(path.join(dir, 'anvil.pid'), 'utf8')).pid).toBe(chain.pid)
      await stop(chain)
    }

    // A second start on a data dir whose chain belongs to a live gateway (this process) uses that chain.
    const running = await start({ dataDir })
    const second = await startEmbeddedChain({ dataDir })
    expect(second).toMatchObject({ owner: false, url: running.url, pid: running.pid })
    await second.stop()
    expect(isAlive(running.pid)).toBe(true)
    expect((await sendTransfer(running.url, 0)).status).toBe('0x1')

    // A pid file naming a dead process is just stale.
    await stop(running)
    fs.writeFileSync(path.join(dir, 'anvil.pid'), JSON.stringify({ pid: 2 ** 22 + 1, port: 1, startedAt: '' }))
    expect((await start({ dataDir })).restored).toBe(true)
  })

  it('two gateways starting together on one data dir: one runs the chain, the other uses it', async () => {
    const dataDir = tempDir()
    const both = await Promise.all([startEmbeddedChain({ dataDir }), startEmbeddedChain({ dataDir })])
    const owners = both.filter((c) => c.owner)
    expect(owners).toHaveLength(1)
    chains.push(owners[0]!)
    expect(both[0]!.url).toBe(both[1]!.url)
    expect((await sendTransfer(both.find((c) => !c.owner)!.url, 0)).status).toBe('0x1')
  })

  it('anvil killed under a running chain: restarted on its port with the last saved state, through onRestart; stop() then stops the new one', async () => {
    const log = recordingLog()
    const chain = await start({ dataDir: tempDir(), log })
    await sendTransfer(chain.url, 0)
    await chain.saveState()
    const saved = await client(chain).getBlock()
    await sendTransfer(chain.url, 1) // mined after the save: lost with the process
    const firstPid = chain.pid
    let recoveries = 0
    const restarted = new Promise<void>((resolve) =>
      chain.onRestart(async (respawn) => {
        recoveries++
        await respawn()
        resolve()
      }),
    )
    process.kill(firstPid, 'SIGKILL')
    await restarted
    expect(chain.pid).not.toBe(firstPid)
    expect(isAlive(chain.pid)).toBe(true)
    // Same URL, so every client keeps working; the chain is the saved one.
    expect(await client(chain).getBlock()).toEqual(saved)
    expect(recoveries).toBe(1)
    expect(log.lines.map((l) => l.msg)).toContain('embedded chain (anvil) exited unexpectedly; restarting it')
    const newPid = chain.pid
    await stop(chain)
    expect(isAlive(newPid)).toBe(false)
  })

  it('a recovery that fails after its respawn is retried: the half-done anvil is stopped first, one anvil runs', async () => {
    const log = recordingLog()
    const chain = await start({ dataDir: tempDir(), log })
    const pids: number[] = []
    const done = new Promise<void>((resolve) =>
      chain.onRestart(async (respawn) => {
        await respawn()
        pids.push(chain.pid)
        if (pids.length === 1) throw new Error('the outbox replay failed')
        resolve()
      }),
    )
    process.kill(chain.pid, 'SIGKILL')
    await done
    expect(pids).toHaveLength(2)
    expect(isAlive(pids[0]!)).toBe(false)
    expect(isAlive(pids[1]!)).toBe(true)
    expect(await client(chain).getBlockNumber()).toBe(0n)
    // Stopping the half-done one was no crash: one restart loop, two attempts.
    expect(log.lines.filter((l) => l.msg === 'embedded chain (anvil) exited unexpectedly; restarting it')).toHaveLength(1)
  })

  it('a restart that fails is retried with backoff; stop() during the backoff ends it without an anvil left', async () => {
    const log = recordingLog()
    const chain = await start({ dataDir: tempDir(), log })
    let attempts = 0
    const failedOnce = new Promise<void>((resolve) =>
      chain.onRestart(async () => {
        attempts++
        resolve()
        throw new Error('the RPC port is taken')
      }),
    )
    process.kill(chain.pid, 'SIGKILL')
    await failedOnce
    await expect.poll(() => log.lines.some((l) => l.msg === 'embedded chain restart failed')).toBe(true)
    const dead = chain.pid
    await stop(chain)
    expect(log.lines.map((l) => l.msg)).toContain('embedded chain stopped while anvil was down; the next start replays the outbox')
    expect(attempts).toBe(1)
    expect(isAlive(dead)).toBe(false)
  })

  it('kills anvil when the gateway exits without stop()', async () => {
    const dataDir = tempDir()
    const gateway = await startChildGateway(dataDir, 1, 1, 'exit')
    expect(await exited(gateway.child, 5_000)).toBe(true)
    expect(gateway.child.exitCode).toBe(0)
    expect(isAlive(gateway.pid)).toBe(false)
    expect(fs.existsSync(path.join(chainDir(dataDir), 'anvil.pid'))).toBe(false)
  })

  it('noteMined saves in the background once saveEveryBlocks blocks accumulated', async () => {
    const dataDir = tempDir()
    const log = recordingLog()
    const chain = await start({ dataDir, saveEveryBlocks: 3, log })
    const statePath = path.join(chainDir(dataDir), 'state.bin')
    const savedBlock = () => Number((JSON.parse(gunzipSync(fs.readFileSync(statePath)).toString()) as { best_block_number: number }).best_block_number)
    for (let nonce = 0; nonce < 2; nonce++) {
      await sendTransfer(chain.url, nonce)
      chain.noteMined()
    }
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(fs.existsSync(statePath)).toBe(false)
    await sendTransfer(chain.url, 2)
    chain.noteMined()
    await expect.poll(() => fs.existsSync(statePath) && savedBlock(), { timeout: 5_000 }).toBe(3)

    await sendTransfer(chain.url, 3)
    await sendTransfer(chain.url, 4)
    chain.noteMined(2)
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(savedBlock()).toBe(3)
    await sendTransfer(chain.url, 5)
    chain.noteMined()
    await expect.poll(savedBlock, { timeout: 5_000 }).toBe(6)
    expect(log.lines.filter((l) => l.msg === 'embedded chain state saved')).toHaveLength(2)
    expect(fs.readdirSync(chainDir(dataDir)).filter((name) => name.endsWith('.tmp'))).toEqual([])
  })

  it('restarts with 3,000 transactions of history (timings printed)', { timeout: 60_000 }, async () => {
    const dataDir = tempDir()
    const chain = await start({ dataDir })
    const count = 3_000
    let started = performance.now()
    for (let nonce = 0; nonce < count; nonce++) await sendTransfer(chain.url, nonce)
    const sendMs = performance.now() - started
    const firstHash = (await client(chain).getBlock({ blockNumber: 1n })).transactions[0]!

    started = performance.now()
    await chain.saveState()
    const saveMs = performance.now() - started
    const bytes = fs.statSync(path.join(chainDir(dataDir), 'state.bin')).size
    started = performance.now()
    await stop(chain)
    const stopMs = performance.now() - started
    started = performance.now()
    const again = await start({ dataDir })
    const bootMs = performance.now() - started

    console.log(
      `${count} txs: sent in ${(sendMs / 1000).toFixed(1)} s (${Math.round(count / (sendMs / 1000))} tx/s); ` +
        `saveState ${saveMs.toFixed(0)} ms, state.bin ${(bytes / 1024 / 1024).toFixed(2)} MiB; ` +
        `stop (incl. final save) ${stopMs.toFixed(0)} ms; boot with load ${bootMs.toFixed(0)} ms`,
    )
    expect(again.restored).toBe(true)
    const reader = client(again)
    expect(await reader.getBlockNumber()).toBe(BigInt(count))
    expect((await reader.getTransactionReceipt({ hash: firstHash })).blockNumber).toBe(1n)
    expect(await reader.getTransactionCount({ address: DEV_ADDRESS })).toBe(count)
  })
})
