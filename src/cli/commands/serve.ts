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
  // anvil boots while the server's modules load.
  const early = startEarly(config)
  // startServer stops the chain when it fails; before it runs (its modules did not load), this does.
  const { startServer } = await import('../../server.js').catch(async (error: unknown) => {
    await early.abandon()
    throw error
  })
  const server = await startServer(config, console.log, { early })
  let closing = false
  const stop = async (signal: string) => {
    if (closing) return
    closing = true
    server.app.log.info({ signal }, 'shutting down')
    await server.close()
  }
  process.once('SIGINT', () => void stop('SIGINT'))
  process.once('SIGTERM', () => void stop('SIGTERM'))
}
