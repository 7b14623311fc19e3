import type { Db } from './sqlite/openDatabase.js'

export type GuestbookContractRow = {
  id: number
  teamId: number
  name: string
  symbol: string
  chainId: number
  address: string | null
  status: 'pending' | 'confirmed'
  paused: number
  createdAt: number
  /** Where our deploy will put it; the API shows `address` (null until mined). */
  plannedAddress: string | null
  deployTxId: number | null
}

export type GuestbookEventRow = {
  id: number
  teamId: number
  contractId: number
  name: string
  tokenId: string
  metadata: string
  createdAt: number
  updatedAt: number
  chainId: number
  contractAddress: string | null
  /** Migration 015: a guest who went out may come back in (1, the default) or not (0). */
  reentry: number
  /** What the public door screen calls a guest: the first name, or the whole name. */
  publicNames: 'first' | 'full'
  /** Migration 016: the door admits guests whose order is not paid (1) or refuses them not_paid (0, the default). */
  admitUnpaid: number
}

const contractColumns = `c.id, c.team_id AS teamId, c.name, c.symbol, c.chain_id AS chainId, c.address,
  c.status, c.paused, c.created_at AS createdAt, c.planned_address AS plannedAddress, c.deploy_tx_id AS deployTxId`
const eventColumns = `e.id, e.team_id AS teamId, e.contract_id AS contractId, e.name, e.token_id AS tokenId,
  e.metadata, e.created_at AS createdAt, e.updated_at AS updatedAt, c.chain_id AS chainId, c.address AS contractAddress,
  e.reentry, e.public_names AS publicNames, e.admit_unpaid AS admitUnpaid`
const eventFrom = 'guestbook_events e JOIN guestbook_contracts c ON c.id = e.contract_id'

export function createGuestbookRepository(db: Db) {
  const insertContract = db.prepare(
    `INSERT INTO guestbook_contracts (team_id, name, symbol, chain_id, address, status, created_at, planned_address, deploy_tx_id)
     VALUES (@teamId, @name, @symbol, @chainId, @address, @status, @now, @plannedAddress, @deployTxId)`,
  )
  const contractById = db.prepare<[number], GuestbookContractRow>(
    `SELECT ${contractColumns} FROM guestbook_contracts c WHERE c.id = ?`,
  )
  // A pending deploy is found by its planned address too: work queued behind the deploy may target it.
  const contractByAddress = db.prepare<[number, string, string], GuestbookContractRow>(
    `SELECT ${contractColumns} FROM guestbook_contracts c WHERE c.chain_id = ? AND (c.address = ? OR (c.address IS NULL AND c.planned_address = ?))`,
  )
  const confirmByTx = db.prepare<[number], { id: number }>(
    "UPDATE guestbook_contracts SET address = planned_address, status = 'confirmed' WHERE deploy_tx_id = ? AND address IS NULL RETURNING id",
  )
  const setPaused = db.prepare<[number, number]>('UPDATE guestbook_contracts SET paused = ? WHERE id = ?')
  const contractByName = db.prepare<[number, string, number], GuestbookContractRow>(
    `SELECT ${contractColumns} FROM guestbook_contracts c WHERE c.team_id = ? AND c.name = ? AND c.chain_id = ? ORDER BY c.id LIMIT 1`,
  )
  const contractsByTeam = db.prepare<[number], GuestbookContractRow>(
    `SELECT ${contractColumns} FROM guestbook_contracts c WHERE c.team_id = ? ORDER BY c.id`,
  )
  const confirm = db.prepare<[string, number]>(
    "UPDATE guestbook_contracts SET address = ?, status = 'confirmed' WHERE id = ? AND address IS NULL",
  )
  const insertEvent = db.prepare(
    `INSERT INTO guestbook_events (team_id, contract_id, name, token_id, metadata, created_at, updated_at)
     VALUES (@teamId, @contractId, @name, @tokenId, @metadata, @now, @now)`,
  )
  const updateEvent = db.prepare<[string, string, number, number]>(
    'UPDATE guestbook_events SET name = ?, metadata = ?, updated_at = ? WHERE id = ?',
  )
  const eventById = db.prepare<[number], GuestbookEventRow>(`SELECT ${eventColumns} FROM ${eventFrom} WHERE e.id = ?`)
  const eventByToken = db.prepare<[number, string, string], GuestbookEventRow>(
    `SELECT ${eventColumns} FROM ${eventFrom} WHERE c.chain_id = ? AND c.address = ? AND e.token_id = ?`,
  )
  const eventByTokenOrPlanned = db.prepare<[number, string, string, string], GuestbookEventRow>(
    `SELECT ${eventColumns} FROM ${eventFrom} WHERE c.chain_id = ? AND (c.address = ? OR c.planned_address = ?) AND e.token_id = ?`,
  )
  const eventByContractToken = db.prepare<[number, string], GuestbookEventRow>(
    `SELECT ${eventColumns} FROM ${eventFrom} WHERE e.contract_id = ? AND e.token_id = ?`,
  )
  const eventsByTeam = db.prepare<[number], GuestbookEventRow>(
    `SELECT ${eventColumns} FROM ${eventFrom} WHERE e.team_id = ? ORDER BY e.id`,
  )
  const eventsByContract = db.prepare<[number, number], GuestbookEventRow>(
    `SELECT ${eventColumns} FROM ${eventFrom} WHERE e.team_id = ? AND e.contract_id = ? ORDER BY e.id`,
  )
  const eventsByChip = db.prepare<[string], GuestbookEventRow>(
    `SELECT ${eventColumns} FROM ${eventFrom} JOIN guestbook_event_chips ec ON ec.event_id = e.id
     WHERE ec.chip_uid = ? ORDER BY e.id`,
  )
  const setMetadata = db.prepare<[string, number, number]>(
    'UPDATE guestbook_events SET metadata = ?, updated_at = ? WHERE id = ?',
  )
  const setDoor = db.prepare(
    `UPDATE guestbook_events SET reentry = coalesce(@reentry, reentry), public_names = coalesce(@publicNames, public_names),
       admit_unpaid = coalesce(@admitUnpaid, admit_unpaid), updated_at = @now
     WHERE id = @id`,
  )
  const assign = db.prepare<[number, string, number]>(
    'INSERT INTO guestbook_event_chips (event_id, chip_uid, assigned_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
  )
  return {
    insertContract: (c: {
      teamId: number
      name: string
      symbol: string
      chainId: number
      address: string | null
      now: number
      plannedAddress?: string | null
      deployTxId?: number | null
    }) =>
      Number(
        insertContract.run({
          plannedAddress: null,
          deployTxId: null,
          ...c,
          status: c.address === null ? 'pending' : 'confirmed',
        }).lastInsertRowid,
      ),
    getContract: (id: number) => contractById.get(id),
    /** Records the deployed address of a pending contract. */
    confirmContract: (id: number, address: string) => confirm.run(address, id).changes === 1,
    /** Marks the contract our deploy transaction created as confirmed at its planned address. */
    confirmDeployed: (deployTxId: number) => confirmByTx.get(deployTxId)?.id,
    setPaused: (id: number, paused: boolean) => setPaused.run(paused ? 1 : 0, id),
    findContractByAddress: (chainId: number, address: string) => contractByAddress.get(chainId, address, address),
    findContractByName: (teamId: number, name: string, chainId: number) => contractByName.get(teamId, name, chainId),
    listContracts: (teamId: number) => contractsByTeam.all(teamId),
    insertEvent: (e: { teamId: number; contractId: number; name: string; tokenId: string; metadata: string; now: number }) =>
      Number(insertEvent.run(e).lastInsertRowid),
    updateEvent: (id: number, e: { name: string; metadata: string; now: number }) =>
      updateEvent.run(e.name, e.metadata, e.now, id),
    getEvent: (id: number) => eventById.get(id),
    findEventByToken: (chainId: number, contractAddress: string, tokenId: string) =>
      eventByToken.get(chainId, contractAddress, tokenId),
    /** Also finds events of a contract whose deploy is still pending (its uri() is already fixed). */
    findEventByTokenOrPlanned: (chainId: number, contractAddress: string, tokenId: string) =>
      eventByTokenOrPlanned.get(chainId, contractAddress, contractAddress, tokenId),
    findEventInContract: (contractId: number, tokenId: string) => eventByContractToken.get(contractId, tokenId),
    listEvents: (teamId: number, contractId?: number) =>
      contractId === undefined ? eventsByTeam.all(teamId) : eventsByContract.all(teamId, contractId),
    listEventsByChip: (uid: string) => eventsByChip.all(uid),
    setEventMetadata: (id: number, metadata: string, now: number) => setMetadata.run(metadata, now, id),
    /** The event's door settings; an absent one stays as it is. */
    setDoorSettings: (id: number, d: { reentry?: boolean; publicNames?: 'first' | 'full'; admitUnpaid?: boolean; now: number }) =>
      setDoor.run({
        id,
        reentry: d.reentry === undefined ? null : d.reentry ? 1 : 0,
        publicNames: d.publicNames ?? null,
        admitUnpaid: d.admitUnpaid === undefined ? null : d.admitUnpaid ? 1 : 0,
        now: d.now,
      }),
    assignChip: (eventId: number, uid: string, now: number) => assign.run(eventId, uid, now),
  }
}
