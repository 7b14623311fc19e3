import { writeFileAtomic } from '../../writeFileAtomic.js'
import { startEarly } from '../../startEarly.js'
import type { Flags } from '../usage.js'
import { configFrom, noPositionals, text } from './context.js'

export async function run(positionals: string[], flags: Flags) {
  noPositionals(positionals)
  const config = configFrom(
    flags,
    { port: text(flags, 'port'), host: text(flags, 'host'), ...(flags['no-demo'] ? { demo: false } : {}) },
    { serving: true },
  )
  // Taken before anything starts: a signal's default action during the start (a Ctrl-C, a test
  // stopping the gateway the moment it printed its address) would leave the detached anvil running.
  let stopAsked: string | null = null
  let stop = async (signal: string) => void (stopAsked ??= signal)
  process.once('SIGINT', () => void stop('SIGINT'))
  process.once('SIGTERM', () => void stop('SIGTERM'))
  // anvil boots while the server's modules load.
  const early = startEarly(config)
  // startServer stops the chain when it fails; before it runs (its modules did not load), this does.
  const { startServer } = await import('../../server.js').catch(async (error: unknown) => {
    await early.abandon()
    throw error
  })
  const server = await startServer(config, console.log, { early })
  let closing = false
  stop = async (signal: string) => {
    if (closing) return
    closing = true
    server.app.log.info({ signal }, 'shutting down')
    await server.close()
  }
  if (stopAsked !== null) return stop(stopAsked)
  const readyFile = text(flags, 'ready-file')
  if (readyFile !== undefined) await writeReadyFile(readyFile, { url: server.url, ...(server.demoApiKey ? { apiKey: server.demoApiKey } : {}) })
}

/**
 * `--ready-file FILE`: one JSON line once the gateway answers, for a script that starts it in the
 * background (the port it got with --port 0, the demo team's key when this start made one). Written
 * aside and renamed, so a watcher reads all of it or nothing; 0600, as it may hold a key.
 */
async function writeReadyFile(file: string, ready: { url: string; apiKey?: string }): Promise<void> {
  await writeFileAtomic(file, Buffer.from(`${JSON.stringify(ready)}\n`))
}
