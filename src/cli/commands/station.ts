import { doorTicketTypes } from '../../door/doorGuest.js'
import { NotFoundError } from '../../errors.js'
import { createKioskToken } from '../../kiosk/kioskTokens.js'
import { setStaffPin } from '../../kiosk/staffAuth.js'
import { setStationMode } from '../../kiosk/stationModes.js'
import { createStation, listStations, revokeStation } from '../../stations/stations.js'
import { UsageError, type Flags } from '../usage.js'
import { onePositional, printJson, required, teamIdOf, text, withStore } from './context.js'

export async function run(positionals: string[], flags: Flags) {
  // No action: run a station (live readers or a replayed fixture).
  if (positionals.length === 0) return (await import('./stationRun.js')).run(flags)
  const action = onePositional(positionals, 'action (create, list, revoke, set, kiosk-url, staff-pin, kiosk-tokens)')
  if (action === 'create') {
    const teamId = teamIdOf(flags)
    await withStore(flags, async (store) => {
      // The token is shown this once; only its hash is stored.
      const { stationId, token } = await createStation(store, { teamId, name: text(flags, 'name') ?? null, now: Date.now() })
      printJson({ stationId, teamId, token })
    })
  } else if (action === 'list') {
    const teamId = teamIdOf(flags)
    await withStore(flags, async (store) =>
      printJson(
        await Promise.all((await listStations(store, { teamId })).map(async (s) => ({
          stationId: s.id,
          name: s.name,
          prefix: s.prefix,
          mode: s.mode,
          eventId: s.eventId,
          eventName: s.eventId === null ? null : ((await store.guestbook.getEvent(s.eventId))?.name ?? null),
          createdAt: new Date(s.createdAt).toISOString(),
          revokedAt: s.revokedAt === null ? null : new Date(s.revokedAt).toISOString(),
        }))),
      ),
    )
  } else if (action === 'revoke') {
    const prefix = required(flags, 'prefix')
    await withStore(flags, async (store) => {
      const revoked = await revokeStation(store, { tokenOrPrefix: prefix, now: Date.now() })
      if (revoked === 0) throw new NotFoundError('station_not_found', prefix.length > 10 ? `No active station token matches that token (prefix ${prefix.slice(0, 10)})` : `No active station token has the prefix ${prefix}`)
      printJson({ revoked })
    })
  } else if (action === 'set') await setMode(flags)
  else if (action === 'kiosk-url') await kioskUrl(flags)
  else if (action === 'staff-pin') await staffPin(flags)
  else if (action === 'kiosk-tokens') await (await import('./stationKioskTokens.js')).run(stationIdOf(flags), flags)
  else throw new UsageError(`unknown action "station ${action}" (create, list, revoke, set, kiosk-url, staff-pin, kiosk-tokens)`)
}

function stationIdOf(flags: Flags): number {
  const raw = required(flags, 'station')
  if (!/^\d+$/.test(raw) || Number(raw) === 0) throw new UsageError('--station takes a station id (a positive integer, as `station list` shows it)')
  return Number(raw)
}

const MODES = ['checkin', 'bind', 'exit', 'claim', 'closed', 'none'] as const
const isMode = (mode: string): mode is (typeof MODES)[number] => (MODES as readonly string[]).includes(mode)

/**
 * `station set --station ID --mode checkin|bind|exit --event ID [--ticket-types VIP,Press|all] | --mode claim | --mode closed | --mode none`
 */
async function setMode(flags: Flags) {
  const stationId = stationIdOf(flags)
  const mode = required(flags, 'mode')
  if (!isMode(mode)) throw new UsageError('--mode takes checkin, bind, exit, claim, closed or none')
  const rawEvent = text(flags, 'event')
  if (rawEvent !== undefined && (!/^\d+$/.test(rawEvent) || Number(rawEvent) === 0)) throw new UsageError('--event takes a guestbook event id (a positive integer)')
  const door = mode === 'checkin' || mode === 'bind' || mode === 'exit'
  if (door && rawEvent === undefined) throw new UsageError(`--mode ${mode} needs --event EVENT_ID`)
  const ticketTypes = ticketTypesOf(flags)
  if (ticketTypes !== undefined && !door) throw new UsageError('--ticket-types is for a door: --mode checkin, bind or exit')
  await withStore(flags, async (store) => {
    const station = await setStationMode(store, {
      stationId,
      mode: mode === 'none' ? null : mode,
      eventId: rawEvent === undefined ? undefined : Number(rawEvent),
      ...(ticketTypes === undefined ? {} : { ticketTypes }),
      now: Date.now(),
    })
    const admits = doorTicketTypes(station)
    printJson({ stationId: station.id, name: station.name, mode: station.mode, eventId: station.eventId, ...(admits ? { ticketTypes: admits } : {}) })
  })
}

/** `--ticket-types VIP,Press`: the types a door admits; `all` (or none given): every type. */
function ticketTypesOf(flags: Flags): string[] | null | undefined {
  const raw = text(flags, 'ticket-types')
  if (raw === undefined) return undefined
  if (raw.trim().toLowerCase() === 'all') return null
  const types = [...new Set(raw.split(',').map((t) => t.trim()).filter((t) => t !== ''))]
  if (types.length === 0) throw new UsageError('--ticket-types takes ticket types separated by commas (e.g. VIP,Press), or all')
  return types
}

/** `station kiosk-url --station ID [--base-url URL]`: a new kiosk token, printed as the page's URL on one line. */
async function kioskUrl(flags: Flags) {
  const stationId = stationIdOf(flags)
  const baseFlag = text(flags, 'base-url')
  if (baseFlag !== undefined && !/^https?:\/\/[^\s#?]+$/.test(baseFlag)) throw new UsageError(`--base-url takes the gateway's address as the kiosk reaches it, e.g. http://192.168.1.20:8787 (got ${baseFlag})`)
  await withStore(flags, async (store, config) => {
    const base = (baseFlag ?? config.publicBaseUrl ?? `http://127.0.0.1:${config.port}`).replace(/\/+$/, '')
    const { token } = await createKioskToken(store, { stationId, now: Date.now() })
    // The token in the fragment: a browser never sends it to a server, so it stays out of logs.
    console.log(`${base}/kiosk#token=${token}`)
  })
}

/** `station staff-pin --station ID`, the PIN on stdin (never a flag: it would land in shell history). */
async function staffPin(flags: Flags) {
  const stationId = stationIdOf(flags)
  if (process.stdin.isTTY) process.stderr.write('Staff PIN (4–12 digits), then Enter: ')
  const pin = await readFirstLine(process.stdin)
  if (!/^\d{4,12}$/.test(pin)) throw new UsageError('the staff PIN is 4 to 12 digits, read from stdin')
  await withStore(flags, async (store) => {
    await setStaffPin(store, { stationId, pin, now: Date.now() })
    printJson({ stationId, pinSet: true })
  })
}

async function readFirstLine(stream: NodeJS.ReadableStream): Promise<string> {
  let text = ''
  for await (const chunk of stream) {
    text += chunk.toString()
    if (text.includes('\n')) break
  }
  return text.split(/\r?\n/)[0]!.trim()
}
