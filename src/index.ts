/**
 * `tapgate`: a gateway started from code, as `tapgate serve` starts it. For tests, `tapgate/testing`
 * gives a ready gateway with chips and a clock; for calling one, `tapgate/client`.
 *
 * @example
 * import { loadConfig, startServer } from 'tapgate'
 * const server = await startServer(loadConfig({ overrides: { dataDir: './data', port: '0' }, serving: true }))
 * console.log(server.url)
 * await server.close()
 */
export { startServer, type StartServerOptions, type StartServerReturnType } from './server.js'
export { loadConfig, ConfigSchema, type Config, type ConfigInput } from './config.js'
export { version } from './version.js'
