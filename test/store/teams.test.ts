import { expect, it } from 'vitest'
import { isUniqueViolation } from '../../src/db/storeErrors.js'
import { describeStores } from '../helpers/stores.js'

describeStores('teams', ({ store }) => {
  it('inserts teams and reads them by id, by name and in id order', async () => {
    const s = store()
    const acme = await s.teams.insert({ name: 'Acme', redirectUrl: 'https://acme.example/', now: 1_700_000_000_000 })
    const beta = await s.teams.insert({ name: 'Beta', redirectUrl: null, now: 2 })
    expect([acme, beta]).toEqual([1, 2])
    const acmeRow = { id: acme, name: 'Acme', redirectUrl: 'https://acme.example/', createdAt: 1_700_000_000_000 }
    const betaRow = { id: beta, name: 'Beta', redirectUrl: null, createdAt: 2 }
    expect(await s.teams.get(acme)).toEqual(acmeRow)
    expect(await s.teams.get(999)).toBeUndefined()
    expect(await s.teams.getByName('Beta')).toEqual(betaRow)
    // Names are exact: no case folding on either engine.
    expect(await s.teams.getByName('beta')).toBeUndefined()
    expect(await s.teams.list()).toEqual([acmeRow, betaRow])
  })

  it('sets and clears a team\'s redirect URL, touching only that team', async () => {
    const s = store()
    const acme = await s.teams.insert({ name: 'Acme', redirectUrl: null, now: 1 })
    const beta = await s.teams.insert({ name: 'Beta', redirectUrl: 'https://beta.example/', now: 1 })
    await s.teams.setRedirectUrl(acme, 'https://acme.example/tap')
    expect(await s.teams.get(acme)).toEqual({ id: acme, name: 'Acme', redirectUrl: 'https://acme.example/tap', createdAt: 1 })
    await s.teams.setRedirectUrl(beta, null)
    await s.teams.setRedirectUrl(999, 'https://nowhere.example/')
    expect(await s.teams.list()).toEqual([
      { id: acme, name: 'Acme', redirectUrl: 'https://acme.example/tap', createdAt: 1 },
      { id: beta, name: 'Beta', redirectUrl: null, createdAt: 1 },
    ])
  })

  it('refuses a second team of the same name, also when 20 creations race, and keeps the first', async () => {
    const s = store()
    await s.teams.insert({ name: 'Acme', redirectUrl: null, now: 1 })
    expect(isUniqueViolation(await s.teams.insert({ name: 'Acme', redirectUrl: null, now: 2 }).catch((e: unknown) => e))).toBe(true)

    const outcomes = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => s.tx((tx) => tx.teams.insert({ name: 'Zeta', redirectUrl: null, now: 10 + i }))))
    const created = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []))
    expect(created).toHaveLength(1)
    for (const o of outcomes) if (o.status === 'rejected') expect(isUniqueViolation(o.reason)).toBe(true)
    const zeta = await s.teams.getByName('Zeta')
    expect(zeta?.id).toBe(created[0])
    expect(zeta?.createdAt).toBe(10 + outcomes.findIndex((o) => o.status === 'fulfilled'))
    expect((await s.teams.list()).map((t) => t.name)).toEqual(['Acme', 'Zeta'])
  })
})
