import type { StationRow } from '../db/stations.js'
import type { Store } from '../db/store.js'
import { BadRequestError, ForbiddenError, NotFoundError } from '../errors.js'
import type { StationMode } from '../wire/feedProtocol.js'

export type SetStationModeParameters = {
  stationId: number
  mode: StationMode | null
  eventId?: number | null
  /** The ticket types the door admits (checkin, bind, exit); null: every type; absent: as they are. */
  ticketTypes?: string[] | null
  now: number
  /**
   * Staff did it (POST /kiosk/staff/mode): a `staff` row is logged beside the `mode` row, and the
   * event stays the station's (a PIN changes what the door does, never whose guests it reads).
   */
  byStaff?: boolean
}

/**
 * Sets what a station is for (CLI `station set`, POST /kiosk/staff/mode) and appends the `mode`
 * row its kiosks follow. `checkin`, `bind` and `exit` (the doors) need a guestbook event of the
 * station's team; `claim` needs none (a tap claims the tapped chip's own token); `closed` and `claim`
 * keep the station's event, so switching back to a door without an event reopens the same one. A
 * change of mode disarms a bind door. Staff (`byStaff`) keep the station's event: the staff view
 * searches and exports the guests of the station's event, so a PIN that could pick the event could
 * read every guest list of the team (issue 24 point 9); the operator sets it (CLI `station set`).
 *
 * @throws NotFoundError station_not_found / event_not_found; BadRequestError event_required;
 *   ForbiddenError staff_event_locked (byStaff, an event other than the station's)
 */
export function setStationMode(store: Store, p: SetStationModeParameters): Promise<StationRow> {
  return store.tx(async (tx) => {
    const station = await tx.stations.get(p.stationId)
    if (!station || station.revokedAt !== null) throw new NotFoundError('station_not_found', `No active station with id ${p.stationId}`)
    let eventId = station.eventId
    // Before the event is looked up: a PIN learns nothing of which ids are the team's events.
    if (p.byStaff && p.eventId !== undefined && p.eventId !== null && p.eventId !== station.eventId)
      throw new ForbiddenError(
        'staff_event_locked',
        `The staff PIN changes the mode of this station's event only${station.eventId === null ? ' (it has none)' : ` (event ${station.eventId})`}; another event is set by the operator: tapgate station set --station ${station.id} --mode MODE --event ID`,
      )
    if (p.eventId !== undefined && p.eventId !== null) {
      const event = await tx.guestbook.getEvent(p.eventId)
      if (!event || event.teamId !== station.teamId) throw new NotFoundError('event_not_found', `The station's team has no guestbook event ${p.eventId}`)
      eventId = event.id
    }
    const door = p.mode === 'checkin' || p.mode === 'bind' || p.mode === 'exit'
    if (door && eventId === null)
      throw new BadRequestError(
        'event_required',
        p.byStaff
          ? `A ${p.mode} station needs a guestbook event, which the operator sets: tapgate station set --station ${station.id} --mode ${p.mode} --event ID`
          : `A ${p.mode} station needs a guestbook event: give its eventId`,
      )
    await tx.stations.setMode(station.id, p.mode, eventId)
    if (p.ticketTypes !== undefined) await tx.stations.setTicketTypes(station.id, p.ticketTypes)
    if (station.bindAttendeeId !== null) await tx.stations.arm(station.id, null)
    const event = eventId === null ? undefined : await tx.guestbook.getEvent(eventId)
    await tx.stationEvents.append(station.id, 'mode', { mode: p.mode, eventId, eventName: event?.name ?? null }, p.now)
    if (p.byStaff) {
      const summary = door ? `${p.mode === 'checkin' ? 'check-in' : p.mode} for "${event!.name}"` : p.mode === 'claim' ? 'claim mode' : p.mode === 'closed' ? 'closed the station' : 'cleared the mode'
      await tx.stationEvents.append(station.id, 'staff', { action: 'mode', summary }, p.now)
    }
    return (await tx.stations.get(station.id))!
  })
}
