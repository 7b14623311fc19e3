import type {
  createProvisioningRepository,
  ProvisioningRun,
  ProvisioningStep,
  SlotVersions,
} from '../provisioning.js'
import type { AsyncRepository } from '../types.js'
import type { PgQuery } from './connect.js'

type Slots = 'key0' | 'key1' | 'key2' | 'key3' | 'key4' | 'old0' | 'old1' | 'old2' | 'old3' | 'old4'

type RawRun = Omit<ProvisioningRun, 'targetVersions' | 'slotVersions' | 'keys' | 'oldKeys'> & {
  targetVersions: string
  slotVersions: string
} & Record<Slots, Buffer | null>

const columns = `id, uid, team_id, profile_id, kind, state, mode, random_id, key_version, target_versions, slot_versions,
  key0, key1, key2, key3, key4, old0, old1, old2, old3, old4, plan, failure, created_at, updated_at`

const fromRaw = ({ key0, key1, key2, key3, key4, old0, old1, old2, old3, old4, targetVersions, slotVersions, ...rest }: RawRun): ProvisioningRun => ({
  ...rest,
  targetVersions: JSON.parse(targetVersions) as SlotVersions,
  slotVersions: JSON.parse(slotVersions) as SlotVersions,
  keys: [key0, key1, key2, key3, key4],
  oldKeys: [old0, old1, old2, old3, old4],
})

export function createPgProvisioningRepository(sql: PgQuery): AsyncRepository<ReturnType<typeof createProvisioningRepository>> {
  return {
    async insert(r) {
      const [row] = await sql<{ id: number }[]>`INSERT INTO chip_provisioning
        (uid, team_id, profile_id, kind, state, mode, random_id, key_version, target_versions, slot_versions, plan, created_at, updated_at)
        VALUES (${r.uid}, ${r.teamId}, ${r.profileId}, ${r.kind}, ${r.state}, ${r.mode}, ${r.randomId}, ${r.keyVersion},
          ${JSON.stringify(r.targetVersions)}, ${JSON.stringify(r.slotVersions)}, ${r.plan}, ${r.now}, ${r.now}) RETURNING id`
      return row!.id
    },
    async setKeys(id, keys, oldKeys, now) {
      const [k0, k1, k2, k3, k4] = keys
      const [o0, o1, o2, o3, o4] = oldKeys
      await sql`UPDATE chip_provisioning SET key0 = ${k0}, key1 = ${k1}, key2 = ${k2}, key3 = ${k3}, key4 = ${k4},
        old0 = ${o0}, old1 = ${o1}, old2 = ${o2}, old3 = ${o3}, old4 = ${o4}, updated_at = ${now} WHERE id = ${id}`
    },
    async get(id) {
      const [row] = await sql<RawRun[]>`SELECT ${sql.unsafe(columns)} FROM chip_provisioning WHERE id = ${id}`
      return row && fromRaw(row)
    },
    async latest(uid) {
      const [row] = await sql<RawRun[]>`SELECT ${sql.unsafe(columns)} FROM chip_provisioning WHERE uid = ${uid} ORDER BY id DESC LIMIT 1`
      return row && fromRaw(row)
    },
    async latestProvisioned(uid) {
      const [row] = await sql<RawRun[]>`SELECT ${sql.unsafe(columns)} FROM chip_provisioning WHERE uid = ${uid} AND state = 'provisioned'
        ORDER BY id DESC LIMIT 1`
      return row && fromRaw(row)
    },
    // The newest run of every chip that hides its UID and is not back at factory.
    async randomIdRuns() {
      const rows = await sql<RawRun[]>`SELECT ${sql.unsafe(columns)} FROM chip_provisioning p
        WHERE id = (SELECT max(id) FROM chip_provisioning q WHERE q.uid = p.uid) AND random_id AND state <> 'factory' ORDER BY id`
      return rows.map(fromRaw)
    },
    async setSlotVersions(id, versions, now) {
      await sql`UPDATE chip_provisioning SET slot_versions = ${JSON.stringify(versions)}, updated_at = ${now} WHERE id = ${id}`
    },
    async setState(id, state, failure, now) {
      await sql`UPDATE chip_provisioning SET state = ${state}, failure = ${failure}, updated_at = ${now} WHERE id = ${id}`
    },
    async addStep(s) {
      await sql`INSERT INTO chip_provisioning_steps (run_id, step, sw, ms, ok, detail, at)
        VALUES (${s.runId}, ${s.step}, ${s.sw}, ${s.ms}, ${s.ok}, ${s.detail}, ${s.at})`
    },
    async steps(runId) {
      return [
        ...(await sql<ProvisioningStep[]>`SELECT run_id, step, sw, ms, ok, detail, at FROM chip_provisioning_steps WHERE run_id = ${runId} ORDER BY id`),
      ]
    },
  }
}
