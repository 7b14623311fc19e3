import { afterEach, describe, expect, test } from 'vitest'
import { createTestGateway, type TestGateway } from '../helpers/gateway.js'

// Issue 17 §6: /docs and the tap pages could be framed by another site (clickjacking). Each of
// their responses now says no frame, in both the CSP and the older X-Frame-Options form.

let gw: TestGateway
afterEach(async () => gw?.close())

const framing = (headers: Record<string, unknown>) => ({ xfo: headers['x-frame-options'], csp: headers['content-security-policy'] })

describe('frame-ancestors none', () => {
  test('/docs: the page, its assets and its redirect', async () => {
    gw = await createTestGateway()
    const urls = ['/docs', '/docs/', '/docs/static/index.html', '/docs/static/swagger-ui.css']
    const responses = await Promise.all(urls.map((url) => gw.app.inject({ url })))
    expect(responses.map((r) => r.statusCode)).toEqual([200, 200, 302, 200])
    responses.forEach((r, i) => expect(framing(r.headers), urls[i]).toEqual({ xfo: 'DENY', csp: "frame-ancestors 'none'" }))
    // The API's own JSON answers are left alone.
    expect(framing((await gw.app.inject({ url: '/health' })).headers)).toEqual({ xfo: undefined, csp: undefined })
  })

  test("/tap: the refused page keeps its CSP with frame-ancestors 'none' added; the rate-limited answer too", async () => {
    gw = await createTestGateway({ config: { rateLimit: { max: 1 } } })
    const page = await gw.app.inject({ url: '/tap?e=00&c=00' })
    expect(page.statusCode).toBe(400)
    expect(framing(page.headers)).toEqual({
      xfo: 'DENY',
      csp: "default-src 'none'; img-src https: http:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    })
    const limited = await gw.app.inject({ url: '/tap?e=00&c=00' })
    expect(limited.statusCode).toBe(429)
    expect(framing(limited.headers)).toEqual({ xfo: 'DENY', csp: "frame-ancestors 'none'" })
  })
})
