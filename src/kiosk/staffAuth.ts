import crypto from 'node:crypto'
import { promisify } from 'node:util'
import type { StationRow } from '../db/stations.js'
import type { Store, Repositories } from '../db/store.js'
import { BaseError, ConflictError, NotFoundError, UnauthorizedError, ValidationError } from '../errors.js'

export const MAX_PIN_TRIES = 5
/** The first lock; each lock in a row lasts twice the one before, up to PIN_LOCK_MAX_MS. */
export const PIN_LOCK_MS = 5 * 60_000
/**
 * The longest lock. A fixed 5-minute lock let 5 guesses through every 5 minutes (1,440 a day: a
 * 4-digit PIN in about a week); at the cap it is 5 a day. Staff who locked themselves out set
 * the PIN again (`tapgate station staff-pin`), which clears the lock.
 */
export const PIN_LOCK_MAX_MS = 24 * 60 * 60_000

/** How long the `lock`-th lock in a row lasts (1-based): 5, 10, 20 … minutes, at most a day. */
export function pinLockMs(lock: number): number {
  // 2^min(…, 20): past the cap anyway, and no Infinity from a huge count.
  return Math.min(PIN_LOCK_MS * 2 ** Math.min(lock - 1, 20), PIN_LOCK_MAX_MS)
}

/** "20 minutes", "2 h 40 min", "24 hours": how the staff feed says a lock's length. */
function lockLength(ms: number): string {
  const minutes = Math.round(ms / 60_000)
  if (minutes < 60) return `${minutes} minutes`
  const hours = Math.floor(minutes / 60)
  return minutes % 60 === 0 ? `${hours} hours` : `${hours} h ${minutes % 60} min`
}
/** A staff session ends after this long without a request. */
export const STAFF_IDLE_MS = 60_000

const scrypt = promisify(crypto.scrypt) as (pin: string, salt: Buffer, keylen: number, options: crypto.ScryptOptions) => Promise<Buffer>
// About 50 ms per guess on a small PC: a slow hash, since a 4-digit PIN has only 10,000 values.
const SCRYPT = { N: 1 << 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 }

/** A wrong PIN (401, `triesLeft`) or a locked one (423, `lockedUntil`): the route adds the field to the error body. */
export class PinError extends BaseError {
  override name = 'PinError'
  constructor(
    statusCode: 401 | 423,
    code: 'invalid_pin' | 'pin_locked',
    message: string,
    readonly extra: { triesLeft?: number; lockedUntil?: string },
  ) {
    super(statusCode, code, message)
  }
}

const locked = (until: number) =>
  new PinError(423, 'pin_locked', `Too many wrong PINs: the staff PIN is locked until ${new Date(until).toISOString()}`, {
    lockedUntil: new Date(until).toISOString(),
  })

async function hashPin(pin: string): Promise<string> {
  const salt = crypto.randomBytes(16)
  const hash = await scrypt(pin, salt, 32, SCRYPT)
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64')}$${hash.toString('base64')}`
}

async function pinMatches(pin: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$')
  if (scheme !== 'scrypt' || !salt || !hash) return false
  const expected = Buffer.from(hash, 'base64')
  const actual = await scrypt(pin, Buffer.from(salt, 'base64'), expected.length, { N: Number(n), r: Number(r), p: Number(p), maxmem: SCRYPT.maxmem })
  return crypto.timingSafeEqual(actual, expected)
}

/**
 * Sets (or replaces) a station's staff PIN: 4–12 digits, stored as a scrypt hash. Clears wrong
 * tries and a lock.
 *
 * @throws ValidationError invalid_pin_format; NotFoundError station_not_found
 */
export async function setStaffPin(store: Store, p: { stationId: number; pin: string; now: number }): Promise<void> {
  if (!/^\d{4,12}$/.test(p.pin)) throw new ValidationError('A staff PIN is 4 to 12 digits', { pin: 'Must be 4 to 12 digits' }, 'invalid_pin_format')
  const pinHash = await hashPin(p.pin)
  await store.tx(async (tx) => {
    const station = await tx.stations.get(p.stationId)
    if (!station || station.revokedAt !== null) throw new NotFoundError('station_not_found', `No active station with id ${p.stationId}`)
    await tx.staffAuth.setPin(station.id, pinHash, p.now)
  })
}

const hashSession = (token: string) => crypto.createHash('sha256').update(token).digest('hex')

/**
 * Opens a staff session with the station's PIN. Every wrong PIN counts, and is logged to the
 * feed; the fifth in a row locks the PIN (423, the right PIN included), for 5 minutes the first
 * time and twice as long at each lock in a row after (pinLockMs), until the right PIN. The lock
 * count is stored, so a restart does not shorten the next lock. The tries are counted in one
 * BEGIN IMMEDIATE transaction after the slow hash, so parallel guesses cannot each see the same
 * count.
 *
 * @throws ConflictError pin_not_set; PinError invalid_pin (401) / pin_locked (423)
 */
export async function openStaffSession(store: Store, p: { station: StationRow; pin: string; now: number }): Promise<{ session: string; expiresAt: number }> {
  const before = await store.staffAuth.getPin(p.station.id)
  if (!before) throw new ConflictError('pin_not_set', 'This station has no staff PIN: set one with `tapgate station staff-pin --station ID`')
  if (before.lockedUntil !== null && before.lockedUntil > p.now) throw locked(before.lockedUntil)
  const ok = /^\d{4,12}$/.test(p.pin) && (await pinMatches(p.pin, before.pinHash))
  const outcome = await store.tx(async (tx) => {
    // Its kiosks see the login, or the wrong try, once it commits.
    const pin = (await tx.staffAuth.getPin(p.station.id))!
    if (pin.lockedUntil !== null && pin.lockedUntil > p.now) return { error: locked(pin.lockedUntil) }
    if (!ok) {
      const tries = pin.failedTries + 1
      if (tries >= MAX_PIN_TRIES) {
        const lock = pin.consecutiveLocks + 1
        const until = p.now + pinLockMs(lock)
        await tx.staffAuth.setTries(p.station.id, { failedTries: 0, lockedUntil: until, consecutiveLocks: lock })
        const summary = `${tries} wrong PINs: locked for ${lockLength(until - p.now)}${lock > 1 ? ` (lock ${lock} in a row)` : ''}`
        await tx.stationEvents.append(p.station.id, 'staff', { action: 'locked', summary }, p.now)
        return { error: locked(until) }
        }
        await tx.staffAuth.setTries(p.station.id, { failedTries: tries, lockedUntil: null, consecutiveLocks: pin.consecutiveLocks })
        await tx.stationEvents.append(p.station.id, 'staff', { action: 'login_failed', summary: `wrong PIN (${MAX_PIN_TRIES - tries} tries left)` }, p.now)
        return { error: new PinError(401, 'invalid_pin', 'Wrong staff PIN', { triesLeft: MAX_PIN_TRIES - tries }) }
      }
      await tx.staffAuth.setTries(p.station.id, { failedTries: 0, lockedUntil: null, consecutiveLocks: 0 })
    const session = `tgss_${crypto.randomBytes(24).toString('base64url')}`
    await tx.staffAuth.insertSession(hashSession(session), p.station.id, p.now)
    await tx.stationEvents.append(p.station.id, 'staff', { action: 'login', summary: 'staff session opened' }, p.now)
    return { session }
  })
  // Thrown after the commit: the wrong try and its feed row stay.
  if ('error' in outcome) throw outcome.error
  return { session: outcome.session, expiresAt: p.now + STAFF_IDLE_MS }
}

/**
 * Checks a staff session of this station; `touch` counts the request as use (every staff HTTP
 * request does; the staff socket only looks).
 *
 * @throws UnauthorizedError staff_session_missing / staff_session_ended
 * @returns when the session ends if unused from now on
 */
export async function checkStaffSession(store: Store, p: { stationId: number; token: string | undefined; now: number; touch: boolean }): Promise<number> {
  if (!p.token) throw new UnauthorizedError('staff_session_missing', 'This needs a staff session (x-staff-session): POST /kiosk/staff/session with the PIN')
  const hash = hashSession(p.token)
  const session = await store.staffAuth.getSession(hash)
  if (!session || session.stationId !== p.stationId || session.endedAt !== null || p.now - session.lastUsedAt > STAFF_IDLE_MS)
    throw new UnauthorizedError('staff_session_ended', 'The staff session has ended (a minute without use, or ended by staff): enter the PIN again')
  if (!p.touch) return session.lastUsedAt + STAFF_IDLE_MS
  await store.staffAuth.touchSession(hash, p.now)
  return Math.max(session.lastUsedAt, p.now) + STAFF_IDLE_MS
}

export async function endStaffSession(store: Store, p: { token: string; now: number }): Promise<void> {
  await store.staffAuth.endSession(hashSession(p.token), p.now)
}
