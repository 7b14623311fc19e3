import type { Db } from './sqlite/openDatabase.js'

export type ProvisioningState = 'pending' | 'provisioned' | 'resetting' | 'factory' | 'failed'
export type ProvisioningKind = 'provision' | 'reset'

/** Five sealed blobs, slot 0–4; null where the target is the zero (factory) key. */
export type SealedSlots = [Buffer | null, Buffer | null, Buffer | null, Buffer | null, Buffer | null]
export type SlotVersions = [number, number, number, number, number]

export type ProvisioningRun = {
  id: number
  uid: string
  teamId: number
  profileId: number | null
  kind: ProvisioningKind
  state: ProvisioningState
  mode: 'aes' | 'lrp'
  randomId: boolean
  keyVersion: number
  targetVersions: SlotVersions
  slotVersions: SlotVersions
  keys: SealedSlots
  oldKeys: SealedSlots
  /** The printable plan (JSON), never key bytes. */
  plan: string
  failure: string | null
  createdAt: number
  updatedAt: number
}

export type ProvisioningStep = { runId: number; step: string; sw: string | null; ms: number; ok: boolean; detail: string | null; at: number }

type RawRun = Omit<ProvisioningRun, 'randomId' | 'targetVersions' | 'slotVersions' | 'keys' | 'oldKeys'> & {
  randomId: number
  targetVersions: string
  slotVersions: string
} & Record<'key0' | 'key1' | 'key2' | 'key3' | 'key4' | 'old0' | 'old1' | 'old2' | 'old3' | 'old4', Buffer | null>

const columns = `id, uid, team_id AS teamId, profile_id AS profileId, kind, state, mode, random_id AS randomId,
  key_version AS keyVersion, target_versions AS targetVersions, slot_versions AS slotVersions,
  key0, key1, key2, key3, key4, old0, old1, old2, old3, old4, plan, failure, created_at AS createdAt, updated_at AS updatedAt`

function fromRaw(r: RawRun): ProvisioningRun {
  return {
    id: r.id,
    uid: r.uid,
    teamId: r.teamId,
    profileId: r.profileId,
    kind: r.kind,
    state: r.state,
    mode: r.mode,
    randomId: r.randomId === 1,
    keyVersion: r.keyVersion,
    targetVersions: JSON.parse(r.targetVersions) as SlotVersions,
    slotVersions: JSON.parse(r.slotVersions) as SlotVersions,
    keys: [r.key0, r.key1, r.key2, r.key3, r.key4],
    oldKeys: [r.old0, r.old1, r.old2, r.old3, r.old4],
    plan: r.plan,
    failure: r.failure,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  }
}

export type NewProvisioningRun = Omit<ProvisioningRun, 'id' | 'createdAt' | 'updatedAt' | 'failure' | 'keys' | 'oldKeys'> & { now: number }

/**
 * The provisioning journal (migration 009). A run is inserted without keys, so
 * its id can bind the sealing context, then sealed keys are stored with
 * {@link setKeys} in the same transaction: the caller commits before any ChangeKey.
 */
export function createProvisioningRepository(db: Db) {
  const insert = db.prepare<Record<string, unknown>, { id: number }>(
    `INSERT INTO chip_provisioning (uid, team_id, profile_id, kind, state, mode, random_id, key_version, target_versions, slot_versions, plan, created_at, updated_at)
     VALUES (@uid, @teamId, @profileId, @kind, @state, @mode, @randomId, @keyVersion, @targetVersions, @slotVersions, @plan, @now, @now) RETURNING id`,
  )
  const setKeys = db.prepare(
    `UPDATE chip_provisioning SET key0 = @key0, key1 = @key1, key2 = @key2, key3 = @key3, key4 = @key4,
       old0 = @old0, old1 = @old1, old2 = @old2, old3 = @old3, old4 = @old4, updated_at = @now WHERE id = @id`,
  )
  const byId = db.prepare<[number], RawRun>(`SELECT ${columns} FROM chip_provisioning WHERE id = ?`)
  const latest = db.prepare<[string], RawRun>(`SELECT ${columns} FROM chip_provisioning WHERE uid = ? ORDER BY id DESC LIMIT 1`)
  const latestDone = db.prepare<[string], RawRun>(
    `SELECT ${columns} FROM chip_provisioning WHERE uid = ? AND state = 'provisioned' ORDER BY id DESC LIMIT 1`,
  )
  // The newest run of every chip that hides its UID and is not back at factory.
  const randomIdRuns = db.prepare<[], RawRun>(
    `SELECT ${columns} FROM chip_provisioning p WHERE id = (SELECT max(id) FROM chip_provisioning q WHERE q.uid = p.uid)
       AND random_id = 1 AND state != 'factory' ORDER BY id`,
  )
  const setSlot = db.prepare<[string, number, number]>(`UPDATE chip_provisioning SET slot_versions = ?, updated_at = ? WHERE id = ?`)
  const setState = db.prepare<[string, string | null, number, number]>(`UPDATE chip_provisioning SET state = ?, failure = ?, updated_at = ? WHERE id = ?`)
  const addStep = db.prepare(
    `INSERT INTO chip_provisioning_steps (run_id, step, sw, ms, ok, detail, at) VALUES (@runId, @step, @sw, @ms, @ok, @detail, @at)`,
  )
  const steps = db.prepare<[number], Omit<ProvisioningStep, 'ok'> & { ok: number }>(
    `SELECT run_id AS runId, step, sw, ms, ok, detail, at FROM chip_provisioning_steps WHERE run_id = ? ORDER BY id`,
  )
  return {
    insert: (r: NewProvisioningRun): number =>
      insert.get({
        ...r,
        randomId: r.randomId ? 1 : 0,
        targetVersions: JSON.stringify(r.targetVersions),
        slotVersions: JSON.stringify(r.slotVersions),
      })!.id,
    setKeys: (id: number, keys: SealedSlots, oldKeys: SealedSlots, now: number) =>
      setKeys.run({
        id,
        now,
        ...Object.fromEntries(keys.map((k, i) => [`key${i}`, k])),
        ...Object.fromEntries(oldKeys.map((k, i) => [`old${i}`, k])),
      }),
    get: (id: number) => {
      const r = byId.get(id)
      return r && fromRaw(r)
    },
    /** The newest run of a chip, whatever its state. */
    latest: (uid: string) => {
      const r = latest.get(uid)
      return r && fromRaw(r)
    },
    /** The newest completed provisioning of a chip: the keys it holds unless a later run moved them. */
    latestProvisioned: (uid: string) => {
      const r = latestDone.get(uid)
      return r && fromRaw(r)
    },
    /** The newest run of each chip switched to Random ID (the candidates for a chip that hides its UID). */
    randomIdRuns: () => randomIdRuns.all().map(fromRaw),
    setSlotVersions: (id: number, versions: SlotVersions, now: number) => setSlot.run(JSON.stringify(versions), now, id),
    setState: (id: number, state: ProvisioningState, failure: string | null, now: number) => setState.run(state, failure, now, id),
    addStep: (s: ProvisioningStep) => addStep.run({ ...s, ok: s.ok ? 1 : 0 }),
    steps: (runId: number): ProvisioningStep[] => steps.all(runId).map((s) => ({ ...s, ok: s.ok === 1 })),
  }
}
