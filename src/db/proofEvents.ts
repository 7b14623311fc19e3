import type { Db } from './sqlite/openDatabase.js'

export const proofEventStatuses = ['pending-approval', 'future', 'active', 'expired', 'rejected'] as const
export type ProofEventStatus = (typeof proofEventStatuses)[number]

export type ProofEventRow = {
  id: number
  teamId: number
  proofEventId: number
  name: string
  status: ProofEventStatus
  createdAt: number
}

const columns = `e.id, e.team_id AS teamId, e.proof_event_id AS proofEventId, e.name, e.status, e.created_at AS createdAt`

export function createProofEventsRepository(db: Db) {
  const upsert = db.prepare<[number, number, string, ProofEventStatus, number], { id: number }>(
    `INSERT INTO proof_events (team_id, proof_event_id, name, status, created_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (team_id, proof_event_id) DO UPDATE SET name = excluded.name, status = excluded.status
     RETURNING id`,
  )
  const link = db.prepare<[number, string]>(
    'INSERT INTO proof_event_chips (event_id, chip_uid) VALUES (?, ?) ON CONFLICT DO NOTHING',
  )
  const byChip = db.prepare<[string], ProofEventRow>(
    `SELECT ${columns} FROM proof_events e JOIN proof_event_chips c ON c.event_id = e.id WHERE c.chip_uid = ? ORDER BY e.id`,
  )
  const byId = db.prepare<[number], ProofEventRow>(`SELECT ${columns} FROM proof_events e WHERE e.id = ?`)
  return {
    upsert: (e: { teamId: number; proofEventId: number; name: string; status: ProofEventStatus; now: number }) =>
      upsert.get(e.teamId, e.proofEventId, e.name, e.status, e.now)!.id,
    linkChip: (eventId: number, uid: string) => link.run(eventId, uid),
    listByChip: (uid: string) => byChip.all(uid),
    get: (id: number) => byId.get(id),
  }
}
