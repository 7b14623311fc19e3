import { expect, it } from 'vitest'
import type { ChipRow } from '../../src/db/chips.js'
import type { Isolation } from '../../src/db/types.js'
import { describeStores } from '../helpers/stores.js'

describeStores('chips', ({ store }) => {
  const uid = '04AABBCCDDEEFF'
  const seed = async () => {
    const s = store()
    const teamId = await s.teams.insert({ name: 'Team', redirectUrl: null, now: 1 })
    const otherTeam = await s.teams.insert({ name: 'Other', redirectUrl: null, now: 1 })
    const groupId = await s.chipGroups.insert({ teamId, name: 'lobby', now: 1 })
    await s.chips.insert({ uid, teamId, groupId: null, kind: 'ntag424', redirectUrl: null, now: 1_700_000_000_000 })
    return { teamId, otherTeam, groupId }
  }
  const fresh = (teamId: number): ChipRow => ({
    uid, teamId, groupId: null, kind: 'ntag424', lastCounter: null, redirectUrl: null, createdAt: 1_700_000_000_000,
    profileId: null, randomUid: 0, fileKey: null, keyVersion: 1, counterMirror: null, wallet: null,
  })
  const shuffle = <T>(values: T[]) => values.map((v) => ({ v, k: Math.random() })).sort((a, b) => a.k - b.k).map(({ v }) => v)

  it('inserts a chip with its defaults and lists a team\'s chips by uid', async () => {
    const { teamId, otherTeam, groupId } = await seed()
    const s = store()
    await s.chips.insert({ uid: '04000000000001', teamId, groupId, kind: 'ntag21x', redirectUrl: 'https://r.example/', now: 5 })
    await s.chips.insert({ uid: '04FF0000000001', teamId: otherTeam, groupId: null, kind: 'ntag424', redirectUrl: null, now: 6 })
    expect(await s.chips.get(uid)).toEqual(fresh(teamId))
    expect(await s.chips.get('04000000000000')).toBeUndefined()
    const small: ChipRow = { ...fresh(teamId), uid: '04000000000001', groupId, kind: 'ntag21x', redirectUrl: 'https://r.example/', createdAt: 5 }
    expect(await s.chips.listByTeam(teamId)).toEqual([small, fresh(teamId)])
    expect(await s.chips.listByTeam(otherTeam)).toEqual([{ ...fresh(otherTeam), uid: '04FF0000000001', createdAt: 6 }])
    expect(await s.chips.listByTeam(999)).toEqual([])
  })

  it('updates a chip\'s group, kind and redirect URL, then sets each field on its own', async () => {
    const { teamId, groupId } = await seed()
    const s = store()
    await s.chips.insert({ uid: '04000000000001', teamId, groupId: null, kind: 'ntag424', redirectUrl: null, now: 5 })
    await s.chips.update({ uid, groupId, kind: 'ntag21x', redirectUrl: 'https://a.example/' })
    expect(await s.chips.get(uid)).toEqual({ ...fresh(teamId), groupId, kind: 'ntag21x', redirectUrl: 'https://a.example/' })
    await s.chips.setRedirectUrl(uid, null)
    expect((await s.chips.get(uid))?.redirectUrl).toBeNull()
    await s.chips.setRedirectUrl(uid, 'https://b.example/')

    const profileId = await s.chipProfiles.upsert({
      teamId, name: 'p', mode: 'aes', layout: null, urlTemplate: null, keyScheme: 'per_chip', metaKey: null, fileKey: null, masterKey: null, now: 1,
    })
    const fileKey = Buffer.from('a0'.repeat(44), 'hex')
    await s.chips.setVerification({ uid, profileId, randomUid: true, fileKey, keyVersion: 3 })
    await s.chips.setCounterMirror(uid, true)
    await s.chips.setWallet(uid, '0x00000000000000000000000000000000000000cc')
    const verified: ChipRow = {
      ...fresh(teamId), groupId, kind: 'ntag21x', redirectUrl: 'https://b.example/', profileId, randomUid: 1, fileKey, keyVersion: 3,
      counterMirror: 1, wallet: '0x00000000000000000000000000000000000000cc',
    }
    expect(await s.chips.get(uid)).toEqual(verified)
    expect(Buffer.isBuffer((await s.chips.get(uid))!.fileKey)).toBe(true)

    await s.chips.setCounterMirror(uid, false)
    expect((await s.chips.get(uid))?.counterMirror).toBe(0)
    await s.chips.setCounterMirror(uid, null)
    await s.chips.setVerification({ uid, profileId: null, randomUid: false, fileKey: null, keyVersion: 1 })
    await s.chips.setWallet(uid, null)
    expect(await s.chips.get(uid)).toEqual({ ...fresh(teamId), groupId, kind: 'ntag21x', redirectUrl: 'https://b.example/' })
    // The other chip saw none of it.
    expect(await s.chips.get('04000000000001')).toEqual({ ...fresh(teamId), uid: '04000000000001', createdAt: 5 })
  })

  it('advances the tap counter only forward; staff can set it either way', async () => {
    await seed()
    const s = store()
    expect(await s.chips.advanceCounter(uid, 0)).toBe(true)
    expect(await s.chips.advanceCounter(uid, 0)).toBe(false)
    expect(await s.chips.advanceCounter(uid, 5)).toBe(true)
    expect(await s.chips.advanceCounter(uid, 5)).toBe(false)
    expect(await s.chips.advanceCounter(uid, 4)).toBe(false)
    expect((await s.chips.get(uid))?.lastCounter).toBe(5)
    // NTAG 424's counter is 24 bits: its top value goes forward too.
    expect(await s.chips.advanceCounter(uid, 0xffffff)).toBe(true)
    expect(await s.chips.advanceCounter('04000000000000', 9)).toBe(false)
    await s.chips.setLastCounter(uid, 2)
    expect((await s.chips.get(uid))?.lastCounter).toBe(2)
    expect(await s.chips.advanceCounter(uid, 2)).toBe(false)
    expect(await s.chips.advanceCounter(uid, 3)).toBe(true)
  })

  for (const isolation of ['read committed', 'serializable'] as Isolation[]) {
    it(`accepts one of 20 taps replaying the same counter at once (${isolation})`, async () => {
      await seed()
      const s = store()
      await s.chips.advanceCounter(uid, 10)
      const outcomes = await Promise.all(Array.from({ length: 20 }, () => s.tx((tx) => tx.chips.advanceCounter(uid, 11), { isolation })))
      expect(outcomes.filter(Boolean)).toHaveLength(1)
      expect((await s.chips.get(uid))?.lastCounter).toBe(11)
    })

    it(`moves the counter strictly up while 20 taps with rising counters race, each counter accepted at most once (${isolation})`, async () => {
      await seed()
      const s = store()
      // Counters 1-10, each sent twice, in random order: a replay races its original.
      const counters = shuffle([...Array.from({ length: 10 }, (_, i) => i + 1), ...Array.from({ length: 10 }, (_, i) => i + 1)])
      const seen: number[] = []
      let racing = true
      const watch = (async () => {
        while (racing) {
          const counter = (await s.chips.get(uid))?.lastCounter
          if (counter != null) seen.push(counter)
        }
      })()
      const outcomes = await Promise.all(counters.map((c) => s.tx((tx) => tx.chips.advanceCounter(uid, c), { isolation })))
      racing = false
      await watch
      const accepted = counters.filter((_, i) => outcomes[i])
      expect(new Set(accepted).size).toBe(accepted.length)
      expect(accepted).toContain(10)
      expect((await s.chips.get(uid))?.lastCounter).toBe(10)
      // A reader never saw it go back.
      for (let i = 1; i < seen.length; i++) expect(seen[i]).toBeGreaterThanOrEqual(seen[i - 1]!)
    })
  }
})
