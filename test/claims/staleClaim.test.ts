import type { Address } from 'viem'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { phygitalTokenAbi } from '../../contracts/artifacts/PhygitalToken.js'
import { transferWithApiKey } from '../../src/transfers/transferToken.js'
import type { PostgresStore, SqliteStore } from '../../src/db/store.js'
import { type ChainGateway, contractOf, createBackendChainGateway, OTHER, USER } from '../helpers/chainGateway.js'
import { queryRows } from '../helpers/gateway.js'
import { CAP, type ClaimStation, MUG, setUpClaimStation, TEE, TWO_TAP } from '../helpers/claimStation.js'

// Issue 17 §2: a claim (and its OTP) is bound to the token's state at its tap. Once the token
// moved, an older open claim is refused (409 token_moved) with nothing spent, and shows "moved".

let gw: ChainGateway<SqliteStore | PostgresStore>
let shop: ClaimStation

beforeAll(async () => {
  gw = await createBackendChainGateway()
  shop = await setUpClaimStation(gw, { listen: false })
}, 60_000)
afterAll(async () => {
  await gw?.close()
})

const post = (url: string, payload?: object) => shop.post(url, payload)
const kiosk = (url: string, payload?: object) => shop.kiosk(url, payload)
const ownerOf = async (tokenId: bigint) =>
  gw.publicClient.readContract({ address: await contractOf(gw, shop.teamId), abi: phygitalTokenAbi, functionName: 'ownerOf', args: [tokenId] }) as Promise<Address>
const count = async (table: 'transfers' | 'chain_txs' | 'claim_registrations') => (await queryRows<{ n: number }>(gw.store, `SELECT count(*) AS n FROM ${table}`))[0]!.n
const linkToken = (url: string) => new URL(url).pathname.split('/')[2]!

/** A product tap at the station: the claim it opened. */
async function tapClaim(uid: string, counter: number): Promise<number> {
  const tap = await shop.tap(uid, counter)
  expect(tap.status, JSON.stringify(tap.body)).toBe(200)
  return shop.lastClaimId()
}

/** "Finish on your phone", and the phone opens the link: its token and session. */
async function openOnPhone(claimId: number): Promise<{ token: string; session: string }> {
  const token = linkToken((await shop.handoff(claimId)).body.url)
  const opened = await post(`/c/${token}/open`, {})
  expect(opened.status).toBe(200)
  return { token, session: opened.body.session as string }
}

describe('a stale claim cannot take a token from the customer who claimed it', () => {
  test('the reproduction: claim 1 opened on a phone, claim 2 gives Y at the kiosk, claim 1 then sends X: 409 token_moved, nothing spent, ownerOf stays Y', async () => {
    const claim1 = await tapClaim(TEE, 1)
    const phone = await openOnPhone(claim1)
    const claim2 = await tapClaim(TEE, 2)
    expect(await kiosk(`/kiosk/claims/${claim2}/recipient`, { recipient: USER })).toMatchObject({ status: 200, body: { claim: { step: 'claimed' } } })

    const before = { transfers: await count('transfers'), txs: await count('chain_txs') }
    const late = await post(`/c/${phone.token}/recipient`, { session: phone.session, recipient: OTHER })
    expect(late).toMatchObject({ status: 409, body: { error: 'token_moved' } })
    expect(late.body.message).toMatch(/claimed meanwhile/)
    // Nothing spent, nothing queued: the claim stays as it was, its OTP unused.
    expect({ transfers: await count('transfers'), txs: await count('chain_txs') }).toEqual(before)
    const stale = (await gw.store.claims.get(claim1))!
    expect(stale.step).toBe('opened')
    expect((await gw.store.otps.get(stale.otpCode))!.usedAt).toBeNull()
    // The phone's page learns it plainly.
    expect(await post(`/c/${phone.token}/status`, { session: phone.session })).toMatchObject({ status: 200, body: { claim: { step: 'moved' } } })

    await gw.settle()
    expect(await ownerOf(1n)).toBe(USER)
    // Again after the chain settled (the gateway read the token's nonce meanwhile): still refused.
    expect(await post(`/c/${phone.token}/recipient`, { session: phone.session, recipient: OTHER })).toMatchObject({ status: 409, body: { error: 'token_moved' } })

    // A tap after the move opens a claim that works.
    const claim3 = await tapClaim(TEE, 3)
    expect(await kiosk(`/kiosk/claims/${claim3}/recipient`, { recipient: OTHER })).toMatchObject({ status: 200, body: { claim: { step: 'claimed' } } })
    await gw.settle()
    expect(await ownerOf(1n)).toBe(OTHER)
  })

  test('an older claim still at the kiosk: the hand-off and the address are refused with token_moved', async () => {
    const claim1 = await tapClaim(CAP, 1)
    const claim2 = await tapClaim(CAP, 2)
    const phone = await openOnPhone(claim2)
    expect(await post(`/c/${phone.token}/recipient`, { session: phone.session, recipient: USER })).toMatchObject({ status: 200, body: { claim: { step: 'claimed' } } })

    expect(await shop.handoff(claim1)).toMatchObject({ status: 409, body: { error: 'token_moved' } })
    expect(await kiosk(`/kiosk/claims/${claim1}/recipient`, { recipient: OTHER })).toMatchObject({ status: 409, body: { error: 'token_moved' } })
    await gw.settle()
    expect(await ownerOf(2n)).toBe(USER)
  })

  test('an older claim whose token another path moved (the team\'s API-key transfer) is refused too', async () => {
    const claim1 = await tapClaim(MUG, 1)
    const phone = await openOnPhone(claim1)
    // The shop moves the token itself (the domain call behind POST /phygitals/transfer).
    const token = (await gw.store.tokens.findByChip(MUG))!
    await transferWithApiKey({ store: gw.store, chains: gw.chains, config: gw.config, now: () => Date.now() }, { key: token, teamId: shop.teamId, recipient: USER })
    expect(await post(`/c/${phone.token}/recipient`, { session: phone.session, recipient: OTHER })).toMatchObject({ status: 409, body: { error: 'token_moved' } })
    await gw.settle()
    expect(await ownerOf(3n)).toBe(USER)
  })

  test('a 2-tap product: an older first tap cannot register once the token moved', async () => {
    const stale = await tapClaim(TWO_TAP, 1)
    // Another first tap registers and, once allowed, its second tap claims.
    const first = await tapClaim(TWO_TAP, 2)
    expect(await kiosk(`/kiosk/claims/${first}/recipient`, { recipient: USER })).toMatchObject({ status: 200, body: { claim: { step: 'registered' } } })
    gw.clock.offsetMs = 61_000
    try {
      const second = await tapClaim(TWO_TAP, 3)
      expect(await gw.store.claims.get(second)).toMatchObject({ step: 'claimed', recipient: USER })
      await gw.settle()
      expect(await ownerOf(5n)).toBe(USER)
      const registrations = await count('claim_registrations')
      expect(await kiosk(`/kiosk/claims/${stale}/recipient`, { recipient: OTHER })).toMatchObject({ status: 409, body: { error: 'token_moved' } })
      expect(await count('claim_registrations')).toBe(registrations)
    } finally {
      gw.clock.offsetMs = 0
    }
  })
})
