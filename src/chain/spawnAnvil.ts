import { type ChildProcess, spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

/** Genesis timestamp of every anvil we start: 2026-01-01T00:00:00Z. Fixed so a replayed chain is the same chain. */
export const GENESIS_TIMESTAMP = 1_767_225_600

export type AnvilOptions = {
  chainId?: number
  /** Default 0: the OS picks a free port. */
  port?: number
  /** Genesis block timestamp (seconds). */
  timestamp?: number
  /** Extra anvil flags, e.g. ['--no-mining']. */
  args?: string[]
  /** How long to wait for anvil to say it listens. */
  startTimeoutMs?: number
  /** Its own process group: a Ctrl-C in the terminal (SIGINT to the group) then reaches only the gateway, which saves before stopping anvil. */
  detached?: boolean
}

export type AnvilProcess = {
  url: string
  port: number
  pid: number
  child: ChildProcess
  /** SIGTERM, then SIGKILL after a grace period; resolves once the process has exited. */
  stop: () => Promise<void>
}

export class AnvilStartError extends Error {
  override name = 'AnvilStartError'
}

/**
 * The anvil binary ships in a platform package of Foundry's npm release
 * (@foundry-rs/anvil-<os>-<cpu>). The project depends on the Linux x64 one
 * directly, as an optional dependency: the registry here has no other
 * platform's package, and `npm ci` refuses a lockfile that lists packages the
 * registry cannot serve. Running the binary directly also saves the JS
 * wrapper's extra node process.
 */
export function anvilBinaryPath(): string {
  const require = createRequire(import.meta.url)
  const platformPackage = `@foundry-rs/anvil-${process.platform}-${process.arch === 'x64' ? 'amd64' : process.arch}`
  try {
    return join(dirname(require.resolve(`${platformPackage}/package.json`)), 'bin', 'anvil')
  } catch {
    throw new AnvilStartError(
      `anvil is not installed for ${process.platform}/${process.arch}: run npm install ${platformPackage}@1.7.1 (or set chain.embedded to false and configure an RPC)`,
    )
  }
}

/**
 * Starts anvil on 127.0.0.1 with a port the OS picks and resolves once it
 * listens. `--prune-history` keeps anvil from writing ~160 KB per block to
 * ~/.foundry; persistence is ours (see embeddedChain.ts), never `--state`. It keeps the states of
 * the last 16 blocks in memory: with none kept, an eth_call at `latest` that met a block being mined
 * failed with "BlockOutOfRangeError: block height is 15 but requested was 14" (a clean-clone CI run,
 * a token move answered 503 chain_state_unknown), as anvil had already dropped the block it chose.
 *
 * @example
 * const anvil = await spawnAnvil()
 * const client = createPublicClient({ transport: http(anvil.url) })
 * await anvil.stop()
 */
export async function spawnAnvil(options: AnvilOptions = {}): Promise<AnvilProcess> {
  const args = [
    '--host', '127.0.0.1',
    '--port', String(options.port ?? 0),
    '--chain-id', String(options.chainId ?? 31337),
    '--timestamp', String(options.timestamp ?? GENESIS_TIMESTAMP),
    '--prune-history', '16',
    ...(options.args ?? []),
  ]
  const child = spawn(anvilBinaryPath(), args, { stdio: ['ignore', 'pipe', 'pipe'], detached: options.detached ?? false })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))

  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    child.kill('SIGTERM')
    const timer = setTimeout(() => child.kill('SIGKILL'), 3000)
    await exited
    clearTimeout(timer)
  }

  const port = await new Promise<number>((resolve, reject) => {
    let output = ''
    const timer = setTimeout(() => fail(`anvil did not start within ${options.startTimeoutMs ?? 10_000} ms`), options.startTimeoutMs ?? 10_000)
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const match = /Listening on 127\.0\.0\.1:(\d+)/.exec(output)
      if (match) {
        clearTimeout(timer)
        // Stop buffering, but keep draining: a full pipe would block anvil.
        child.stdout?.off('data', onData)
        child.stderr?.off('data', onErr)
        child.off('exit', onExit)
        child.stdout?.resume()
        child.stderr?.resume()
        resolve(Number(match[1]))
      } else if (output.length > 64 * 1024) {
        output = output.slice(-4096)
      }
    }
    const fail = (message: string) => {
      clearTimeout(timer)
      void stop()
      reject(new AnvilStartError(`${message}${output ? `\n${output.slice(-2000)}` : ''}`))
    }
    child.stdout?.on('data', onData)
    const onErr = (chunk: Buffer) => {
      output += chunk.toString()
    }
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => fail(`anvil exited during start (${signal ?? `code ${code}`})`)
    child.stderr?.on('data', onErr)
    child.once('error', (error) => fail(`anvil could not be started: ${error.message}`))
    child.once('exit', onExit)
  })

  return { url: `http://127.0.0.1:${port}`, port, pid: child.pid!, child, stop }
}
