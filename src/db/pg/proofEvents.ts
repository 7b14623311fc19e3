import type { createProofEventsRepository, ProofEventRow } from '../proofEvents.js'
import type { AsyncRepository } from '../types.js'
import type { PgQuery } from './connect.js'

const columns = 'e.id, e.team_id, e.proof_event_id, e.name, e.status, e.created_at, e.guestbook_event_id'

export function createPgProofEventsRepository(sql: PgQuery): AsyncRepository<ReturnType<typeof createProofEventsRepository>> {
  return {
    async upsert(e) {
      const [row] = await sql<{ id: number }[]>`INSERT INTO proof_events (team_id, proof_event_id, name, status, created_at)
        VALUES (${e.teamId}, ${e.proofEventId}, ${e.name}, ${e.status}, ${e.now})
        ON CONFLICT (team_id, proof_event_id) DO UPDATE SET name = excluded.name, status = excluded.status
        RETURNING id`
      return row!.id
    },
    async linkChip(eventId, uid) {
      await sql`INSERT INTO proof_event_chips (event_id, chip_uid) VALUES (${eventId}, ${uid}) ON CONFLICT DO NOTHING`
    },
    async listByChip(uid) {
      return [...(await sql<ProofEventRow[]>`SELECT ${sql.unsafe(columns)} FROM proof_events e JOIN proof_event_chips c ON c.event_id = e.id
        WHERE c.chip_uid = ${uid} ORDER BY e.id`)]
    },
    async get(id) {
      const [row] = await sql<ProofEventRow[]>`SELECT ${sql.unsafe(columns)} FROM proof_events e WHERE e.id = ${id}`
      return row
    },
    async setGuestbookEvent(id, guestbookEventId) {
      const rows = await sql`UPDATE proof_events SET guestbook_event_id = ${guestbookEventId} WHERE id = ${id} AND guestbook_event_id IS NULL`
      return rows.count === 1
    },
    async contractOf(teamId, chainId) {
      const [row] = await sql<{ contractId: number }[]>`SELECT contract_id FROM proof_event_contracts WHERE team_id = ${teamId} AND chain_id = ${chainId}`
      return row?.contractId
    },
    async setContract(teamId, chainId, contractId) {
      await sql`INSERT INTO proof_event_contracts (team_id, chain_id, contract_id) VALUES (${teamId}, ${chainId}, ${contractId})`
    },
  }
}
