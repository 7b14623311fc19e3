import { expect, it } from 'vitest'
import type { NewProvisioningRun, ProvisioningRun, SealedSlots } from '../../src/db/provisioning.js'
import { describeStores } from '../helpers/stores.js'

describeStores('provisioning', ({ store }) => {
  const seed = () => store().teams.insert({ name: 'Team', redirectUrl: null, now: 1 })
  const none: SealedSlots = [null, null, null, null, null]
  const newRun = (teamId: number, over: Partial<NewProvisioningRun> = {}): NewProvisioningRun => ({
    uid: '04AABBCCDDEEFF', teamId, profileId: null, kind: 'provision', state: 'pending', mode: 'aes', randomId: false, keyVersion: 1,
    targetVersions: [1, 1, 1, 1, 1], slotVersions: [0, 0, 0, 0, 0], plan: '{"steps":[]}', now: 1_700_000_000_000, ...over,
  })
  const stored = (id: number, r: NewProvisioningRun, over: Partial<ProvisioningRun> = {}): ProvisioningRun => {
    const { now, ...rest } = r
    return { ...rest, id, keys: none, oldKeys: none, failure: null, createdAt: now, updatedAt: now, ...over }
  }

  it('journals a run, its sealed keys (bytes, nulls kept), slot versions and state', async () => {
    const teamId = await seed()
    const r = newRun(teamId, { randomId: true, mode: 'lrp' })
    const id = await store().provisioning.insert(r)
    expect(await store().provisioning.get(id)).toEqual(stored(id, r))
    expect(await store().provisioning.get(id + 100)).toBeUndefined()
    const keys: SealedSlots = [Buffer.from([0, 1, 2, 255]), null, Buffer.alloc(0), Buffer.from('k3'), Buffer.from('k4')]
    const oldKeys: SealedSlots = [null, Buffer.from([9]), null, null, Buffer.from([0xde, 0xad])]
    await store().provisioning.setKeys(id, keys, oldKeys, 2)
    await store().provisioning.setSlotVersions(id, [1, 1, 0, 0, 0], 3)
    await store().provisioning.setState(id, 'failed', 'tag lost at slot 2', 4)
    const row = await store().provisioning.get(id)
    expect(row).toEqual(stored(id, r, { keys, oldKeys, slotVersions: [1, 1, 0, 0, 0], state: 'failed', failure: 'tag lost at slot 2', updatedAt: 4 }))
    expect(Buffer.isBuffer(row!.keys[0])).toBe(true)
    await store().provisioning.setState(id, 'provisioned', null, 5)
    expect(await store().provisioning.get(id)).toMatchObject({ state: 'provisioned', failure: null, updatedAt: 5 })
  })

  it('finds the newest run of a chip, the newest provisioned one, and the Random ID candidates', async () => {
    const teamId = await seed()
    const a = await store().provisioning.insert(newRun(teamId, { randomId: true }))
    await store().provisioning.setState(a, 'provisioned', null, 2)
    const b = await store().provisioning.insert(newRun(teamId, { kind: 'reset', state: 'resetting', randomId: true }))
    const other = newRun(teamId, { uid: '04BBCCDDEEFF00', randomId: true })
    const c = await store().provisioning.insert(other)
    await store().provisioning.insert(newRun(teamId, { uid: '04CCDDEEFF0011', randomId: false }))
    const e = await store().provisioning.insert(newRun(teamId, { uid: '04DDEEFF001122', randomId: true }))
    await store().provisioning.setState(e, 'factory', null, 3)
    expect((await store().provisioning.latest('04AABBCCDDEEFF'))?.id).toBe(b)
    expect((await store().provisioning.latestProvisioned('04AABBCCDDEEFF'))?.id).toBe(a)
    expect(await store().provisioning.latestProvisioned('04BBCCDDEEFF00')).toBeUndefined()
    expect(await store().provisioning.latest('04EEEEEEEEEEEE')).toBeUndefined()
    // The newest run of each chip, Random ID, not back at factory: a's chip by b, and c.
    const runs = await store().provisioning.randomIdRuns()
    expect(runs.map((run) => run.id)).toEqual([b, c])
    expect(runs[1]).toEqual(stored(c, other))
  })

  it('logs the steps of a run in order', async () => {
    const teamId = await seed()
    const id = await store().provisioning.insert(newRun(teamId))
    const s1 = { runId: id, step: 'auth slot 0', sw: '9100', ms: 12, ok: true, detail: null, at: 10 }
    const s2 = { runId: id, step: 'change key 1', sw: '91AE', ms: 30, ok: false, detail: 'authentication error', at: 11 }
    const s3 = { runId: id, step: 'read uid', sw: null, ms: 0, ok: true, detail: 'skipped', at: 12 }
    for (const s of [s1, s2, s3]) await store().provisioning.addStep(s)
    expect(await store().provisioning.steps(id)).toEqual([s1, s2, s3])
    expect(await store().provisioning.steps(id + 1)).toEqual([])
  })
})
