import { expect, it } from 'vitest'
import type { ChipProfileRow, ChipProfileWrite } from '../../src/db/chipProfiles.js'
import type { Isolation } from '../../src/db/types.js'
import { describeStores } from '../helpers/stores.js'

describeStores('chipProfiles', ({ store }) => {
  const profile = (teamId: number, name: string, now: number, extra: Partial<ChipProfileWrite> = {}): ChipProfileWrite => ({
    teamId, name, mode: 'aes', layout: null, urlTemplate: null, keyScheme: 'static', metaKey: null, fileKey: Buffer.from([1, 2, 3]), masterKey: null, now, ...extra,
  })
  // The keyring's fingerprint, as the rows say it should read.
  const versionOf = (rows: ChipProfileRow[]) => rows.map((r) => `${r.id}:${r.updatedAt}`).join(',')

  it('stores a profile with its sealed keys as bytes and reads it by id, by name and in lists', async () => {
    const s = store()
    const teamA = await s.teams.insert({ name: 'A', redirectUrl: null, now: 1 })
    const teamB = await s.teams.insert({ name: 'B', redirectUrl: null, now: 1 })
    const meta = Buffer.from('00ff10'.repeat(20), 'hex')
    const id = await s.chipProfiles.upsert(profile(teamA, 'venue', 1_700_000_000_000, {
      mode: 'lrp', layout: 'uid-ctr', urlTemplate: 'https://t.example/?p={picc}&m={mac}', keyScheme: 'an10922', metaKey: meta, masterKey: Buffer.alloc(0),
    }))
    const other = await s.chipProfiles.upsert(profile(teamB, 'venue', 5))
    const second = await s.chipProfiles.upsert(profile(teamA, 'backstage', 6, { keyScheme: 'per_chip', fileKey: null }))
    const venue: ChipProfileRow = {
      id, teamId: teamA, name: 'venue', mode: 'lrp', layout: 'uid-ctr', urlTemplate: 'https://t.example/?p={picc}&m={mac}', keyScheme: 'an10922',
      metaKey: meta, fileKey: Buffer.from([1, 2, 3]), masterKey: Buffer.alloc(0), createdAt: 1_700_000_000_000, updatedAt: 1_700_000_000_000,
    }
    const theirs: ChipProfileRow = {
      id: other, teamId: teamB, name: 'venue', mode: 'aes', layout: null, urlTemplate: null, keyScheme: 'static', metaKey: null,
      fileKey: Buffer.from([1, 2, 3]), masterKey: null, createdAt: 5, updatedAt: 5,
    }
    const backstage: ChipProfileRow = { ...theirs, id: second, teamId: teamA, name: 'backstage', keyScheme: 'per_chip', fileKey: null, createdAt: 6, updatedAt: 6 }
    expect(await s.chipProfiles.get(id)).toEqual(venue)
    expect(Buffer.isBuffer((await s.chipProfiles.get(id))!.metaKey)).toBe(true)
    expect(await s.chipProfiles.get(999)).toBeUndefined()
    expect(await s.chipProfiles.getByName(teamA, 'venue')).toEqual(venue)
    expect(await s.chipProfiles.getByName(teamB, 'venue')).toEqual(theirs)
    expect(await s.chipProfiles.getByName(teamB, 'backstage')).toBeUndefined()
    expect(await s.chipProfiles.list()).toEqual([venue, theirs, backstage])
    expect(await s.chipProfiles.listByTeam(teamA)).toEqual([venue, backstage])
    expect(await s.chipProfiles.listByTeam(999)).toEqual([])
  })

  it('updates a profile in place on a second upsert of its name: same id, creation time kept', async () => {
    const s = store()
    const teamId = await s.teams.insert({ name: 'A', redirectUrl: null, now: 1 })
    const id = await s.chipProfiles.upsert(profile(teamId, 'venue', 10, { layout: 'old', metaKey: Buffer.from([9]) }))
    expect(await s.chipProfiles.upsert(profile(teamId, 'venue', 20, { mode: 'lrp', keyScheme: 'boltcard', urlTemplate: 'https://x/{picc}' }))).toBe(id)
    expect(await s.chipProfiles.list()).toEqual([{
      id, teamId, name: 'venue', mode: 'lrp', layout: null, urlTemplate: 'https://x/{picc}', keyScheme: 'boltcard', metaKey: null,
      fileKey: Buffer.from([1, 2, 3]), masterKey: null, createdAt: 10, updatedAt: 20,
    }])
  })

  it('fingerprints every profile as "id:updatedAt" in id order, and an edit changes it', async () => {
    const s = store()
    expect(await s.chipProfiles.version()).toBe('')
    const teamA = await s.teams.insert({ name: 'A', redirectUrl: null, now: 1 })
    const teamB = await s.teams.insert({ name: 'B', redirectUrl: null, now: 1 })
    // Twelve, over two teams: ids 10-12 sort after 9 as numbers, not as text.
    for (let i = 1; i <= 12; i++) await s.chipProfiles.upsert(profile(i % 2 ? teamA : teamB, `p${i}`, 1_700_000_000_000 + i))
    const before = await s.chipProfiles.version()
    expect(before).toBe(Array.from({ length: 12 }, (_, i) => `${i + 1}:${1_700_000_000_001 + i}`).join(','))
    expect(before).toBe(versionOf(await s.chipProfiles.list()))
    await s.chipProfiles.upsert(profile(teamB, 'p2', 1_800_000_000_000))
    const after = await s.chipProfiles.version()
    expect(after).not.toBe(before)
    expect(after).toBe(versionOf(await s.chipProfiles.list()))
  })

  for (const isolation of ['serializable', 'read committed'] as Isolation[]) {
    it(`keeps one row when 20 edits of one profile race, and the fingerprint names the edit that won (${isolation})`, async () => {
      const s = store()
      const teamId = await s.teams.insert({ name: 'A', redirectUrl: null, now: 1 })
      const ids = await Promise.all(
        Array.from({ length: 20 }, (_, i) => s.tx((tx) => tx.chipProfiles.upsert(profile(teamId, 'venue', 100 + i, { layout: `edit ${i}` })), { isolation })),
      )
      expect(new Set(ids).size).toBe(1)
      const rows = await s.chipProfiles.list()
      expect(rows).toHaveLength(1)
      // The surviving row is one whole edit, never a mix of two.
      expect(rows[0]!.layout).toBe(`edit ${rows[0]!.updatedAt - 100}`)
      expect(await s.chipProfiles.version()).toBe(versionOf(rows))
    })
  }

  it('gives a reader the fingerprint of the very profiles it lists while 20 edits land', async () => {
    const s = store()
    const teamId = await s.teams.insert({ name: 'A', redirectUrl: null, now: 1 })
    await s.chipProfiles.upsert(profile(teamId, 'p0', 1))
    // The keyring reads the fingerprint, then the profiles: in one transaction they must agree, or
    // it would cache keys under a fingerprint they do not match.
    const reads = Array.from({ length: 20 }, () =>
      s.tx(async (tx) => ({ version: await tx.chipProfiles.version(), rows: await tx.chipProfiles.list() })),
    )
    const edits = Array.from({ length: 20 }, (_, i) =>
      s.tx((tx) => tx.chipProfiles.upsert(profile(teamId, i % 2 ? 'p0' : `new ${i}`, 10 + i))),
    )
    const [seen] = await Promise.all([Promise.all(reads), Promise.all(edits)])
    for (const { version, rows } of seen) expect(version).toBe(versionOf(rows))
    expect(await s.chipProfiles.list()).toHaveLength(11)
  })
})
