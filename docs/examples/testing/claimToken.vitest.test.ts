import { expect, test } from 'tapgate/testing/vitest'
import { claimToken, openTap } from './claimToken.mjs'

const ALICE = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8'

// `gateway` is one gateway per worker, reset before each test: every test starts from the seed.
test('a first tap is valid and its token can be claimed', async ({ gateway }) => {
  const chip = await gateway.chip({ token: true })
  const { refId, verdict } = await chip.tap()
  expect(verdict.accepted).toBe(true)

  const opened = await openTap({ gatewayUrl: gateway.url, refId: refId! })
  expect(opened.ok).toBe(true)
  const result = await claimToken({ gatewayUrl: gateway.url, otp: opened.otp, recipient: ALICE })
  expect(result.claimed).toBe(true)
  await gateway.waitForChain()
  expect(await gateway.ownerOf(chip)).toBe(ALICE)
})

test('a replayed tap URL is refused, and the tap log says why', async ({ gateway }) => {
  const chip = await gateway.chip()
  await chip.tap()
  const replay = await gateway.tap(chip.replayedUrl())
  expect(replay.verdict).toMatchObject({ accepted: false, reason: 'counter_replay' })
  const [refused] = await gateway.taps.list({ refused: true })
  expect(refused).toMatchObject({ uid: chip.uid, reason: 'counter_replay' })
})

test('a second chip taps on its own counter', async ({ gateway }) => {
  const first = await gateway.chip()
  const second = await gateway.chip({ scheme: 'lrp' })
  await first.tap()
  await first.tap()
  const { verdict } = await second.tap()
  expect(verdict).toMatchObject({ accepted: true, uid: second.uid, counter: 0 })
})

test('an OTP that expired is refused', async ({ gateway }) => {
  const chip = await gateway.chip({ token: true })
  const { refId } = await chip.tap()
  const opened = await openTap({ gatewayUrl: gateway.url, refId: refId! })
  await gateway.clock.advance(31 * 60_000) // the customer took 31 minutes; OTPs live 30
  const result = await claimToken({ gatewayUrl: gateway.url, otp: opened.otp, recipient: ALICE })
  expect(result).toMatchObject({ claimed: false, code: 'otp_expired' })
})

test('the reset left nothing of the other tests', async ({ gateway }) => {
  expect(await gateway.taps.list()).toEqual([])
  const chip = await gateway.chip({ token: true })
  expect(chip.token?.tokenId).toBe('1')
})
