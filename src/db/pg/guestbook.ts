import type { createGuestbookRepository, GuestbookContractRow, GuestbookEventRow } from '../guestbook.js'
import type { AsyncRepository } from '../types.js'
import type { PgQuery } from './connect.js'

// paused keeps SQLite's 0/1 in the row type (see types.ts).
const contractColumns = `c.id, c.team_id, c.name, c.symbol, c.chain_id, c.address, c.status, c.paused::int AS paused, c.created_at,
  c.planned_address, c.deploy_tx_id`
const eventColumns = `e.id, e.team_id, e.contract_id, e.name, e.token_id, e.metadata, e.created_at, e.updated_at,
  c.chain_id, c.address AS contract_address, e.reentry::int AS reentry, e.public_names,
  e.admit_unpaid::int AS admit_unpaid`
const eventFrom = 'guestbook_events e JOIN guestbook_contracts c ON c.id = e.contract_id'

export function createPgGuestbookRepository(sql: PgQuery): AsyncRepository<ReturnType<typeof createGuestbookRepository>> {
  // Fresh fragments per statement, as elsewhere: a postgres.js query object is not meant to be shared.
  const contracts = () => sql.unsafe(contractColumns)
  const events = () => sql.unsafe(`${eventColumns} FROM ${eventFrom}`)
  return {
    async insertContract(c) {
      const [row] = await sql<{ id: number }[]>`INSERT INTO guestbook_contracts (team_id, name, symbol, chain_id, address, status, created_at, planned_address, deploy_tx_id)
        VALUES (${c.teamId}, ${c.name}, ${c.symbol}, ${c.chainId}, ${c.address}, ${c.address === null ? 'pending' : 'confirmed'}, ${c.now},
          ${c.plannedAddress ?? null}, ${c.deployTxId ?? null})
        RETURNING id`
      return row!.id
    },
    async getContract(id) {
      const [row] = await sql<GuestbookContractRow[]>`SELECT ${contracts()} FROM guestbook_contracts c WHERE c.id = ${id}`
      return row
    },
    async confirmContract(id, address) {
      const rows = await sql`UPDATE guestbook_contracts SET address = ${address}, status = 'confirmed' WHERE id = ${id} AND address IS NULL RETURNING id`
      return rows.length === 1
    },
    async confirmDeployed(deployTxId) {
      const [row] = await sql<{ id: number }[]>`UPDATE guestbook_contracts SET address = planned_address, status = 'confirmed'
        WHERE deploy_tx_id = ${deployTxId} AND address IS NULL RETURNING id`
      return row?.id
    },
    async setPaused(id, paused) {
      await sql`UPDATE guestbook_contracts SET paused = ${paused} WHERE id = ${id}`
    },
    // A pending deploy is found by its planned address too: work queued behind the deploy may target it.
    async findContractByAddress(chainId, address) {
      const [row] = await sql<GuestbookContractRow[]>`SELECT ${contracts()} FROM guestbook_contracts c
        WHERE c.chain_id = ${chainId} AND (c.address = ${address} OR (c.address IS NULL AND c.planned_address = ${address}))`
      return row
    },
    async findContractByName(teamId, name, chainId) {
      const [row] = await sql<GuestbookContractRow[]>`SELECT ${contracts()} FROM guestbook_contracts c
        WHERE c.team_id = ${teamId} AND c.name = ${name} AND c.chain_id = ${chainId} ORDER BY c.id LIMIT 1`
      return row
    },
    async listContracts(teamId) {
      return [...(await sql<GuestbookContractRow[]>`SELECT ${contracts()} FROM guestbook_contracts c WHERE c.team_id = ${teamId} ORDER BY c.id`)]
    },
    async insertEvent(e) {
      const [row] = await sql<{ id: number }[]>`INSERT INTO guestbook_events (team_id, contract_id, name, token_id, metadata, created_at, updated_at)
        VALUES (${e.teamId}, ${e.contractId}, ${e.name}, ${e.tokenId}, ${e.metadata}, ${e.now}, ${e.now})
        RETURNING id`
      return row!.id
    },
    async updateEvent(id, e) {
      await sql`UPDATE guestbook_events SET name = ${e.name}, metadata = ${e.metadata}, updated_at = ${e.now} WHERE id = ${id}`
    },
    async getEvent(id) {
      const [row] = await sql<GuestbookEventRow[]>`SELECT ${events()} WHERE e.id = ${id}`
      return row
    },
    async findEventByToken(chainId, contractAddress, tokenId) {
      const [row] = await sql<GuestbookEventRow[]>`SELECT ${events()} WHERE c.chain_id = ${chainId} AND c.address = ${contractAddress} AND e.token_id = ${tokenId}`
      return row
    },
    // Also finds events of a contract whose deploy is still pending (its uri() is already fixed).
    async findEventByTokenOrPlanned(chainId, contractAddress, tokenId) {
      const [row] = await sql<GuestbookEventRow[]>`SELECT ${events()}
        WHERE c.chain_id = ${chainId} AND (c.address = ${contractAddress} OR c.planned_address = ${contractAddress}) AND e.token_id = ${tokenId}`
      return row
    },
    async findEventInContract(contractId, tokenId) {
      const [row] = await sql<GuestbookEventRow[]>`SELECT ${events()} WHERE e.contract_id = ${contractId} AND e.token_id = ${tokenId}`
      return row
    },
    async listEvents(teamId, contractId) {
      const rows =
        contractId === undefined
          ? await sql<GuestbookEventRow[]>`SELECT ${events()} WHERE e.team_id = ${teamId} ORDER BY e.id`
          : await sql<GuestbookEventRow[]>`SELECT ${events()} WHERE e.team_id = ${teamId} AND e.contract_id = ${contractId} ORDER BY e.id`
      return [...rows]
    },
    async listEventsByChip(uid) {
      return [
        ...(await sql<GuestbookEventRow[]>`SELECT ${events()} JOIN guestbook_event_chips ec ON ec.event_id = e.id
          WHERE ec.chip_uid = ${uid} ORDER BY e.id`),
      ]
    },
    async setEventMetadata(id, metadata, now) {
      await sql`UPDATE guestbook_events SET metadata = ${metadata}, updated_at = ${now} WHERE id = ${id}`
    },
    async setDoorSettings(id, d) {
      await sql`UPDATE guestbook_events SET reentry = coalesce(${d.reentry ?? null}::boolean, reentry),
        public_names = coalesce(${d.publicNames ?? null}::text, public_names),
        admit_unpaid = coalesce(${d.admitUnpaid ?? null}::boolean, admit_unpaid), updated_at = ${d.now} WHERE id = ${id}`
    },
    async assignChip(eventId, uid, now) {
      await sql`INSERT INTO guestbook_event_chips (event_id, chip_uid, assigned_at) VALUES (${eventId}, ${uid}, ${now}) ON CONFLICT DO NOTHING`
    },
  }
}
