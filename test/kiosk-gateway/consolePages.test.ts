import { afterEach, describe, expect, test } from 'vitest'
import { CONSOLE_CSP } from '../../src/kiosk/web/consolePages.js'
import { KIOSK_CSP } from '../../src/kiosk/web/pages.js'
import { createTestGateway, type TestGateway } from '../helpers/gateway.js'

let gw: TestGateway | undefined
afterEach(async () => {
  await gw?.close()
  gw = undefined
})

describe('the web console pages (issue 28)', () => {
  test("the kiosk pages' policy, except that a form may post to the gateway itself", () => {
    expect(CONSOLE_CSP).toContain("form-action 'self'")
    expect(CONSOLE_CSP.replace("form-action 'self'", "form-action 'none'")).toBe(KIOSK_CSP)
  })

  test('the console and its sign-in page are static HTML under that policy, with their own assets', async () => {
    gw = await createTestGateway()
    for (const url of ['/console', '/console/sign-in']) {
      const res = await gw.app.inject({ url })
      expect(res.statusCode, url).toBe(200)
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
      expect(res.headers['content-security-policy']).toBe(CONSOLE_CSP)
      expect(res.headers['referrer-policy']).toBe('no-referrer')
      // Nothing inline: the CSP would block it.
      expect(res.body).not.toMatch(/<script>|<style|\sstyle=|\son[a-z]+=/)
    }
    for (const [name, type] of [
      ['console.js', 'text/javascript; charset=utf-8'],
      ['signin.js', 'text/javascript; charset=utf-8'],
      ['console.css', 'text/css; charset=utf-8'],
    ]) {
      const res = await gw.app.inject({ url: `/console/assets/${name}` })
      expect(res.statusCode, name).toBe(200)
      expect(res.headers['content-type']).toBe(type)
      expect((await gw.app.inject({ url: `/console/assets/${name}`, headers: { 'if-none-match': String(res.headers.etag) } })).statusCode).toBe(304)
    }
    // The kiosk's files stay under /kiosk/assets.
    expect((await gw.app.inject({ url: '/console/assets/kiosk.js' })).json()).toMatchObject({ error: 'asset_not_found' })
  })
})
