import fs from 'node:fs'
import path from 'node:path'
import { Writable } from 'node:stream'
import { afterEach, describe, expect, test } from 'vitest'
import { KIOSK_CLIENT_DIR } from '../../src/kiosk/web/bundle.js'
import { createTestGateway, testDir, type TestGateway } from '../helpers/gateway.js'

let gw: TestGateway | undefined
afterEach(async () => {
  await gw?.close()
  gw = undefined
})

/** The log lines pino writes, parsed. */
function logLines() {
  const lines: { level: number; msg: string; err?: { message: string } }[] = []
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as (typeof lines)[number])
      done()
    },
  })
  return { lines, stream }
}

describe('kiosk assets', () => {
  test('the client code is found from the package root, not next to the module (the bin runs a bundle from node_modules/.cache)', () => {
    expect(fs.existsSync(path.join(KIOSK_CLIENT_DIR, 'kiosk.ts'))).toBe(true)
    expect(KIOSK_CLIENT_DIR.endsWith(path.join('src', 'kiosk', 'web', 'client'))).toBe(true)
  })

  test('a build that fails answers 503 kiosk_assets_unavailable, logs the error once, and is not run again per request', async () => {
    // A copy of the client with one syntax error: what a broken install or a bad edit looks like.
    const clientDir = testDir('tapgate-kiosk-client-')
    fs.cpSync(KIOSK_CLIENT_DIR, clientDir, { recursive: true })
    fs.appendFileSync(path.join(clientDir, 'kiosk.ts'), '\nconst = broken\n')
    const log = logLines()
    gw = await createTestGateway({ config: { logLevel: 'error' }, logStream: log.stream, kioskClientDir: clientDir })

    for (const asset of ['kiosk.js', 'staff.js', 'kiosk.css', 'kiosk.js', 'claim.js']) {
      const res = await gw.app.inject({ url: `/kiosk/assets/${asset}` })
      expect(res.statusCode, asset).toBe(503)
      expect(res.json()).toMatchObject({ success: false, error: 'kiosk_assets_unavailable' })
    }
    const failures = log.lines.filter((line) => line.msg.startsWith("the pages' assets failed to build"))
    expect(failures).toHaveLength(1)
    expect(failures[0]!.err?.message).toContain('kiosk.ts')
    // Fixing the file does not matter to a running gateway: the failure stands until a restart
    // (so it is the cached failure that answers, not a new build).
    fs.copyFileSync(path.join(KIOSK_CLIENT_DIR, 'kiosk.ts'), path.join(clientDir, 'kiosk.ts'))
    expect((await gw.app.inject({ url: '/kiosk/assets/kiosk.js' })).statusCode).toBe(503)
    // The page itself, which needs no build, still loads.
    expect((await gw.app.inject({ url: '/kiosk' })).statusCode).toBe(200)
  })
})
