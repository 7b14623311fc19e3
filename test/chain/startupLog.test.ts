import fs from 'node:fs'
import path from 'node:path'
import { PassThrough } from 'node:stream'
import { afterAll, describe, expect, test } from 'vitest'
import { ConfigSchema } from '../../src/config.js'
import { startServer, type StartServerReturnType } from '../../src/server.js'
import { makeTempDir } from '../helpers/gateway.js'

/*
 * The embedded chain starts before the app exists; its start-up lines (a
 * corrupt state file set aside, state lost) must still reach the log.
 */

let server: StartServerReturnType | undefined
let dataDir: string | undefined
afterAll(async () => {
  await server?.close()
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true })
})

describe('start-up logs of the embedded chain', () => {
  test('a corrupt state.bin set aside at start-up is logged through the server logger', { timeout: 30_000 }, async () => {
    dataDir = makeTempDir('tapgate-startlog-')
    const chainDir = path.join(dataDir, 'chain', '31337')
    fs.mkdirSync(chainDir, { recursive: true, mode: 0o700 })
    fs.writeFileSync(path.join(chainDir, 'state.bin'), Buffer.from('not a gzip of an anvil dump'))

    const lines: Array<{ level: number; msg: string; movedTo?: string }> = []
    const logStream = new PassThrough()
    let buffered = ''
    logStream.on('data', (chunk: Buffer) => {
      buffered += chunk.toString()
      let newline: number
      while ((newline = buffered.indexOf('\n')) >= 0) {
        lines.push(JSON.parse(buffered.slice(0, newline)))
        buffered = buffered.slice(newline + 1)
      }
    })
    const config = ConfigSchema.parse({ dataDir, port: 0, demo: false, logLevel: 'info', station: { enabled: false } })
    server = await startServer(config, () => {}, { logStream })
    await new Promise((resolve) => setImmediate(resolve))

    const corrupt = lines.find((line) => line.msg === 'embedded chain state unloadable; starting a fresh chain')
    expect(corrupt, JSON.stringify(lines.map((l) => l.msg))).toBeDefined()
    expect(corrupt!.level).toBe(40)
    expect(corrupt!.movedTo).toMatch(/state\..+\.corrupt$/)
    expect(fs.existsSync(corrupt!.movedTo!)).toBe(true)
    // And the server's own lines go to the same stream.
    expect(lines.some((line) => /Server listening/.test(line.msg))).toBe(true)
  })
})
