import { expect, it } from 'vitest'
import { describeStores } from '../helpers/stores.js'

describeStores('gatewayMeta', ({ store }) => {
  it('stores, returns and replaces a value as bytes', async () => {
    const s = store()
    expect(await s.gatewayMeta.get('secret_check')).toBeUndefined()
    const first = Buffer.from([0, 1, 2, 255, 0])
    await s.gatewayMeta.set('secret_check', first)
    const read = await s.gatewayMeta.get('secret_check')
    expect(Buffer.isBuffer(read)).toBe(true)
    expect(read).toEqual(first)
    await s.gatewayMeta.set('secret_check', Buffer.from('second'))
    expect(await s.gatewayMeta.get('secret_check')).toEqual(Buffer.from('second'))
  })

  it('keeps one row when gateways racing at start-up each set it', async () => {
    const s = store()
    const values = Array.from({ length: 10 }, (_, i) => Buffer.from([i]))
    await Promise.all(values.map((value) => s.tx((tx) => tx.gatewayMeta.set('secret_check', value))))
    expect(values).toContainEqual(await s.gatewayMeta.get('secret_check'))
  })
})
