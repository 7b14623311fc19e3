import { expect, it } from 'vitest'
import type { ClaimRow, ClaimVia } from '../../src/db/claims.js'
import { isUniqueViolation } from '../../src/db/storeErrors.js'
import { describeStores } from '../helpers/stores.js'
import { insertChainTx, insertOtp, insertStation, insertTeam, insertToken } from './seedRows.js'

const RACERS = 20
const ALICE = '0x00000000000000000000000000000000000a11ce'
const CHIP = '04D1000000000A'

describeStores('claims', ({ store }) => {
  const seed = async () => {
    const teamId = await insertTeam(store(), [CHIP])
    const tokenId = await insertToken(store(), teamId)
    const contractId = await store().guestbook.insertContract({ teamId, name: 'Book', symbol: 'GB', chainId: 31337, address: '0x00000000000000000000000000000000000000d2', now: 1 })
    const eventId = await store().guestbook.insertEvent({ teamId, contractId, name: 'Day', tokenId: '1', metadata: '{}', now: 1 })
    const stationId = await insertStation(store(), teamId)
    const otpCode = await insertOtp(store(), { code: 'OTP-1', teamId, chipUid: CHIP })
    return { teamId, tokenId, eventId, stationId, otpCode }
  }
  type Seed = Awaited<ReturnType<typeof seed>>
  const tokenClaim = (s: Seed, over: { createdAt?: number; expiresAt?: number; stationId?: number } = {}) =>
    store().claims.insert({ stationId: s.stationId, kind: 'token', chipUid: CHIP, tokenId: s.tokenId, guestbookEventId: null, checkInId: null, otpCode: s.otpCode, createdAt: 100, expiresAt: 1_000, ...over })
  const guestbookClaim = (s: Seed, over: { createdAt?: number; expiresAt?: number } = {}) =>
    store().claims.insert({ stationId: s.stationId, kind: 'guestbook', chipUid: CHIP, tokenId: null, guestbookEventId: s.eventId, checkInId: null, otpCode: s.otpCode, createdAt: 100, expiresAt: 1_000, ...over })
  const transferOn = async (s: Seed, chainTxId: number) =>
    store().transfers.insert({ tokenId: s.tokenId, teamId: s.teamId, recipient: ALICE, method: 'mintNFT', via: 'otp', otpCode: s.otpCode, claimRegistrationId: null, chainTxId, createdAt: 100, knownOutsideMoves: null })
  const openRow = (s: Seed, id: number): ClaimRow => ({
    id, stationId: s.stationId, kind: 'token', chipUid: CHIP, tokenId: s.tokenId, guestbookEventId: null, checkInId: null, otpCode: s.otpCode,
    step: 'open', linkHash: null, phoneHash: null, via: null, recipient: null, transferId: null, guestbookMintId: null, chainTxId: null,
    registrationId: null, createdAt: 100, expiresAt: 1_000, openedAt: null, claimedAt: null,
  })

  it('stores a claim, gives it a link while open and finds it by link', async () => {
    const s = await seed()
    const id = await tokenClaim(s)
    expect(await store().claims.get(id)).toEqual(openRow(s, id))
    expect(await store().claims.get(id + 100)).toBeUndefined()
    expect(await store().claims.setLink(id, 'link-1')).toBe(true)
    expect(await store().claims.setLink(id, 'link-2')).toBe(true)
    expect(await store().claims.findByLink('link-1')).toBeUndefined()
    expect(await store().claims.findByLink('link-2')).toEqual({ ...openRow(s, id), linkHash: 'link-2' })
    expect(await store().claims.markOpened(id, 'phone-a', 150)).toBe(true)
    expect(await store().claims.setLink(id, 'link-3')).toBe(false)
    expect(await store().claims.findByLink('link-2')).toEqual({ ...openRow(s, id), linkHash: 'link-2', step: 'opened', phoneHash: 'phone-a', openedAt: 150 })
  })

  it('refuses a link already given to another claim, as a unique violation', async () => {
    const s = await seed()
    const first = await tokenClaim(s)
    const second = await tokenClaim(s)
    await store().claims.setLink(first, 'link')
    const refused = await store().claims.setLink(second, 'link').then(() => null, (error: unknown) => error)
    expect(isUniqueViolation(refused)).toBe(true)
    expect((await store().claims.findByLink('link'))?.id).toBe(first)
    expect((await store().claims.get(second))?.linkHash).toBeNull()
  })

  it('lets only the phone that opened a link, or the kiosk while open, claim it', async () => {
    const s = await seed()
    const chainTxId = await insertChainTx(store())
    const transferId = await transferOn(s, chainTxId)
    const claim = (id: number, via: ClaimVia, phoneHash: string | null) =>
      store().claims.markClaimed({ id, via, phoneHash, recipient: ALICE, transferId, guestbookMintId: null, chainTxId, now: 200 })

    const byPhone = await tokenClaim(s)
    expect(await claim(byPhone, 'phone', 'phone-a')).toBe(false)
    expect(await store().claims.markOpened(byPhone, 'phone-a', 150)).toBe(true)
    expect(await store().claims.markOpened(byPhone, 'phone-b', 151)).toBe(false)
    expect(await claim(byPhone, 'kiosk', null)).toBe(false)
    expect(await claim(byPhone, 'phone', 'phone-b')).toBe(false)
    expect(await claim(byPhone, 'phone', 'phone-a')).toBe(true)
    expect(await claim(byPhone, 'phone', 'phone-a')).toBe(false)
    const claimed = { ...openRow(s, byPhone), step: 'claimed', phoneHash: 'phone-a', openedAt: 150, via: 'phone', recipient: ALICE, transferId, chainTxId, claimedAt: 200 }
    expect(await store().claims.get(byPhone)).toEqual(claimed)
    expect(await store().claims.findByTx(chainTxId)).toEqual(claimed)
    expect(await store().claims.findByTransfer(transferId)).toEqual(claimed)
    expect(await store().claims.findByTx(chainTxId + 100)).toBeUndefined()
    expect(await store().claims.findByTransfer(transferId + 100)).toBeUndefined()

    const atKiosk = await guestbookClaim(s)
    expect(await store().claims.markClaimed({ id: atKiosk, via: 'known', phoneHash: null, recipient: ALICE, transferId: null, guestbookMintId: 7, chainTxId, now: 210 })).toBe(true)
    expect(await store().claims.get(atKiosk)).toMatchObject({ step: 'claimed', via: 'known', guestbookMintId: 7, transferId: null, claimedAt: 210 })
    expect(await store().claims.countClaimed(s.stationId)).toBe(2)
    expect(await store().claims.countClaimed(s.stationId + 1)).toBe(0)
  })

  it('registers a 2-tap claim once, and not after it was claimed', async () => {
    const s = await seed()
    const registrationId = await store().claimRegistrations.insert({ tokenId: s.tokenId, recipient: ALICE, createdAt: 100, allowedAt: 110, expiresAt: 200 })
    const register = (id: number, via: ClaimVia, phoneHash: string | null) =>
      store().claims.markRegistered({ id, via, phoneHash, recipient: ALICE, registrationId, now: 120 })
    const id = await tokenClaim(s)
    expect(await register(id, 'phone', 'phone-a')).toBe(false)
    expect(await register(id, 'kiosk', null)).toBe(true)
    expect(await register(id, 'kiosk', null)).toBe(false)
    expect(await store().claims.get(id)).toEqual({ ...openRow(s, id), step: 'registered', via: 'kiosk', recipient: ALICE, registrationId, claimedAt: 120 })
    const opened = await tokenClaim(s)
    await store().claims.markOpened(opened, 'phone-a', 150)
    expect(await register(opened, 'phone', 'phone-a')).toBe(true)
    const chainTxId = await insertChainTx(store())
    expect(await store().claims.markClaimed({ id: opened, via: 'phone', phoneHash: 'phone-a', recipient: ALICE, transferId: null, guestbookMintId: null, chainTxId, now: 300 })).toBe(false)
  })

  it('follows a re-signed or retried transfer to its new transaction', async () => {
    const s = await seed()
    const first = await insertChainTx(store())
    const transferId = await transferOn(s, first)
    const id = await tokenClaim(s)
    await store().claims.markClaimed({ id, via: 'kiosk', phoneHash: null, recipient: ALICE, transferId, guestbookMintId: null, chainTxId: first, now: 200 })
    const second = await insertChainTx(store())
    await store().claims.setTx(id, second)
    expect(await store().claims.get(id)).toMatchObject({ transferId, guestbookMintId: null, chainTxId: second })
    const third = await insertChainTx(store())
    await store().claims.setRetried(id, { transferId: null, guestbookMintId: null, chainTxId: third })
    expect(await store().claims.get(id)).toMatchObject({ transferId, guestbookMintId: null, chainTxId: third })
    const fourth = await insertChainTx(store())
    const retried = await transferOn(s, fourth)
    await store().claims.setRetried(id, { transferId: retried, guestbookMintId: 9, chainTxId: fourth })
    expect(await store().claims.get(id)).toMatchObject({ transferId: retried, guestbookMintId: 9, chainTxId: fourth })
  })

  it('sums a station\'s claims per token and event, in order of their first claim', async () => {
    const s = await seed()
    const chainTxId = await insertChainTx(store())
    const expiredLink = await tokenClaim(s, { expiresAt: 500 })
    await store().claims.setLink(expiredLink, 'l1')
    const byPhone = await tokenClaim(s)
    await store().claims.setLink(byPhone, 'l2')
    await store().claims.markOpened(byPhone, 'p', 150)
    await store().claims.markClaimed({ id: byPhone, via: 'phone', phoneHash: 'p', recipient: ALICE, transferId: null, guestbookMintId: null, chainTxId, now: 160 })
    const atKiosk = await guestbookClaim(s)
    await store().claims.markClaimed({ id: atKiosk, via: 'kiosk', phoneHash: null, recipient: ALICE, transferId: null, guestbookMintId: 1, chainTxId, now: 170 })
    await tokenClaim(s, { expiresAt: 2_000 })
    const registrationId = await store().claimRegistrations.insert({ tokenId: s.tokenId, recipient: ALICE, createdAt: 100, allowedAt: 110, expiresAt: 200 })
    await store().claims.markRegistered({ id: await tokenClaim(s), via: 'kiosk', phoneHash: null, recipient: ALICE, registrationId, now: 180 })
    const openedExpired = await guestbookClaim(s, { expiresAt: 900 })
    await store().claims.setLink(openedExpired, 'l3')
    await store().claims.markOpened(openedExpired, 'q', 190)
    await tokenClaim(s, { stationId: await insertStation(store(), s.teamId) })

    expect(await store().claims.stats(s.stationId, 1_000)).toEqual([
      { kind: 'token', tokenId: s.tokenId, guestbookEventId: null, taps: 4, claimed: 1, registered: 1, linksShown: 2, linksOpened: 1, linksUsed: 1, linksExpired: 1, expired: 1 },
      { kind: 'guestbook', tokenId: null, guestbookEventId: s.eventId, taps: 2, claimed: 1, registered: 0, linksShown: 1, linksOpened: 1, linksUsed: 0, linksExpired: 1, expired: 1 },
    ])
    expect(await store().claims.stats(s.stationId + 100, 1_000)).toEqual([])
  })

  it(`lets the first of ${RACERS} phones open a link, and that phone claim it once`, async () => {
    const s = await seed()
    const id = await tokenClaim(s)
    await store().claims.setLink(id, 'link')
    const opened = await Promise.all(
      Array.from({ length: RACERS }, (_, i) => store().tx((tx) => tx.claims.markOpened(id, `phone-${i}`, 150 + i), { isolation: 'read committed' })),
    )
    expect(opened.filter(Boolean)).toHaveLength(1)
    const phoneHash = `phone-${opened.indexOf(true)}`
    expect((await store().claims.get(id))?.phoneHash).toBe(phoneHash)

    const registrationId = await store().claimRegistrations.insert({ tokenId: s.tokenId, recipient: ALICE, createdAt: 100, allowedAt: 110, expiresAt: 200 })
    const chainTxIds: number[] = []
    for (let i = 0; i < RACERS; i++) chainTxIds.push(await insertChainTx(store()))
    const claimed = await Promise.all(
      chainTxIds.map((chainTxId, i) =>
        store().tx(
          (tx) =>
            i % 2 === 0
              ? tx.claims.markClaimed({ id, via: 'phone', phoneHash, recipient: `0x${String(i).padStart(40, '0')}`, transferId: null, guestbookMintId: null, chainTxId, now: 300 })
              : tx.claims.markRegistered({ id, via: 'phone', phoneHash, recipient: `0x${String(i).padStart(40, '0')}`, registrationId, now: 300 }),
          { isolation: 'read committed' },
        ),
      ),
    )
    expect(claimed.filter(Boolean)).toHaveLength(1)
    const winner = claimed.indexOf(true)
    expect(await store().claims.get(id)).toMatchObject({ recipient: `0x${String(winner).padStart(40, '0')}`, step: winner % 2 === 0 ? 'claimed' : 'registered' })
  })
})
