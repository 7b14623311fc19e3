import { setEventDoorSettings } from '../../door/eventDoorSettings.js'
import { UsageError, type Flags } from '../usage.js'
import { onePositional, printJson, required, text, withStore } from './context.js'

/** `event set --event ID [--reentry yes|no] [--public-names first|full] [--admit-unpaid yes|no]`: an event's door settings. */
export async function run(positionals: string[], flags: Flags) {
  const action = onePositional(positionals, 'action (set)')
  if (action !== 'set') throw new UsageError(`unknown action "event ${action}" (set)`)
  const rawEvent = required(flags, 'event')
  if (!/^\d+$/.test(rawEvent) || Number(rawEvent) === 0) throw new UsageError('--event takes a guestbook event id (a positive integer)')
  const reentry = text(flags, 'reentry')
  if (reentry !== undefined && reentry !== 'yes' && reentry !== 'no') throw new UsageError('--reentry takes yes or no')
  const publicNames = text(flags, 'public-names')
  if (publicNames !== undefined && publicNames !== 'first' && publicNames !== 'full') throw new UsageError('--public-names takes first or full')
  const admitUnpaid = text(flags, 'admit-unpaid')
  if (admitUnpaid !== undefined && admitUnpaid !== 'yes' && admitUnpaid !== 'no') throw new UsageError('--admit-unpaid takes yes or no')
  if (reentry === undefined && publicNames === undefined && admitUnpaid === undefined)
    throw new UsageError('event set needs --reentry yes|no, --public-names first|full or --admit-unpaid yes|no')
  await withStore(flags, async (store) => {
    const settings = await setEventDoorSettings(store, {
      eventId: Number(rawEvent),
      ...(reentry === undefined ? {} : { reentry: reentry === 'yes' }),
      ...(publicNames === undefined ? {} : { publicNames }),
      ...(admitUnpaid === undefined ? {} : { admitUnpaid: admitUnpaid === 'yes' }),
      now: Date.now(),
    })
    printJson(settings)
  })
}
