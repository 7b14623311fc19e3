import type { ChipRow } from '../db/chips.js'
import type { Store, Repositories, Transactional } from '../db/store.js'
import { SealedKeyError } from '../keys/errors.js'
import { recordTap, recordTapBatched, type RecordTapParameters, type TapConsequence } from './recordTap.js'
import { extractSunFields, type ExtractedSunMessage, type ExtractSunFieldsReturnType, type SunParamLayout } from '../sun/index.js'
import { counterJumpLimit, type CounterRules } from './counterRules.js'
import type { Keyring, ProfileEntry } from './createKeyring.js'
import { TapRejectedError, type TapRejectReason } from './tapErrors.js'

export type VerifyTapParameters = {
  /** The full URL the chip produced (phone: rebuilt from the request; station: the NDEF URL read). */
  url: string
  source: 'phone' | 'station'
  /** Station taps: the UID the reader saw over RF, which must match the one inside the message. */
  rfUid?: string
  /** Station taps: only this team's chips count. */
  teamId?: number
  /** Station taps at a station with a row: logged with the tap (the console's tap log and station views). */
  stationId?: number
  /**
   * Where the URL holds its fields, whatever each profile says: GET /chips/find rebuilds the
   * hosted `?e=…&c=…` from its own query, so the chip's programmed layout does not describe it.
   */
  layout?: SunParamLayout
  now: number
}

export type VerifiedTap = {
  refId: string
  uid: string
  counter: number | null
  mode: 'aes' | 'lrp' | 'ntag21x'
  authenticated: boolean
  fileData: string | null
  chip: ChipRow
}

type Verdict =
  | { ok: true; uid: string; counter: number | null; mode: VerifiedTap['mode']; authenticated: boolean; fileData: string | null }
  | Rejection

/**
 * `decrypted`: this profile's meta key opened the PICCData to a well-formed tag. Garbage under a wrong key
 * looks so about once in 256 tries, so it outranks another profile's not_sun_message or mode_mismatch only.
 */
type Rejection = { ok: false; reason: TapRejectReason; detail: string; uid: string | null; decrypted?: true }

/**
 * Verifies a tap URL and turns it into a ref: decrypt (trying each chip profile,
 * since the UID is inside the encrypted PICCData) → find the chip by UID, which
 * must use that profile → check the MAC with the chip's file key → check the
 * counter is strictly greater than the last accepted one and advance it, in one
 * transaction → log → ref. Every refusal is logged with its reason.
 *
 * @throws TapRejectedError with a specific reason
 * @throws SealedKeyError (503) when the chip keys do not open under the gateway secret; logged as `keys_unavailable`
 * @example
 * const tap = verifyTap(store, keyring, { url, source: 'phone', now: Date.now() })
 */
export async function verifyTap(store: Transactional, keyring: Keyring, p: VerifyTapParameters): Promise<VerifiedTap> {
  const verdict = await screenTap(store, keyring, p)
  return verifiedTap(verdict, await recordTap(store, tapRecord(verdict, p, keyring.counterRules)))
}

/**
 * {@link verifyTap} for the request path: the counter check, ref and tap log
 * share a commit with the other taps of this event-loop turn (store.batch).
 * What the tap causes (`consequence`, e.g. a station's check-in) commits with it.
 */
export async function verifyTapBatched<T = undefined>(
  store: Store,
  keyring: Keyring,
  p: VerifyTapParameters,
  consequence?: TapConsequence<T>,
): Promise<VerifiedTap & { caused?: T }> {
  const verdict = await screenTap(store, keyring, p)
  const recorded = await recordTapBatched(store, tapRecord(verdict, p, keyring.counterRules), consequence)
  return { ...verifiedTap(verdict, recorded), ...('caused' in recorded ? { caused: recorded.caused } : {}) }
}

type Accepted = Extract<Verdict, { ok: true }>

function tapRecord(verdict: Accepted, p: VerifyTapParameters, rules: CounterRules): RecordTapParameters {
  return {
    uid: verdict.uid,
    source: p.source,
    authenticated: verdict.authenticated,
    counter: verdict.counter,
    // Verified taps must carry a fresh counter; an NTAG 21x mirror as its chip's counter mirror demands.
    freshCounter: verdict.mode === 'ntag21x' ? 'ntag21x' : true,
    counterJump: counterJumpLimit(rules, verdict.mode),
    check: (chip) => stationCheck(chip, p),
    detail: verdict.mode,
    stationId: p.stationId ?? null,
    now: p.now,
  }
}

const verifiedTap = (verdict: Accepted, { refId, chip }: { refId: string; chip: ChipRow }): VerifiedTap => ({
  refId,
  chip,
  uid: verdict.uid,
  counter: verdict.counter,
  mode: verdict.mode,
  authenticated: verdict.authenticated,
  fileData: verdict.fileData,
})

/** Judges the URL; a refusal is logged and thrown here, before any transaction. */
async function screenTap(store: Repositories, keyring: Keyring, p: VerifyTapParameters): Promise<Accepted> {
  let verdict: Verdict
  try {
    verdict = await judge(store, keyring, p)
  } catch (error) {
    // Keys that do not open (wrong gateway secret) refuse every tap they would judge: log it, answer 503, never a bare crash.
    if (error instanceof SealedKeyError)
      await store.tapLog.insert({
        at: p.now,
        source: p.source,
        chipUid: null,
        teamId: null,
        accepted: false,
        authenticated: false,
        reason: 'keys_unavailable',
        counter: null,
        refId: null,
        detail: error.message,
        stationId: p.stationId ?? null,
      })
    throw error
  }
  if (!verdict.ok) {
    await store.tapLog.insert({
      at: p.now,
      source: p.source,
      chipUid: verdict.uid,
      teamId: verdict.uid === null ? null : ((await store.chips.get(verdict.uid))?.teamId ?? null),
      accepted: false,
      authenticated: false,
      reason: verdict.reason,
      counter: null,
      refId: null,
      detail: verdict.detail,
      stationId: p.stationId ?? null,
    })
    throw new TapRejectedError(verdict.reason, verdict.detail, verdict.uid)
  }
  return verdict
}

function stationCheck(chip: ChipRow, p: VerifyTapParameters): { reason: TapRejectReason; detail: string } | null {
  // Another team's chip on this team's station is, to this station, an unknown chip.
  if (p.teamId !== undefined && chip.teamId !== p.teamId) return { reason: 'unknown_chip', detail: `chip ${chip.uid} is not registered to this station's team` }
  if (p.rfUid !== undefined && chip.randomUid === 0 && p.rfUid !== chip.uid)
    return { reason: 'uid_mismatch', detail: `the reader saw UID ${p.rfUid} but the message is from chip ${chip.uid}: a copied URL` }
  return null
}

/** Decides a URL against every profile; the most specific failure wins when none accepts it. */
async function judge(store: Repositories, keyring: Keyring, p: VerifyTapParameters): Promise<Verdict> {
  const profiles = await keyring.profiles()
  // The first verdict seeds `best`: a fixed not_sun_message seed would outrank every malformed and mode_mismatch.
  let best: Rejection | undefined
  for (const entry of profiles.length > 0 ? profiles : [undefined]) {
    const fields = extractSunFields(p.url, p.layout ?? entry?.layout)
    const verdict = await judgeFields(store, entry, fields, p.rfUid)
    if (verdict.ok) return verdict
    if (!best || rank(verdict) > rank(best)) best = verdict
  }
  await throwIfKeysMissing(store, keyring, best!)
  return best!
}

/**
 * No working profile accepted the tap. If it belongs to a profile whose keys do
 * not open, say so (503) rather than blame the chip: the chip is named and uses
 * a broken profile, or nothing decrypted it and a broken profile might have.
 */
async function throwIfKeysMissing(store: Repositories, keyring: Keyring, best: Rejection): Promise<void> {
  const broken = await keyring.broken()
  if (broken.length === 0) return
  const chip = best.uid === null ? undefined : await store.chips.get(best.uid)
  const own = chip && broken.find((b) => b.profile.id === chip.profileId)
  if (own) throw own.error
  if (!chip && (best.reason === 'not_sun_message' || best.reason === 'mode_mismatch')) throw broken[0]!.error
}

// Later in the pipeline = more specific: a MAC failure on a known chip says more than "malformed".
const order: TapRejectReason[] = ['malformed', 'mode_mismatch', 'not_sun_message', 'no_mac', 'no_counter', 'unknown_chip', 'mac_mismatch']
const rank = (v: Rejection) => (v.decrypted ? order.indexOf('not_sun_message') + 0.5 : order.indexOf(v.reason))

async function judgeFields(store: Repositories, entry: ProfileEntry | undefined, fields: ExtractSunFieldsReturnType, rfUid?: string): Promise<Verdict> {
  if (!fields.ok) return { ok: false, reason: fields.reason, detail: fields.detail, uid: null }
  switch (fields.kind) {
    case 'ntag21x': {
      // No MAC: only chips registered as NTAG 21x may tap this way, and the tap is marked unauthenticated.
      if (fields.uid === null) return { ok: false, reason: 'malformed', detail: 'the mirror carries no UID', uid: null }
      const chip = await store.chips.get(fields.uid)
      if (!chip) return { ok: false, reason: 'unknown_chip', detail: `no chip with UID ${fields.uid} is registered`, uid: fields.uid }
      if (chip.kind !== 'ntag21x')
        return { ok: false, reason: 'no_mac', detail: `chip ${chip.uid} is an NTAG 424 DNA: its taps must carry a MAC`, uid: chip.uid }
      return { ok: true, uid: chip.uid, counter: fields.counter, mode: 'ntag21x', authenticated: false, fileData: null }
    }
    case 'plain_mirror': {
      const chip = await store.chips.get(fields.uid)
      if (!chip) return { ok: false, reason: 'unknown_chip', detail: `no chip with UID ${fields.uid} is registered`, uid: fields.uid }
      const own = chipEntry(chip, entry)
      if (!own) return { ok: false, reason: 'not_sun_message', detail: `chip ${chip.uid} does not use this profile`, uid: chip.uid }
      const result = own.verifier.verifyPlainMirror(fields, { fileKey: own.fileKeyFor(chip) })
      if (!result.valid) return { ok: false, reason: result.reason, detail: result.detail, uid: chip.uid }
      return { ok: true, uid: chip.uid, counter: result.counter, mode: result.mode, authenticated: true, fileData: null }
    }
    case 'sun': {
      if (!entry) return { ok: false, reason: 'not_sun_message', detail: 'no chip profile is configured, so no key can decrypt this message', uid: null }
      const picc = entry.verifier.readPiccData(fields.piccData)
      if (!picc.ok) return { ok: false, reason: picc.reason, detail: picc.detail, uid: null }
      // A counter-only message (PICCDataTag 0x40) names no chip; a station's reader saw its UID over RF,
      // and the MAC under that chip's file key then proves the message is that chip's.
      const uid = picc.uid ?? rfUid ?? null
      if (uid === null)
        return { ok: false, reason: 'malformed', detail: 'the PICCData mirrors no UID, so the chip cannot be identified', uid: null, decrypted: true }
      const chip = await store.chips.get(uid)
      if (!chip) return unregisteredChip(entry, fields, uid)
      if (picc.uid === null && chip.randomUid === 1)
        return { ok: false, reason: 'malformed', detail: `chip ${uid} answers with random UIDs, so a counter-only message cannot be tied to it`, uid: null, decrypted: true }
      // Without the UID in the session vector, one file key shared by all chips would let chip A's copied
      // URL verify on chip B: only keys unique per chip make the MAC prove which chip wrote it.
      if (picc.uid === null && entry.profile.keyScheme === 'static')
        return {
          ok: false,
          reason: 'malformed',
          detail: `profile ${entry.profile.name} shares one file key across chips, so a counter-only message cannot be tied to chip ${uid}; mirror the UID or use per-chip keys`,
          uid: null,
          decrypted: true,
        }
      // A wrong meta key decrypts to a plausible UID about once in a hundred tries; the chip's own profile settles it.
      if (chip.profileId !== entry.profile.id)
        return { ok: false, reason: 'not_sun_message', detail: `chip ${chip.uid} does not use profile ${entry.profile.name}`, uid: null }
      const result = entry.verifier.verify(fields, { fileKey: entry.fileKeyFor(chip) })
      if (!result.valid) return { ok: false, reason: result.reason, detail: result.detail, uid: chip.uid }
      return { ok: true, uid: chip.uid, counter: result.counter, mode: result.mode, authenticated: true, fileData: result.fileData }
    }
  }
}

/**
 * The PICCData names a UID no chip has. A wrong meta key decrypts to a plausible
 * PICCData about once in 90 tries, with a random UID: where the profile derives
 * file keys from the UID alone, the MAC tells a real unregistered chip (it
 * verifies) from that garbage, so unknown_chip is only said when it is true.
 */
function unregisteredChip(entry: ProfileEntry, fields: ExtractedSunMessage, uid: string): Rejection {
  const fileKey = entry.fileKeyForUid(uid)
  if (fileKey && !entry.verifier.verify(fields, { fileKey }).valid)
    return {
      ok: false,
      reason: 'not_sun_message',
      detail: `the PICCData decrypts to UID ${uid}, which is not registered, and the MAC does not verify under profile ${entry.profile.name}'s keys: not a message from a chip of this profile`,
      uid: null,
    }
  return { ok: false, reason: 'unknown_chip', detail: `no chip with UID ${uid} is registered`, uid }
}

/** The profile a plain-mirror chip uses; the loop's profile only if it is the chip's own. */
function chipEntry(chip: ChipRow, entry: ProfileEntry | undefined): ProfileEntry | undefined {
  return entry && chip.profileId === entry.profile.id ? entry : undefined
}
