import { startServer } from '../../server.js'
import type { GlobalOptions } from '../usage.js'
import { configFrom } from './context.js'

export async function serve(o: GlobalOptions & { port?: string; host?: string; demo?: boolean }) {
  const config = configFrom(o, { port: o.port, host: o.host, ...(o.demo === false ? { demo: false } : {}) })
  const server = await startServer(config)
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
