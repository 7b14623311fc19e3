import { readdirSync, readFileSync, readlinkSync, unlinkSync } from 'node:fs'
import { mkdir, open, readFile, readdir, rename, rm } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { writeFileAtomic } from '../writeFileAtomic.js'
import { anvilBinaryPath, spawnAnvil, type AnvilProcess } from './spawnAnvil.js'

/*
 * The gateway's embedded EVM: one anvil child whose state lives in
 * `${dataDir}/chain/<chainId>/state.bin` (anvil_dumpState, hex-decoded: a gzip
 * of anvil's JSON dump). Written atomically (tmp, fsync, rename, fsync dir);
 * never anvil's own --state, which writes in place. A gateway killed with
 * SIGKILL leaves anvil running with state newer than the file: the next boot
 * finds it through `anvil.pid`, dumps it, and only then kills it.
 * See docs/embedded-chain.md.
 */

type Log = { info(obj: object, msg?: string): void; warn(obj: object, msg?: string): void }

export type EmbeddedChainOptions = {
  dataDir: string // state lives in `${dataDir}/chain/<chainId>/`
  chainId?: number // default 31337
  /** Save after this many new blocks (checked by noteMined). default 100 */
  saveEveryBlocks?: number
  log?: Log // pino-compatible subset; default no-op
}

export type EmbeddedChain = {
  /** false: another gateway on this data dir runs the chain and this one only uses it (saves and stops are its job). */
  owner: boolean
  chainId: number
  url: string // http://127.0.0.1:<port>
  pid: number
  /** true when a state file (or a rescued orphan's state) was loaded at boot */
  restored: boolean
  /** Dump anvil's state and write it atomically (temp file in the same dir, fsync, rename, fsync dir). Calls are serialized; a call during a save waits for it and then saves again. */
  saveState(): Promise<void>
  /** Tell the chain that blocks were mined; saves (in the background, errors logged not thrown) once saveEveryBlocks new blocks have accumulated since the last save. */
  noteMined(blocks?: number): void
  /**
   * How a restart after anvil died runs. anvil is started again on its port
   * (so the URL stays), with the last saved state; `recover` wraps that
   * `respawn` with what must not run meanwhile and what must follow (the
   * server: the relayer holds the chain, then the outbox replays what the saved
   * state lacks). Default: respawn alone. A failed recovery is retried with
   * backoff until it works or the chain is stopped.
   */
  onRestart(recover: (respawn: () => Promise<void>) => Promise<void>): void
  /** Save, then stop anvil (SIGTERM, SIGKILL after 3 s) and remove the pid file. Idempotent. */
  stop(): Promise<void>
}

export class EmbeddedChainError extends Error {
  override name = 'EmbeddedChainError'
}

/** anvil answered with a JSON-RPC error (as opposed to not answering at all). */
export class RpcError extends Error {
  override name = 'RpcError'
  constructor(message: string, readonly code: number | undefined) {
    super(message)
  }
}

export const STATE_FILE = 'state.bin'
export const PID_FILE = 'anvil.pid'
export const LOCK_FILE = 'owner.lock'
const noLog: Log = { info() {}, warn() {} }
const probeTimeoutMs = 2_000 // is the orphan alive and ours?
const rescueDumpTimeoutMs = 15_000 // it answered the probe; a big state takes a while to dump
const dumpTimeoutMs = 60_000
const loadTimeoutMs = 60_000

/** Minimal JSON-RPC over fetch (no viem: its root import costs ~700 ms of start-up). */
export async function rpc<T = unknown>(url: string, method: string, params: unknown[] = [], { timeoutMs = 10_000 } = {}): Promise<T> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(timeoutMs),
  })
  const body = (await response.json()) as { result?: T; error?: { code?: number; message?: string } }
  if (body.error) throw new RpcError(`${method}: ${body.error.message ?? 'error'}`, body.error.code)
  return body.result as T
}

export async function startEmbeddedChain(options: EmbeddedChainOptions): Promise<EmbeddedChain> {
  const chainId = options.chainId ?? 31337
  const saveEveryBlocks = options.saveEveryBlocks ?? 100
  const log = options.log ?? noLog
  const dir = join(options.dataDir, 'chain', String(chainId))
  const statePath = join(dir, STATE_FILE)
  const pidPath = join(dir, PID_FILE)

  await mkdir(dir, { recursive: true, mode: 0o700 })
  const lockPath = join(dir, LOCK_FILE)
  if (!(await acquireOwnerLock(lockPath, log))) return attachToOwner({ pidPath, chainId, log })
  const releaseLock = () => {
    try {
      unlinkSync(lockPath)
    } catch {}
  }
  try {
    return await startOwned({ chainId, saveEveryBlocks, log, dir, statePath, pidPath, releaseLock })
  } catch (error) {
    releaseLock()
    throw error
  }
}

async function startOwned(args: {
  chainId: number
  saveEveryBlocks: number
  log: Log
  dir: string
  statePath: string
  pidPath: string
  releaseLock: () => void
}): Promise<EmbeddedChain> {
  const { chainId, saveEveryBlocks, log, dir, statePath, pidPath, releaseLock } = args
  await removeLeftoverTmpFiles(dir, log)
  const rescued = await rescueOrphan({ dir, pidPath, statePath, chainId, log })

  let anvil = await spawnAndRecord(chainId, pidPath)
  let restored = false
  try {
    ;({ anvil, restored } = await loadSavedState(anvil, { chainId, dir, statePath, pidPath, log, rescued }))
  } catch (error) {
    await anvil.stop()
    await rm(pidPath, { force: true })
    throw error
  }

  let closed = false
  const exitHook = () => {
    anvil.child.kill('SIGKILL')
    try {
      unlinkSync(pidPath)
    } catch {}
    releaseLock()
  }
  process.once('exit', exitHook)

  // ---- Restart after anvil died (crash, OOM kill, someone's kill -9) ----
  let recover = (respawn: () => Promise<void>) => respawn()
  let restarting: Promise<void> | undefined
  let wakeFromBackoff = () => {}
  /** Stopped on purpose: its exit is not a crash. */
  const retired = new WeakSet<AnvilProcess>()
  const respawn = async () => {
    // A former attempt's anvil whose recovery failed after it started still holds the port.
    if (anvil.child.exitCode === null && anvil.child.signalCode === null) {
      retired.add(anvil)
      await anvil.stop()
    }
    const fresh = await spawnAndRecord(chainId, pidPath, anvil.port)
    let loaded: { anvil: AnvilProcess; restored: boolean }
    try {
      loaded = await loadSavedState(fresh, { chainId, dir, statePath, pidPath, log, rescued: false })
    } catch (error) {
      await fresh.stop()
      throw error
    }
    anvil = loaded.anvil
    blocksSinceSave = 0
    watch(anvil)
  }
  const watch = (proc: AnvilProcess) =>
    proc.child.once('exit', (code, signal) => {
      if (closed || proc !== anvil || retired.has(proc)) return
      log.warn({ chainId, pid: proc.pid, code, signal, port: proc.port }, 'embedded chain (anvil) exited unexpectedly; restarting it')
      restarting = (async () => {
        for (let attempt = 1; !closed; attempt++) {
          try {
            await recover(respawn)
            log.info({ chainId, pid: anvil.pid, attempt }, 'embedded chain restarted')
            return
          } catch (error) {
            const waitMs = Math.min(30_000, 500 * 2 ** attempt)
            log.warn({ chainId, attempt, err: (error as Error).message, retryInMs: waitMs }, 'embedded chain restart failed')
            await new Promise<void>((resolve) => {
              const timer = setTimeout(resolve, waitMs)
              wakeFromBackoff = () => (clearTimeout(timer), resolve())
            })
          }
        }
      })().finally(() => (restarting = undefined))
    })
  watch(anvil)

  let blocksSinceSave = 0
  let running: Promise<void> | undefined
  let queued: Promise<void> | undefined

  const doSave = async () => {
    blocksSinceSave = 0 // before the dump: blocks noted from here on may be missing from it
    const started = performance.now()
    const bytes = dumpBytes(await rpc(anvil.url, 'anvil_dumpState', [], { timeoutMs: dumpTimeoutMs }))
    await writeFileAtomic(statePath, bytes)
    log.info({ chainId, bytes: bytes.length, ms: Math.round(performance.now() - started) }, 'embedded chain state saved')
  }
  const runSave = (): Promise<void> => {
    const p = doSave()
    running = p
    const clear = () => {
      if (running === p) running = undefined
    }
    p.then(clear, clear)
    return p
  }
  // Serialized; callers arriving during a save share one follow-up save.
  const save = (): Promise<void> => {
    if (queued) return queued
    if (!running) return runSave()
    queued = running.catch(() => {}).then(() => {
      queued = undefined
      return runSave()
    })
    return queued
  }

  let stopping: Promise<void> | undefined
  return {
    owner: true,
    chainId,
    url: anvil.url,
    get pid() {
      return anvil.pid
    },
    restored,
    onRestart(handler) {
      recover = handler
    },
    saveState: () => (closed ? Promise.reject(new EmbeddedChainError('embedded chain is stopped')) : save()),
    noteMined(blocks = 1) {
      if (closed || !(blocks > 0)) return
      blocksSinceSave += blocks
      if (blocksSinceSave < saveEveryBlocks || queued) return
      save().catch((error: Error) => log.warn({ chainId, err: error.message }, 'embedded chain background save failed'))
    },
    stop: () =>
      (stopping ??= (async () => {
        closed = true
        wakeFromBackoff()
        await restarting
        let saveError: unknown
        const down = anvil.child.exitCode !== null || anvil.child.signalCode !== null
        // anvil died and its restart had not worked: nothing to save, and the outbox holds what the saved state lacks.
        if (down) log.warn({ chainId }, 'embedded chain stopped while anvil was down; the next start replays the outbox')
        else {
          try {
            await save()
          } catch (error) {
            saveError = error
            log.warn({ chainId, err: (error as Error).message }, 'embedded chain final save failed; state since the last save is lost')
          }
        }
        process.off('exit', exitHook)
        await anvil.stop()
        await rm(pidPath, { force: true })
        releaseLock()
        if (saveError) throw saveError
      })()),
  }
}

/** anvil_dumpState's answer as the bytes of state.bin; refuses anything but non-empty even-length hex, so a bad answer never replaces a good file. */
function dumpBytes(result: unknown): Buffer {
  // Buffer.from stops at the first pair that is not hex: a short result is a bad answer.
  const bytes = typeof result === 'string' && result.startsWith('0x') ? Buffer.from(result.slice(2), 'hex') : Buffer.alloc(0)
  if (bytes.length === 0 || bytes.length * 2 !== (result as string).length - 2) throw new EmbeddedChainError('anvil_dumpState did not return hex bytes')
  return bytes
}

/**
 * One gateway per data dir runs the chain. The lock file (created with O_EXCL)
 * names its process; a lock whose process is gone is stale and taken over.
 * Two gateways starting together cannot both win, unlike a check of the pid file.
 */
async function acquireOwnerLock(lockPath: string, log: Log): Promise<boolean> {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const file = await open(lockPath, 'wx', 0o600)
      await file.writeFile(`${process.pid}\n`)
      await file.close()
      return true
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
    const holder = Number((await readFile(lockPath, 'utf8').catch(() => '')).trim())
    if (Number.isSafeInteger(holder) && holder > 0 && isAlive(holder)) return false
    // Empty (a holder between create and write) gets a moment; a dead holder's lock is removed.
    if (!holder) await sleep(50)
    else {
      log.info({ file: lockPath, holder }, 'stale embedded chain lock removed')
      await rm(lockPath, { force: true })
    }
  }
  throw new EmbeddedChainError(`could not take the embedded chain lock ${lockPath}`)
}

/** Uses the chain another gateway runs on this data dir: its URL is in the pid file once its anvil listens. */
async function attachToOwner(args: { pidPath: string; chainId: number; log: Log }): Promise<EmbeddedChain> {
  const deadline = Date.now() + 15_000
  while (Date.now() < deadline) {
    const record = await readFile(args.pidPath, 'utf8').then((text) => JSON.parse(text) as PidFile, () => undefined)
    if (record && Number.isSafeInteger(record.port)) {
      const url = `http://127.0.0.1:${record.port}`
      const answers = await rpc<string>(url, 'eth_chainId', [], { timeoutMs: probeTimeoutMs }).then((id) => Number(id) === args.chainId, () => false)
      if (answers) {
        args.log.info({ chainId: args.chainId, url, ownerPid: record.gatewayPid }, 'using the embedded chain of another gateway on this data dir')
        const nothing = async () => {}
        // Its owner restarts its anvil; a restarted one listens on the same port.
        return { owner: false, chainId: args.chainId, url, pid: record.pid, restored: false, saveState: nothing, noteMined: () => {}, onRestart: () => {}, stop: nothing }
      }
    }
    await sleep(100)
  }
  throw new EmbeddedChainError('another gateway holds the embedded chain lock, but its chain never answered')
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

type PidFile = { pid: number; port: number; startedAt: string; gatewayPid?: number }

/**
 * Loads state.bin (if any) into a freshly spawned anvil and sets its clock to
 * the last block's. A file anvil cannot decode is kept aside as *.corrupt and a
 * fresh anvil (on the same port) replaces the one that may hold half of it.
 */
async function loadSavedState(
  anvil: AnvilProcess,
  ctx: { chainId: number; dir: string; statePath: string; pidPath: string; log: Log; rescued: boolean },
): Promise<{ anvil: AnvilProcess; restored: boolean }> {
  const { chainId, dir, statePath, pidPath, log } = ctx
  const state = await readFile(statePath).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined
    throw error
  })
  if (!state) return { anvil, restored: false }
  let unloadable: string | undefined
  if (state.length === 0) unloadable = 'state file is empty'
  else {
    try {
      await rpc(anvil.url, 'anvil_loadState', [`0x${state.toString('hex')}`], { timeoutMs: loadTimeoutMs })
    } catch (error) {
      // -32602 is anvil failing to decode the dump. Anything else (no answer, a
      // refused request) says nothing about the file: keep it and fail.
      if (!(error instanceof RpcError) || error.code !== -32602) throw error
      unloadable = error.message
    }
  }
  if (unloadable) {
    // Kept, not deleted: it may be repairable, and it is the only copy of the history.
    const corruptPath = join(dir, `state.${new Date().toISOString().replace(/[:.]/g, '-')}.corrupt`)
    await rename(statePath, corruptPath)
    log.warn({ chainId, err: unloadable, movedTo: corruptPath }, 'embedded chain state unloadable; starting a fresh chain')
    // A fresh process, in case the failed load left part of the dump applied.
    await anvil.stop()
    return { anvil: await spawnAndRecord(chainId, pidPath, anvil.port), restored: false }
  }
  // anvil_loadState restores blocks but not the clock: without this the next
  // block would be stamped genesis + uptime, earlier than the loaded ones.
  const latest = await rpc<{ number: string; timestamp: string }>(anvil.url, 'eth_getBlockByNumber', ['latest', false])
  await rpc(anvil.url, 'evm_setTime', [Number(latest.timestamp)])
  log.info({ chainId, blocks: Number(latest.number), bytes: state.length, rescued: ctx.rescued }, 'embedded chain state loaded')
  return { anvil, restored: true }
}

async function spawnAndRecord(chainId: number, pidPath: string, port?: number): Promise<AnvilProcess> {
  // anvil refuses request bodies over 2 MB by default; anvil_loadState of a
  // 3,000-transaction history is already 2.6 MB of hex.
  const anvil = await spawnAnvil({ chainId, port, args: ['--no-request-size-limit'], detached: true })
  try {
    const record: PidFile = { pid: anvil.pid, port: anvil.port, startedAt: new Date().toISOString(), gatewayPid: process.pid }
    await writeFileAtomic(pidPath, Buffer.from(`${JSON.stringify(record)}\n`))
  } catch (error) {
    await anvil.stop()
    throw error
  }
  return anvil
}

/** A `.tmp` is a write that never reached its rename: the real file beside it is intact. */
async function removeLeftoverTmpFiles(dir: string, log: Log): Promise<void> {
  for (const name of await readdir(dir)) {
    if (!name.endsWith('.tmp')) continue
    await rm(join(dir, name), { force: true })
    log.info({ file: join(dir, name) }, 'removed a file left over from an interrupted write')
  }
}

/**
 * A gateway killed with SIGKILL leaves its anvil running, with state newer than
 * the last save. Dump it into the state file, then kill it. Never kills a
 * process that is not provably our anvil. Returns true when a state was rescued.
 */
async function rescueOrphan(args: { dir: string; pidPath: string; statePath: string; chainId: number; log: Log }): Promise<boolean> {
  const { pidPath, statePath, chainId, log } = args
  let record: PidFile
  try {
    const parsed = JSON.parse(await readFile(pidPath, 'utf8')) as Partial<PidFile>
    if (!Number.isSafeInteger(parsed.pid) || !Number.isSafeInteger(parsed.port) || (parsed.pid ?? 0) <= 0) throw new Error('malformed')
    record = parsed as PidFile
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      log.warn({ file: pidPath }, 'unreadable pid file ignored')
      await rm(pidPath, { force: true })
    }
    return false
  }

  const { pid, port } = record
  const stale = async (why: string) => {
    log.info({ pid, why }, 'stale anvil pid file removed')
    await rm(pidPath, { force: true })
    return false
  }
  if (!isAlive(pid)) return stale('process gone')
  const linux = process.platform === 'linux'
  if (linux && !isAnvilCommand(pid)) return stale('pid now belongs to another program; left alone')

  // A live anvil whose parent is the gateway that wrote the pid file is not an orphan.
  if (linux && record.gatewayPid !== undefined && parentPid(pid) === record.gatewayPid && isAlive(record.gatewayPid)) {
    throw new EmbeddedChainError(`${args.dir} is in use: its anvil (pid ${pid}) belongs to running process ${record.gatewayPid}`)
  }

  const url = `http://127.0.0.1:${port}`
  const answers = await rpc<string>(url, 'eth_chainId', [], { timeoutMs: probeTimeoutMs }).then(
    (id) => Number(id) === chainId,
    () => false,
  )
  const owns = linux ? listensOn(pid, port) : undefined
  // Ours: anvil at that pid (Linux) answering with our chain id on the recorded
  // port, which (Linux) that very pid holds. A wedged one counts when the pid provably holds the port.
  const ours = owns === false ? false : answers || owns === true
  if (!ours) return stale(answers ? 'recorded port belongs to another process; left alone' : 'not our anvil; left alone')

  let rescued = false
  if (answers) {
    const started = performance.now()
    let bytes: Buffer | undefined
    try {
      bytes = dumpBytes(await rpc(url, 'anvil_dumpState', [], { timeoutMs: rescueDumpTimeoutMs }))
    } catch (error) {
      log.warn({ pid, err: (error as Error).message }, 'orphaned anvil did not dump its state; state since the last save is lost')
    }
    // A write failure throws before the kill: the orphan keeps its state for the next try.
    if (bytes) {
      await writeFileAtomic(statePath, bytes)
      rescued = true
      log.info({ pid, bytes: bytes.length, ms: Math.round(performance.now() - started) }, 'rescued the state of an orphaned anvil')
    }
  } else {
    log.warn({ pid }, 'orphaned anvil does not answer; killing it, state since the last save is lost')
  }

  process.kill(pid, 'SIGKILL')
  const deadline = Date.now() + 2_000
  while (isAlive(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
  if (isAlive(pid)) log.warn({ pid }, 'orphaned anvil still alive 2 s after SIGKILL')
  await rm(pidPath, { force: true })
  return rescued
}

/** Alive and signalable by us. A zombie (killed, not yet reaped by init) is dead. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
  const state = procStat(pid)?.[0]
  return state !== 'Z' && state !== 'X'
}

/** Fields of /proc/<pid>/stat after `(comm)`: [state, ppid, …]; undefined off Linux or when gone. */
function procStat(pid: number): string[] | undefined {
  if (process.platform !== 'linux') return undefined
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  } catch {
    return undefined
  }
}

function parentPid(pid: number): number | undefined {
  const ppid = procStat(pid)?.[1]
  return ppid === undefined ? undefined : Number(ppid)
}

function isAnvilCommand(pid: number): boolean {
  try {
    const argv0 = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] ?? ''
    return argv0 === anvilBinaryPath() || basename(argv0) === 'anvil'
  } catch {
    return false
  }
}

/** Does `pid` hold a listening TCP socket on `port`? undefined when /proc does not tell. */
function listensOn(pid: number, port: number): boolean | undefined {
  try {
    const inodes = new Set<string>()
    const portHex = port.toString(16).toUpperCase().padStart(4, '0')
    for (const table of ['tcp', 'tcp6']) {
      let text: string
      try {
        text = readFileSync(`/proc/${pid}/net/${table}`, 'utf8')
      } catch {
        continue
      }
      for (const line of text.split('\n').slice(1)) {
        const cols = line.trim().split(/\s+/)
        // local_address is HEXIP:HEXPORT, st 0A is LISTEN, inode is column 9
        if (cols[1]?.endsWith(`:${portHex}`) && cols[3] === '0A' && cols[9]) inodes.add(cols[9])
      }
    }
    if (inodes.size === 0) return false
    return fdLinks(pid).some((link) => inodes.has(/^socket:\[(\d+)\]$/.exec(link)?.[1] ?? ''))
  } catch {
    return undefined
  }
}

function fdLinks(pid: number): string[] {
  // Sync on purpose: a handful of entries, read once at boot, and only for a live orphan.
  return readdirSync(`/proc/${pid}/fd`).flatMap((fd) => {
    try {
      return [readlinkSync(`/proc/${pid}/fd/${fd}`)]
    } catch {
      return []
    }
  })
}
