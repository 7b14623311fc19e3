import type { Db } from './sqlite/openDatabase.js'

export type CheckInRow = {
  id: number
  eventId: number
  chipUid: string
  stationId: number
  manual: number
  mintId: number | null
  chainTxId: number | null
  createdAt: number
  undoneAt: number | null
}

/** A check-in with what a feed row shows of it: the event's and the station's names. */
export type CheckInDetail = CheckInRow & { eventName: string; stationName: string }

const columns = `ci.id, ci.event_id AS eventId, ci.chip_uid AS chipUid, ci.station_id AS stationId, ci.manual,
  ci.mint_id AS mintId, ci.chain_tx_id AS chainTxId, ci.created_at AS createdAt, ci.undone_at AS undoneAt`
const detail = `SELECT ${columns}, e.name AS eventName, s.name AS stationName
  FROM check_ins ci JOIN guestbook_events e ON e.id = ci.event_id JOIN stations s ON s.id = ci.station_id`

/** Check-ins (migration 007): one per chip per event, undone ones excepted (the unique index). */
export function createCheckInsRepository(db: Db) {
  // ON CONFLICT DO NOTHING: the partial unique index settles two stations racing for one chip.
  const insert = db.prepare(
    `INSERT INTO check_ins (event_id, chip_uid, station_id, manual, created_at)
     VALUES (@eventId, @chipUid, @stationId, @manual, @now) ON CONFLICT DO NOTHING`,
  )
  const byId = db.prepare<[number], CheckInDetail>(`${detail} WHERE ci.id = ?`)
  const active = db.prepare<[number, string], CheckInDetail>(`${detail} WHERE ci.event_id = ? AND ci.chip_uid = ? AND ci.undone_at IS NULL`)
  // The newest: an undone check-in and the chip's next one share the mint they both point at.
  const byTx = db.prepare<[number], CheckInDetail>(`${detail} WHERE ci.chain_tx_id = ? ORDER BY ci.id DESC LIMIT 1`)
  const lastAtStation = db.prepare<[number], CheckInDetail>(
    `${detail} WHERE ci.station_id = ? AND ci.undone_at IS NULL ORDER BY ci.created_at DESC, ci.id DESC LIMIT 1`,
  )
  const setMint = db.prepare<[number | null, number | null, number]>('UPDATE check_ins SET mint_id = ?, chain_tx_id = ? WHERE id = ?')
  const dropMint = db.prepare<[number]>('UPDATE check_ins SET mint_id = NULL WHERE chain_tx_id = ?')
  const undo = db.prepare<[number, number]>('UPDATE check_ins SET undone_at = ? WHERE id = ? AND undone_at IS NULL')
  const countEvent = db.prepare<[number], { n: number }>('SELECT count(*) AS n FROM check_ins WHERE event_id = ? AND undone_at IS NULL')
  const countStation = db.prepare<[number, number, number], { n: number; recent: number }>(
    `SELECT count(*) AS n, count(*) FILTER (WHERE created_at >= ?) AS recent FROM check_ins
     WHERE station_id = ? AND event_id = ? AND undone_at IS NULL`,
  )
  const perEvent = db.prepare<[number], { eventId: number; name: string; n: number }>(
    `SELECT e.id AS eventId, e.name, count(ci.id) AS n FROM guestbook_events e
     LEFT JOIN check_ins ci ON ci.event_id = e.id AND ci.undone_at IS NULL
     WHERE e.team_id = ? GROUP BY e.id ORDER BY e.id`,
  )
  const perStation = db.prepare<[number, number], { stationId: number; n: number; recent: number }>(
    `SELECT s.id AS stationId, count(ci.id) AS n, count(ci.id) FILTER (WHERE ci.created_at >= ?) AS recent FROM stations s
     LEFT JOIN check_ins ci ON ci.station_id = s.id AND ci.event_id = s.event_id AND ci.undone_at IS NULL
     WHERE s.team_id = ? GROUP BY s.id ORDER BY s.id`,
  )
  return {
    /** @returns the new check-in's id, or null when the chip is checked in to the event already */
    insert(c: { eventId: number; chipUid: string; stationId: number; manual: boolean; now: number }): number | null {
      const result = insert.run({ ...c, manual: c.manual ? 1 : 0 })
      return result.changes === 1 ? Number(result.lastInsertRowid) : null
    },
    get: (id: number) => byId.get(id),
    findActive: (eventId: number, chipUid: string) => active.get(eventId, chipUid),
    findByTx: (chainTxId: number) => byTx.get(chainTxId),
    lastAtStation: (stationId: number) => lastAtStation.get(stationId),
    setMint: (id: number, mintId: number | null, chainTxId: number | null) => setMint.run(mintId, chainTxId, id),
    /** A reverted mint's guestbook_mints row is about to be deleted: the check-in keeps its tx id only. */
    dropMintOfTx: (chainTxId: number) => dropMint.run(chainTxId),
    undo: (id: number, now: number) => undo.run(now, id).changes === 1,
    countEvent: (eventId: number) => countEvent.get(eventId)!.n,
    /** A station's check-ins for an event, and those since `since` (epoch ms). */
    countStation: (stationId: number, eventId: number, since: number) => countStation.get(since, stationId, eventId)!,
    perEvent: (teamId: number) => perEvent.all(teamId),
    perStation: (teamId: number, since: number) => perStation.all(since, teamId),
  }
}
