import assert from 'node:assert/strict'
import { after, before, beforeEach, test } from 'node:test'
import { startGateway } from 'tapgate/testing'
import { claimToken, openTap } from './claimToken.mjs'

const ALICE = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8'

/** @type {import('tapgate/testing').TestGateway} */
let gateway
before(async () => {
  gateway = await startGateway()
})
after(() => gateway.stop())
// Each test starts from the seed, so it passes alone and in any order.
beforeEach(() => gateway.reset())

test('a first tap is valid and its token can be claimed', async () => {
  const chip = await gateway.chip({ token: true })
  const { refId, verdict } = await chip.tap()
  assert.equal(verdict.accepted, true)

  const opened = await openTap({ gatewayUrl: gateway.url, refId })
  assert.equal(opened.ok, true)
  const result = await claimToken({ gatewayUrl: gateway.url, otp: opened.otp, recipient: ALICE })
  assert.equal(result.claimed, true)
  await gateway.waitForChain()
  assert.equal(await gateway.ownerOf(chip), ALICE)
})

test('a replayed tap URL is refused, and the tap log says why', async () => {
  const chip = await gateway.chip()
  await chip.tap()
  const replay = await gateway.tap(chip.replayedUrl())
  assert.equal(replay.verdict.accepted, false)
  assert.equal(replay.verdict.reason, 'counter_replay')
  const [refused] = await gateway.taps.list({ refused: true })
  assert.equal(refused.reason, 'counter_replay')
  assert.equal(refused.uid, chip.uid)
})

test('a second chip taps on its own counter', async () => {
  const first = await gateway.chip()
  const second = await gateway.chip({ scheme: 'lrp' })
  await first.tap()
  await first.tap()
  const { verdict } = await second.tap()
  assert.equal(verdict.accepted, true)
  assert.equal(verdict.counter, 0)
})

test('an OTP that expired is refused', async () => {
  const chip = await gateway.chip({ token: true })
  const { refId } = await chip.tap()
  const opened = await openTap({ gatewayUrl: gateway.url, refId })
  await gateway.clock.advance(31 * 60_000) // the customer took 31 minutes; OTPs live 30
  const result = await claimToken({ gatewayUrl: gateway.url, otp: opened.otp, recipient: ALICE })
  assert.equal(result.claimed, false)
  assert.equal(result.code, 'otp_expired')
})

test('the reset left nothing of the other tests', async () => {
  assert.deepEqual(await gateway.taps.list(), [])
  const chip = await gateway.chip({ token: true })
  assert.equal(chip.token?.tokenId, '1')
})
