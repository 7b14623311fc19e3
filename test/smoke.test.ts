import { afterEach, expect, test } from 'vitest'
import { ALICE, call, CONTRACT, createTestGateway, metadata, seedTeam, tapChip, type TestGateway } from './helpers/gateway.js'

let gw: TestGateway
afterEach(async () => gw?.close())

test('a tap on a linked chip yields a claim OTP on the first query only', async () => {
  gw = await createTestGateway()
  await seedTeam(gw, {
    name: 'A',
    chips: [{ uid: '04AABBCCDDEE01' }],
    tokens: [{ chainId: 31337, contractAddress: CONTRACT, tokenId: '7', chips: ['04AABBCCDDEE01'], metadata: metadata() }],
  })
  const ref = await tapChip(gw, '04aabbccddee01')
  const first = await call(gw, { url: `/refs/${ref}` })
  expect(first.status).toBe(200)
  expect(first.body.isValidRef).toBe(true)
  expect(first.body.linkedToken.otp).toMatch(/^[\w-]{21}$/)
  const second = await call(gw, { url: `/refs/${ref}` })
  expect(second.body).toEqual({ ...first.body, isValidRef: false, linkedToken: { ...first.body.linkedToken, otp: undefined } })
  expect(ALICE).toBeTruthy()
})
