/*
 * A throw-away PostgreSQL server for tests: initdb into a directory, a postmaster listening on a Unix
 * socket in that directory only (no TCP port, so runs never clash), stopped by its PID. Debian's
 * `postgresql` package provides the binaries (.ci/run installs it); they live in
 * /usr/lib/postgresql/<major>/bin, which is not on PATH.
 */
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import postgres from 'postgres'
import { exited, signal } from './processes.js'

export const POSTGRES_INSTALL_HINT = 'apt-get install postgresql'
/** The superuser initdb creates (`-U`), whatever OS user runs the tests. */
const POSTGRES_SUPERUSER = 'postgres'
/** Under root the server runs as this OS user, which Debian's package creates. */
const POSTGRES_OS_USER = 'postgres'
/** Only names the socket file (.s.PGSQL.5432): the server listens on no TCP port. */
const POSTGRES_PORT = 5432

const execFileAsync = promisify(execFile)
const startTimeoutMs = 15_000
const fastShutdownMs = 10_000
const killWaitMs = 5_000

/**
 * The directory holding `initdb` and `postgres`: the newest of Debian's versioned ones, else the one
 * `initdb` on PATH lives in (other distributions, Homebrew); null when PostgreSQL is not installed.
 * Debian's /usr/local/bin or /usr/bin entries can be wrappers (postgresql-common's pg_wrapper), so the
 * versioned directory comes first.
 */
export function findPostgresBin(): string | null {
  const debian = '/usr/lib/postgresql'
  const majors = fs.existsSync(debian)
    ? fs
        .readdirSync(debian)
        .filter((name) => /^\d+$/.test(name))
        .sort((a, b) => Number(b) - Number(a))
    : []
  const candidates = majors.map((major) => path.join(debian, major, 'bin'))
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const initdb = path.join(dir, 'initdb')
    if (dir && fs.existsSync(initdb)) candidates.push(path.dirname(fs.realpathSync(initdb)))
  }
  return candidates.find((dir) => fs.existsSync(path.join(dir, 'initdb')) && fs.existsSync(path.join(dir, 'postgres'))) ?? null
}

export type ClientOptions = postgres.Options<Record<string, postgres.PostgresType>>

/** A postgres.js client of `database` on the server whose socket is in `socketDir`, as the superuser. */
export function clientOptions(socketDir: string, database: string): ClientOptions {
  return { host: socketDir, port: POSTGRES_PORT, user: POSTGRES_SUPERUSER, database, onnotice: () => {} }
}

export type PostgresServer = {
  /** The directory of the server's Unix socket (`host` for a client). */
  socketDir: string
  pid: number
  /** Milliseconds spent in initdb and from spawn to the first accepted connection. */
  timings: { initdbMs: number; readyMs: number }
  /** The server's log so far (for a failing test's message). */
  log(): string
  /** Options for a postgres.js client of `database` as the superuser, over the socket. */
  clientOptions(database: string): ClientOptions
  /** Fast shutdown (SIGINT) by PID, SIGKILL after a bound; resolves once the postmaster has exited. */
  stop(): Promise<{ stopMs: number; killed: boolean }>
  /**
   * Starts the postmaster again on the same data dir once it has exited (a test that killed it, e.g.
   * SIGQUIT, PostgreSQL's immediate shutdown): crash recovery replays the WAL. Resolves once it
   * accepts connections; `pid` is then the new postmaster's.
   */
  restart(): Promise<void>
}

/**
 * initdb into `dir`/data (which must not exist) and start a postmaster on a socket in `dir`.
 * As root, both run as the `postgres` OS user (the server refuses root) and `dir` is handed to it.
 * Resolves once the server accepts connections; on failure the server is stopped and the error
 * carries initdb's or the server's log.
 */
export async function startPostgresServer(dir: string, bin: string): Promise<PostgresServer> {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  const owner = process.getuid?.() === 0 ? osUser(POSTGRES_OS_USER) : undefined
  if (owner) fs.chownSync(dir, owner.uid, owner.gid)
  const dataDir = path.join(dir, 'data')
  const logFile = path.join(dir, 'postgres.log')
  // Only these: a developer's PG* variables must not reach initdb or the server.
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C' }
  const log = () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '')

  const initdbStart = performance.now()
  try {
    // Not execFileSync: this runs in vitest's main process, whose event loop serves the workers.
    // --no-sync: a throw-away cluster needs no fsync of its files. Trust: only this socket reaches it.
    await execFileAsync(path.join(bin, 'initdb'), ['-D', dataDir, '-U', POSTGRES_SUPERUSER, '--auth=trust', '--no-sync', '--encoding=UTF8', '--locale=C'], {
      cwd: dir,
      env,
      ...owner,
      timeout: startTimeoutMs,
    })
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string }
    throw new Error(`initdb failed: ${(error as Error).message}\n${stdout ?? ''}${stderr ?? ''}`)
  }
  const initdbMs = performance.now() - initdbStart

  const readyStart = performance.now()
  const postmaster = () => spawnPostmaster({ bin, dir, dataDir, logFile, env, owner })
  let child = postmaster()
  const server: PostgresServer = {
    socketDir: dir,
    get pid() {
      return child.pid ?? -1
    },
    timings: { initdbMs, readyMs: 0 },
    log,
    clientOptions: (database) => clientOptions(dir, database),
    stop: () => stopPostmaster(child),
    async restart() {
      if (child.exitCode === null && child.signalCode === null) throw new Error(`the postmaster (pid ${child.pid}) is still running: stop or kill it first`)
      child = postmaster()
      await ready(server, child, log)
    },
  }
  await ready(server, child, log)
  server.timings.readyMs = performance.now() - readyStart
  return server
}

type PostmasterOptions = { bin: string; dir: string; dataDir: string; logFile: string; env: NodeJS.ProcessEnv; owner: { uid: number; gid: number } | undefined }

function spawnPostmaster({ bin, dir, dataDir, logFile, env, owner }: PostmasterOptions): ChildProcess {
  const logFd = fs.openSync(logFile, 'a')
  try {
    // The postmaster itself, not pg_ctl, so that the PID we hold is the server's. fsync and full-page
    // writes off: they guard against an OS crash, and this cluster is thrown away; a killed server
    // loses nothing without them. synchronous_commit stays on: an acknowledged commit is in the WAL.
    return spawn(
      path.join(bin, 'postgres'),
      ['-D', dataDir, '-k', dir, '-p', String(POSTGRES_PORT), '-c', 'listen_addresses=', '-c', 'fsync=off', '-c', 'full_page_writes=off'],
      { cwd: dir, env, ...owner, stdio: ['ignore', logFd, logFd] },
    )
  } finally {
    fs.closeSync(logFd)
  }
}

/** Resolves once `child` accepts connections; on failure stops it and throws with the server's log. */
async function ready(server: PostgresServer, child: ChildProcess, log: () => string): Promise<void> {
  const spawnError = new Promise<Error>((resolve) => child.once('error', resolve))
  try {
    await Promise.race([waitUntilAccepting(server, child), spawnError.then((error) => Promise.reject(error))])
  } catch (error) {
    await server.stop()
    throw new Error(`PostgreSQL did not start: ${(error as Error).message}\n${log()}`)
  }
}

/** Polls with a real connection (what a test needs), bounded; fails at once if the postmaster exits. */
async function waitUntilAccepting(server: PostgresServer, child: ChildProcess): Promise<void> {
  const deadline = performance.now() + startTimeoutMs
  let lastError: unknown
  while (performance.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the postmaster exited (code ${child.exitCode}, signal ${child.signalCode})`)
    const sql = postgres({ ...server.clientOptions('postgres'), max: 1, connect_timeout: 2 })
    try {
      await sql`select 1`
      return
    } catch (error) {
      lastError = error
    } finally {
      await sql.end({ timeout: 1 })
    }
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  throw new Error(`no connection within ${startTimeoutMs} ms (last: ${(lastError as Error | undefined)?.message})`)
}

async function stopPostmaster(child: ChildProcess): Promise<{ stopMs: number; killed: boolean }> {
  const start = performance.now()
  let killed = false
  if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
    // SIGINT is PostgreSQL's fast shutdown: roll back open transactions, close clients, checkpoint.
    signal(child.pid, 'SIGINT')
    if (!(await exited(child, fastShutdownMs))) {
      killed = true
      signal(child.pid, 'SIGKILL')
      await exited(child, killWaitMs)
    }
  }
  return { stopMs: performance.now() - start, killed }
}

function osUser(name: string): { uid: number; gid: number } {
  try {
    const id = (flag: string) => Number(execFileSync('id', [flag, name], { encoding: 'utf8' }).trim())
    return { uid: id('-u'), gid: id('-g') }
  } catch {
    throw new Error(`running as root, PostgreSQL must run as the OS user "${name}", which does not exist (${POSTGRES_INSTALL_HINT} creates it)`)
  }
}
