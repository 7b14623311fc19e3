import type { Store } from '../db/types.js'
import { BadRequestError, NotFoundError } from '../errors.js'

export type EventDoorSettings = { eventId: number; name: string; reentry: boolean; publicNames: 'first' | 'full'; admitUnpaid: boolean }

/**
 * Sets an event's door settings (CLI `event set`): whether a guest who went out may come back in, and
 * whether the public screen shows first names or whole names, whether a guest whose order is not paid
 * is let in (admitUnpaid; default no: refused not_paid). An absent setting stays as it is.
 *
 * @throws NotFoundError event_not_found; BadRequestError nothing_to_set
 */
export function setEventDoorSettings(
  store: Store,
  p: { eventId: number; reentry?: boolean; publicNames?: 'first' | 'full'; admitUnpaid?: boolean; now: number },
): Promise<EventDoorSettings> {
  if (p.reentry === undefined && p.publicNames === undefined && p.admitUnpaid === undefined)
    throw new BadRequestError('nothing_to_set', 'Give reentry, publicNames or admitUnpaid (CLI: --reentry yes|no, --public-names first|full, --admit-unpaid yes|no)')
  return store.tx(async (tx) => {
    if (!(await tx.guestbook.getEvent(p.eventId))) throw new NotFoundError('event_not_found', `No guestbook event ${p.eventId}`)
    await tx.guestbook.setDoorSettings(p.eventId, { reentry: p.reentry, publicNames: p.publicNames, admitUnpaid: p.admitUnpaid, now: p.now })
    const event = (await tx.guestbook.getEvent(p.eventId))!
    return { eventId: event.id, name: event.name, reentry: event.reentry === 1, publicNames: event.publicNames, admitUnpaid: event.admitUnpaid === 1 }
  })
}
