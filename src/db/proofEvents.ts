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
  /** Migration 019: the guestbook event its attendance tokens are minted as, from the first mint on. */
  guestbookEventId: number | null
}

const columns = `e.id, e.team_id AS teamId, e.proof_event_id AS proofEventId, e.name, e.status, e.created_at AS createdAt,
  e.guestbook_event_id AS guestbookEventId`

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
  const setGuestbookEvent = db.prepare<[number, number]>('UPDATE proof_events SET guestbook_event_id = ? WHERE id = ? AND guestbook_event_id IS NULL')
  const contractOf = db.prepare<[number, number], { contractId: number }>(
    'SELECT contract_id AS contractId FROM proof_event_contracts WHERE team_id = ? AND chain_id = ?',
  )
  const insertContract = db.prepare<[number, number, number]>('INSERT INTO proof_event_contracts (team_id, chain_id, contract_id) VALUES (?, ?, ?)')
  return {
    upsert: (e: { teamId: number; proofEventId: number; name: string; status: ProofEventStatus; now: number }) =>
      upsert.get(e.teamId, e.proofEventId, e.name, e.status, e.now)!.id,
    linkChip: (eventId: number, uid: string) => link.run(eventId, uid),
    listByChip: (uid: string) => byChip.all(uid),
    get: (id: number) => byId.get(id),
    /** @returns false when the event already had one (a concurrent first mint set it) */
    setGuestbookEvent: (id: number, guestbookEventId: number) => setGuestbookEvent.run(guestbookEventId, id).changes === 1,
    /** The guestbook the team's proof events are minted on, on one chain. */
    contractOf: (teamId: number, chainId: number) => contractOf.get(teamId, chainId)?.contractId,
    setContract: (teamId: number, chainId: number, contractId: number) => void insertContract.run(teamId, chainId, contractId),
  }
}
