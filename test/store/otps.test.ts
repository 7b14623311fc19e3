import { expect, it } from 'vitest'
import type { OtpDetailRow, OtpInsert } from '../../src/db/otps.js'
import type { Isolation } from '../../src/db/types.js'
import { describeStores } from '../helpers/stores.js'

describeStores('otps', ({ store }) => {
  const uid = '04AABBCCDDEEFF'
  const seed = async () => {
    const s = store()
    const teamId = await s.teams.insert({ name: 'Team', redirectUrl: null, now: 1 })
    const otherTeam = await s.teams.insert({ name: 'Other', redirectUrl: null, now: 1 })
    await s.chips.insert({ uid, teamId, groupId: null, kind: 'ntag424', redirectUrl: null, now: 1 })
    await s.refs.insert({ id: 'ref1', chipUid: uid, teamId, source: 'phone', authenticated: true, linksModule: false, counter: 3, now: 2 })
    return { teamId, otherTeam }
  }
  const otp = (teamId: number, code: string, extra: Partial<OtpInsert> = {}): OtpInsert => ({
    code, teamId, refId: 'ref1', chipUid: uid, type: 'PHYGITAL_CLAIM', tokenId: null, proofEventId: null, guestbookEventId: null,
    createdAt: 1_700_000_000_000, expiresAt: 1_700_000_600_000, tokenMoves: null, ...extra,
  })
  const noTarget = {
    tokenMovesNow: null, tokenChainId: null, tokenContract: null, tokenTokenId: null, proofId: null, proofEventId: null, proofStatus: null,
    eventId: null, eventName: null, eventTokenId: null, eventCreatedAt: null, eventChainId: null, eventContract: null,
  }

  it('stores an OTP and returns its whole row', async () => {
    const { teamId } = await seed()
    const s = store()
    await s.otps.insert(otp(teamId, 'ABC123', { tokenMoves: 4 }))
    expect(await s.otps.get('ABC123')).toEqual({ ...otp(teamId, 'ABC123', { tokenMoves: 4 }), usedAt: null, usedFor: null })
    expect(await s.otps.get('nope')).toBeUndefined()
    expect(await s.otps.getDetail('nope')).toBeUndefined()
  })

  it('details an OTP with what it targets: its token, its chip\'s token, a proof event or a guestbook event', async () => {
    const { teamId } = await seed()
    const s = store()
    const token = { teamId, chainId: 31337, contractAddress: '0x00000000000000000000000000000000000000aa', metadata: null, twoTapClaim: false, claimDelaySeconds: 0, claimWindowSeconds: 60, now: 3 }
    const own = await s.tokens.insert({ ...token, tokenId: '7' })
    const chips = await s.tokens.insert({ ...token, tokenId: '8' })
    await s.tokens.linkChip(chips, uid, 4)
    await s.tokens.addMove(own)
    await s.tokens.addMove(chips)
    await s.tokens.addMove(chips)
    const proof = await s.proofEvents.upsert({ teamId, proofEventId: 190_000, name: 'Meetup', status: 'active', now: 5 })
    const contract = await s.guestbook.insertContract({ teamId, name: 'Book', symbol: 'BK', chainId: 31337, address: '0x00000000000000000000000000000000000000bb', now: 6 })
    const event = await s.guestbook.insertEvent({ teamId, contractId: contract, name: 'Dinner', tokenId: '12', metadata: '{}', now: 1_700_000_000_777 })

    await s.otps.insert(otp(teamId, 'TOKEN', { tokenId: own, tokenMoves: 1 }))
    await s.otps.insert(otp(teamId, 'CHIP', { createdAt: 10, expiresAt: 20 }))
    await s.otps.insert(otp(teamId, 'PROOF', { type: 'PROOF_EVENT', proofEventId: proof }))
    await s.otps.insert(otp(teamId, 'GUEST', { type: 'GUESTBOOK_EVENT', guestbookEventId: event }))
    await s.otps.markUsed('PROOF', 'mint', 99)

    const base = (code: string): Pick<OtpDetailRow, 'code' | 'type' | 'createdAt' | 'expiresAt' | 'usedAt' | 'tokenMoves'> => ({
      code, type: 'PHYGITAL_CLAIM', createdAt: 1_700_000_000_000, expiresAt: 1_700_000_600_000, usedAt: null, tokenMoves: null,
    })
    expect(await s.otps.getDetail('TOKEN')).toEqual({
      ...noTarget, ...base('TOKEN'), tokenMoves: 1, tokenMovesNow: 1, tokenChainId: 31337, tokenContract: token.contractAddress, tokenTokenId: '7',
    })
    // No token of its own: the chip's token now gives the moves, nothing else.
    expect(await s.otps.getDetail('CHIP')).toEqual({ ...noTarget, ...base('CHIP'), createdAt: 10, expiresAt: 20, tokenMovesNow: 2 })
    expect(await s.otps.getDetail('PROOF')).toEqual({
      ...noTarget, ...base('PROOF'), type: 'PROOF_EVENT', usedAt: 99, proofId: proof, proofEventId: 190_000, proofStatus: 'active',
    })
    // Not a claim: the chip's token is not looked at.
    expect(await s.otps.getDetail('GUEST')).toEqual({
      ...noTarget, ...base('GUEST'), type: 'GUESTBOOK_EVENT', eventId: event, eventName: 'Dinner', eventTokenId: '12',
      eventCreatedAt: 1_700_000_000_777, eventChainId: 31337, eventContract: '0x00000000000000000000000000000000000000bb',
    })
  })

  it('uses a code once, gives it back once, binds it to the token\'s moves and deletes it for its own team only', async () => {
    const { teamId, otherTeam } = await seed()
    const s = store()
    await s.otps.insert(otp(teamId, 'ABC123'))
    expect(await s.otps.release('ABC123')).toBe(false)
    expect(await s.otps.markUsed('ABC123', 'claim', 50)).toBe(true)
    expect(await s.otps.markUsed('ABC123', 'other', 60)).toBe(false)
    expect(await s.otps.get('ABC123')).toMatchObject({ usedAt: 50, usedFor: 'claim', expiresAt: 1_700_000_600_000 })
    expect(await s.otps.release('ABC123')).toBe(true)
    expect(await s.otps.release('ABC123')).toBe(false)
    expect(await s.otps.get('ABC123')).toMatchObject({ usedAt: null, usedFor: null, expiresAt: 1_700_000_600_000 })
    expect(await s.otps.markUsed('ABC123', 'retry', 70)).toBe(true)
    expect(await s.otps.markUsed('nope', 'claim', 70)).toBe(false)

    await s.otps.bindToMoves('ABC123', 3)
    await s.otps.bindToMoves('nope', 3)
    expect(await s.otps.get('ABC123')).toEqual({ ...otp(teamId, 'ABC123'), tokenMoves: 3, usedAt: 70, usedFor: 'retry' })

    expect(await s.otps.delete('ABC123', otherTeam)).toBe(false)
    expect(await s.otps.get('ABC123')).toBeDefined()
    expect(await s.otps.delete('ABC123', teamId)).toBe(true)
    expect(await s.otps.delete('ABC123', teamId)).toBe(false)
    expect(await s.otps.get('ABC123')).toBeUndefined()
  })

  for (const isolation of ['read committed', 'serializable'] as Isolation[]) {
    it(`lets one of 20 racers use a code, and one again after it is given back (${isolation})`, async () => {
      const { teamId } = await seed()
      const s = store()
      await s.otps.insert(otp(teamId, 'RACE'))
      const race = (round: string) =>
        Promise.all(Array.from({ length: 20 }, (_, i) => s.tx((tx) => tx.otps.markUsed('RACE', `${round} ${i}`, 100 + i), { isolation })))
      const first = await race('first')
      expect(first.filter(Boolean)).toHaveLength(1)
      const winner = first.indexOf(true)
      expect(await s.otps.get('RACE')).toMatchObject({ usedAt: 100 + winner, usedFor: `first ${winner}` })

      const released = await Promise.all(Array.from({ length: 20 }, () => s.tx((tx) => tx.otps.release('RACE'), { isolation })))
      expect(released.filter(Boolean)).toHaveLength(1)
      const second = await race('second')
      expect(second.filter(Boolean)).toHaveLength(1)
      expect(await s.otps.get('RACE')).toMatchObject({ usedFor: `second ${second.indexOf(true)}` })
    })
  }
})
