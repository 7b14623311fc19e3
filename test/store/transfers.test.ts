import { expect, it } from 'vitest'
import { isUniqueViolation } from '../../src/db/storeErrors.js'
import type { TransferRow } from '../../src/db/transfers.js'
import { describeStores } from '../helpers/stores.js'
import { insertChainTx, insertTeam, insertToken } from './seedRows.js'

const RACERS = 20
const ALICE = '0x00000000000000000000000000000000000a11ce'
const CHIP = '04C1000000000A'

describeStores('transfers', ({ store }) => {
  const seed = async () => {
    const teamId = await insertTeam(store(), [CHIP])
    const tokenId = await insertToken(store(), teamId, '1')
    const otherTokenId = await insertToken(store(), teamId, '2')
    const contractId = await store().guestbook.insertContract({ teamId, name: 'Book', symbol: 'GB', chainId: 31337, address: '0x00000000000000000000000000000000000000d2', now: 1 })
    const eventId = await store().guestbook.insertEvent({ teamId, contractId, name: 'Day', tokenId: '1', metadata: '{}', now: 1 })
    return { teamId, tokenId, otherTokenId, eventId }
  }
  const transfer = (t: { teamId: number; tokenId: number; chainTxId: number }, over: Partial<Omit<TransferRow, 'id' | 'resigned'>> = {}) =>
    store().transfers.insert({ ...t, recipient: ALICE, method: 'mintNFT', via: 'api_key', otpCode: null, claimRegistrationId: null, createdAt: 100, knownOutsideMoves: null, ...over })

  it('stores a transfer and finds it by id and transaction; a re-signing points it at the new transaction', async () => {
    const { teamId, tokenId } = await seed()
    const registrationId = await store().claimRegistrations.insert({ tokenId, recipient: ALICE, createdAt: 1, allowedAt: 2, expiresAt: 3 })
    const chainTxId = await insertChainTx(store())
    const id = await transfer({ teamId, tokenId, chainTxId }, { method: 'claimNFT', via: 'self_service', claimRegistrationId: registrationId })
    const row = { id, tokenId, teamId, recipient: ALICE, method: 'claimNFT', via: 'self_service', otpCode: null, claimRegistrationId: registrationId, chainTxId, resigned: 0, createdAt: 100, knownOutsideMoves: null }
    expect(await store().transfers.get(id)).toEqual(row)
    expect(await store().transfers.findByTx(chainTxId)).toEqual(row)
    expect(await store().transfers.get(id + 100)).toBeUndefined()
    const next = await insertChainTx(store())
    await store().transfers.resign(id, next, 'mintNFT')
    await store().transfers.resign(id, next, 'mintNFT')
    expect(await store().transfers.get(id)).toEqual({ ...row, chainTxId: next, method: 'mintNFT', resigned: 2 })
    expect(await store().transfers.findByTx(chainTxId)).toBeUndefined()
  })

  it('counts a token\'s pending and landed transfers (a reverted one is neither) and sees later ones', async () => {
    const { teamId, tokenId, otherTokenId } = await seed()
    const queued = await transfer({ teamId, tokenId, chainTxId: await insertChainTx(store()) })
    await transfer({ teamId, tokenId, chainTxId: await insertChainTx(store(), { status: 'sent' }) })
    await transfer({ teamId, tokenId, chainTxId: await insertChainTx(store(), { status: 'mined', reverted: false }) })
    await transfer({ teamId, tokenId, chainTxId: await insertChainTx(store(), { status: 'mined', reverted: true }) })
    const last = await transfer({ teamId, tokenId: otherTokenId, chainTxId: await insertChainTx(store(), { status: 'mined', reverted: false }) })
    expect(await store().transfers.countPendingOfToken(tokenId)).toBe(2)
    expect(await store().transfers.countLandedOfToken(tokenId)).toBe(1)
    expect(await store().transfers.countPendingOfToken(otherTokenId)).toBe(0)
    expect(await store().transfers.countLandedOfToken(otherTokenId)).toBe(1)
    expect(await store().transfers.hasLaterOfToken(tokenId, queued)).toBe(true)
    expect(await store().transfers.hasLaterOfToken(otherTokenId, last)).toBe(false)
  })

  it('records guestbook mints by chip and recipient, and forgets a reverted one with the OTP it spent', async () => {
    const { eventId } = await seed()
    const chainTxId = await insertChainTx(store())
    expect(await store().transfers.guestbookMintedByChip(eventId, CHIP)).toBe(false)
    expect(await store().transfers.guestbookMintOfChip(eventId, CHIP)).toBeUndefined()
    const id = await store().transfers.insertGuestbookMint({ eventId, recipient: ALICE, chipUid: CHIP, otpCode: 'OTP-1', chainTxId, createdAt: 5 })
    expect(await store().transfers.guestbookMintedByChip(eventId, CHIP)).toBe(true)
    expect(await store().transfers.guestbookMintOfChip(eventId, CHIP)).toEqual({ id, chainTxId })
    expect(await store().transfers.guestbookMintedTo(eventId, ALICE)).toBe(true)
    expect(await store().transfers.guestbookMintedTo(eventId, '0x0')).toBe(false)
    expect(await store().transfers.forgetGuestbookMint(chainTxId)).toEqual({ otpCode: 'OTP-1' })
    expect(await store().transfers.forgetGuestbookMint(chainTxId)).toBeUndefined()
    expect(await store().transfers.guestbookMintedByChip(eventId, CHIP)).toBe(false)
    expect(await store().transfers.guestbookMintedTo(eventId, ALICE)).toBe(false)
    // Forgotten, the recipient may mint again.
    const again = await insertChainTx(store())
    await store().transfers.insertGuestbookMint({ eventId, recipient: ALICE, chipUid: null, otpCode: null, chainTxId: again, createdAt: 6 })
    expect(await store().transfers.guestbookMintedTo(eventId, ALICE)).toBe(true)
    expect(await store().transfers.guestbookMintedByChip(eventId, CHIP)).toBe(false)
  })

  const raceMints = async (eventId: number, mint: (i: number) => { recipient: string; chipUid: string | null }) => {
    const chainTxIds: number[] = []
    for (let i = 0; i < RACERS; i++) chainTxIds.push(await insertChainTx(store()))
    return Promise.allSettled(
      chainTxIds.map((chainTxId, i) =>
        store().tx((tx) => tx.transfers.insertGuestbookMint({ eventId, ...mint(i), otpCode: null, chainTxId, createdAt: 7 })),
      ),
    )
  }

  it(`mints once per recipient of an event when ${RACERS} mints race`, async () => {
    const { eventId } = await seed()
    const outcomes = await raceMints(eventId, () => ({ recipient: ALICE, chipUid: null }))
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1)
    const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason] : []))
    expect(refused).toHaveLength(RACERS - 1)
    expect(refused.every(isUniqueViolation)).toBe(true)
  })

  it(`mints once per chip of an event when ${RACERS} mints to different recipients race`, async () => {
    const { eventId } = await seed()
    const outcomes = await raceMints(eventId, (i) => ({ recipient: `0x${String(i).padStart(40, '0')}`, chipUid: CHIP }))
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1)
    expect(outcomes.every((o) => o.status === 'fulfilled' || isUniqueViolation(o.reason))).toBe(true)
  })
})
