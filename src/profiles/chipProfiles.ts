import type { ChipProfileRow, KeyScheme } from '../db/chipProfiles.js'
import type { Store, Repositories, Transactional } from '../db/store.js'
import { NotFoundError, ValidationError } from '../errors.js'
import { SealedKeyError } from '../keys/errors.js'
import { chipKeyContext, profileKeyContext } from '../keys/keyContexts.js'
import { openKey, sealKey } from '../keys/sealKey.js'
import { planProfileOf, planProvisioning, ProvisioningPlanError } from '../provisioning/run/planProvisioning.js'
import { checkSunLayout, isSunOffsetLayout, SunLayoutError, type SunLayout } from '../sun/index.js'

type Slot = 'meta' | 'file' | 'master'
const slots = ['meta', 'file', 'master'] as const
/** The input field (and import file field) of each key slot. */
const field = { meta: 'metaKey', file: 'fileKey', master: 'masterKey' } as const satisfies Record<Slot, string>

/**
 * The profile keys each scheme needs; a scheme needs no other. The meta key can
 * never be diversified per chip: it decrypts the PICCData that names the chip.
 */
export const schemeKeys: Record<KeyScheme, readonly Slot[]> = {
  /** One meta key and one file key for every chip of the profile. */
  static: ['meta', 'file'],
  /** The profile's meta key; each chip's own file key (chip set --file-key, or `fileKey` on the chip in the import file). */
  per_chip: ['meta'],
  /** The profile's meta key; file key = AN10922 diversification of the master key with M = UID. */
  an10922: ['meta', 'master'],
  /** Both keys derived from one master key as sdm-backend's "standard" scheme does (meta key undiversified, file key slot 2 per UID). */
  sdm_backend: ['master'],
  /** Bolt Card deterministic keys from the issuer key: K1 (meta) shared, K2 (file) per UID and the chip's key version. */
  boltcard: ['master'],
}

export type UpsertChipProfileParameters = {
  teamId: number
  name: string
  /** Left out: the stored profile's mode, else AES. */
  mode?: 'aes' | 'lrp'
  keyScheme: KeyScheme
  /** Parameter names or SDM offsets; null for the default names (e/c/d, picc_data/cmac/enc, uid/ctr/cmac); left out keeps the stored layout. */
  layout?: SunLayout | null
  /**
   * The tap URL `chip provision` writes to this profile's chips, e.g.
   * `https://tap.example/t?e={picc}&c={mac}`; null clears it, left out keeps the stored one.
   */
  urlTemplate?: string | null
  /**
   * 32 hex characters each. A key the scheme needs may be left out when the
   * profile already holds it (it is kept, after checking it opens under this
   * secret); a key the scheme does not use is refused.
   */
  metaKey?: string
  fileKey?: string
  masterKey?: string
  now: number
}

/** What may be shown of a profile: everything but its keys. */
export type ChipProfileView = {
  profileId: number
  teamId: number
  name: string
  mode: 'aes' | 'lrp'
  keyScheme: KeyScheme
  layout: SunLayout | null
  urlTemplate: string | null
}

/**
 * A profile as the CLI prints it. Never contains key material.
 *
 * @example
 * chipProfileView(store.chipProfiles.get(1)!) // { profileId: 1, teamId: 1, name: 'tags', mode: 'aes', keyScheme: 'static', layout: null, urlTemplate: null }
 */
export function chipProfileView(row: ChipProfileRow): ChipProfileView {
  return {
    profileId: row.id,
    teamId: row.teamId,
    name: row.name,
    mode: row.mode,
    keyScheme: row.keyScheme,
    layout: row.layout === null ? null : (JSON.parse(row.layout) as SunLayout),
    urlTemplate: row.urlTemplate,
  }
}

/** A profile as `tapgate profile list` prints it: the view, how many of the team's chips use it, and whether its keys open. */
export type ChipProfileListing = ChipProfileView & { chips: number; keysOpen: boolean; updatedAt: string }

/**
 * A team's chip profiles as `tapgate profile list` prints them (and the console lists them): never a
 * key. `keysOpen` says whether the keys open under `secret`: the first thing to check when taps answer
 * chip_keys_unavailable.
 *
 * @example
 * listChipProfiles(store, secret, 1) // [{ profileId: 1, …, name: 'tags', chips: 12, keysOpen: true, updatedAt: '2026-…' }]
 */
export async function listChipProfiles(store: Repositories, secret: Buffer, teamId: number): Promise<ChipProfileListing[]> {
  const broken = new Set((await unopenableProfiles(store, secret)).map((b) => b.profileId))
  const chips = await store.chips.listByTeam(teamId)
  return (await store.chipProfiles.listByTeam(teamId)).map((row) => ({
    ...chipProfileView(row),
    chips: chips.filter((c) => c.profileId === row.id).length,
    keysOpen: !broken.has(row.id),
    updatedAt: new Date(row.updatedAt).toISOString(),
  }))
}

function opens(secret: Buffer, blob: Buffer, context: string): boolean {
  try {
    openKey(secret, blob, context)
    return true
  } catch (error) {
    if (error instanceof SealedKeyError) return false
    throw error
  }
}

/** Parses a 32-hex key without ever putting its value in the message. */
function hexKey(value: string | undefined, name: string, errors: Record<string, string>): Buffer | null {
  if (value === undefined) return null
  if (!/^[0-9a-fA-F]{32}$/.test(value)) {
    errors[name] = `Must be 32 hex characters (an AES-128 key), got ${value.length} characters`
    return null
  }
  return Buffer.from(value, 'hex')
}

/**
 * Resolves the layout to store: the given one (checked) or the stored one, with
 * an offset layout pinned to the profile's mode so the PICCData length is never guessed.
 */
function resolveLayout(given: SunLayout | null | undefined, stored: string | null, mode: 'aes' | 'lrp', errors: Record<string, string>): string | null {
  const layout = given === undefined ? (stored === null ? null : (JSON.parse(stored) as SunLayout)) : given
  if (layout === null) return null
  try {
    checkSunLayout(layout)
  } catch (error) {
    if (!(error instanceof SunLayoutError)) throw error
    errors.layout = error.message
    return null
  }
  if (!isSunOffsetLayout(layout)) return JSON.stringify(layout)
  if (given !== undefined && given !== null && isSunOffsetLayout(given) && given.mode !== undefined && given.mode !== mode) {
    errors['layout.mode'] = `The layout says ${given.mode.toUpperCase()} but the profile's mode is ${mode.toUpperCase()}`
    return null
  }
  return JSON.stringify({ ...layout, mode })
}

/**
 * Resolves the URL template to store: the given one or the stored one, checked
 * with the very plan `chip provision` makes (data-sheet rules, and the profile's
 * layout reading each mirror where the chip writes it), so a profile never holds
 * a template its own layout cannot read. A stored template is checked again on
 * every update, since a new layout or mode can break it.
 */
function resolveUrlTemplate(
  given: string | null | undefined,
  stored: string | null,
  profile: { id: number; name: string; keyScheme: KeyScheme; mode: 'aes' | 'lrp'; layout: string | null },
  errors: Record<string, string>,
): string | null {
  const template = given === undefined ? stored : given
  // Against a layout that was itself refused the check would only add noise.
  if (template === null || errors.layout !== undefined || errors['layout.mode'] !== undefined) return template
  try {
    planProvisioning({
      profile: planProfileOf(profile),
      template,
      lrp: profile.mode === 'lrp',
    })
  } catch (error) {
    if (!(error instanceof ProvisioningPlanError)) throw error
    errors.urlTemplate =
      given === undefined
        ? `The stored URL template ${JSON.stringify(template)} does not fit the profile as changed (${error.message}): give a template that does, or clear it`
        : error.message
  }
  return template
}

/**
 * Creates or updates a chip profile (matched by team and name), sealing its
 * keys under the gateway secret with AES-256-GCM, bound to the profile id and
 * key slot. The keys a scheme needs are required unless already stored; keys
 * it does not use are refused so nobody believes they are in effect. All
 * problems are reported at once, by field; no message contains a key.
 *
 * @returns the profile id
 * @throws ValidationError (400; `errors` keyed by field: metaKey, fileKey, masterKey, layout, layout.mode, urlTemplate),
 *   also when a stored key to keep does not open under this secret
 * @throws NotFoundError (404) when the team does not exist
 * @example
 * upsertChipProfile(store, secret, { teamId: 1, name: 'tags', keyScheme: 'static', metaKey, fileKey, now: Date.now() })
 */
export function upsertChipProfile(store: Transactional, secret: Buffer, p: UpsertChipProfileParameters): Promise<number> {
  return store.tx(async (tx) => {
    if (!await tx.teams.get(p.teamId)) throw new NotFoundError('team_not_found', `No team with id ${p.teamId}`)
    const existing = await tx.chipProfiles.getByName(p.teamId, p.name)
    const errors: Record<string, string> = {}
    const given = { meta: hexKey(p.metaKey, 'metaKey', errors), file: hexKey(p.fileKey, 'fileKey', errors), master: hexKey(p.masterKey, 'masterKey', errors) }
    const need = schemeKeys[p.keyScheme]
    /** Sealed blobs kept from the stored profile (same id, so they still open in their context). */
    const kept: Partial<Record<Slot, Buffer>> = {}
    for (const slot of slots) {
      const name = field[slot]
      if (!need.includes(slot)) {
        if (p[name] !== undefined) errors[name] ??= `Key scheme ${p.keyScheme} does not use a ${name} (it needs ${need.map((s) => field[s]).join(' and ')})`
        continue
      }
      if (p[name] !== undefined) continue
      const stored = existing?.[name]
      if (stored) kept[slot] = stored
      else errors[name] = `Key scheme ${p.keyScheme} needs a ${name}`
    }
    const mode = p.mode ?? existing?.mode ?? 'aes'
    const layout = resolveLayout(p.layout, existing?.layout ?? null, mode, errors)
    const urlTemplate = resolveUrlTemplate(p.urlTemplate, existing?.urlTemplate ?? null, { id: existing?.id ?? 0, name: p.name, keyScheme: p.keyScheme, mode, layout }, errors)
    // A kept key must open under this secret, or the profile would mix keys of two secrets.
    for (const slot of slots) {
      const blob = kept[slot]
      if (!blob || opens(secret, blob, profileKeyContext(existing!.id, slot))) continue
      errors[field[slot]] = `The stored ${field[slot]} does not open under this gateway secret (it was sealed under another one): give the key again`
    }
    if (Object.keys(errors).length > 0) throw new ValidationError(`Chip profile ${JSON.stringify(p.name)} is not valid`, errors)

    // Strictly later than the stored updatedAt, even within one millisecond: it is how other processes' keyrings notice the change.
    const now = existing ? Math.max(p.now, existing.updatedAt + 1) : p.now
    const base = { teamId: p.teamId, name: p.name, mode, layout, urlTemplate, keyScheme: p.keyScheme, now }
    // The id is part of the sealing context, so a new profile is inserted first, then sealed and stored.
    const id = existing?.id ?? await tx.chipProfiles.upsert({ ...base, metaKey: null, fileKey: null, masterKey: null })
    const blob = (slot: Slot) => {
      const key = given[slot]
      if (key && need.includes(slot)) return sealKey(secret, key, profileKeyContext(id, slot))
      return kept[slot] ?? null
    }
    await tx.chipProfiles.upsert({ ...base, metaKey: blob('meta'), fileKey: blob('file'), masterKey: blob('master') })
    return id
  })
}

export type SetChipVerificationParameters = {
  uid: string
  teamId: number
  /** The profile's name in the chip's team; null takes the chip off its profile (and drops its file key). */
  profileName: string | null
  /** The chip's own SDM file read key (32 hex), for a per_chip profile; left out keeps the stored one. */
  fileKey?: string
  /** The chip answers anticollision with a random ID, so a station cannot compare the RF UID. Left out: unchanged. */
  randomUid?: boolean
  /** Bolt Card key version. Left out: unchanged (default 1). */
  keyVersion?: number
}

/**
 * Puts a chip under a profile, with its own file key where the profile keeps
 * keys per chip (sealed, bound to the chip's UID).
 *
 * @throws NotFoundError (404) for a chip or profile not in the team
 * @throws ValidationError (400; `errors` keyed by field: profile, fileKey, keyVersion)
 * @example
 * setChipVerification(store, secret, { uid: '04DE5F1EACC040', teamId: 1, profileName: 'tags' })
 */
export async function setChipVerification(store: Transactional, secret: Buffer, p: SetChipVerificationParameters): Promise<void> {
  await store.tx(async (tx) => {
    const chip = await tx.chips.get(p.uid)
    if (!chip || chip.teamId !== p.teamId) throw new NotFoundError('chip_not_found', `No chip with UID ${p.uid} in this team`)
    const profile = p.profileName === null ? null : await tx.chipProfiles.getByName(p.teamId, p.profileName)
    if (profile === undefined) throw new NotFoundError('profile_not_found', `No chip profile named ${JSON.stringify(p.profileName)} in this team`)
    const errors: Record<string, string> = {}
    const fileKey = hexKey(p.fileKey, 'fileKey', errors)
    if (profile && chip.kind === 'ntag21x') errors.profile = `Chip ${chip.uid} is an NTAG 21x: its mirrors carry no MAC, so no keys apply`
    if (p.fileKey !== undefined && profile?.keyScheme !== 'per_chip')
      errors.fileKey ??= profile
        ? `Profile ${profile.name} (key scheme ${profile.keyScheme}) does not keep keys per chip`
        : 'A chip file key needs a profile with key scheme per_chip'
    // A stored key from another profile would silently carry over: keep it only when the profile is unchanged.
    const storedKey = profile && chip.profileId === profile.id ? chip.fileKey : null
    if (profile?.keyScheme === 'per_chip' && p.fileKey === undefined && !storedKey)
      errors.fileKey = `Profile ${profile.name} keeps keys per chip: give the chip's fileKey`
    if (p.keyVersion !== undefined && (!Number.isInteger(p.keyVersion) || p.keyVersion < 0 || p.keyVersion > 0xffffffff))
      errors.keyVersion = 'Must be an integer 0…4294967295'
    if (storedKey && p.fileKey === undefined && !opens(secret, storedKey, chipKeyContext(chip.uid)))
      errors.fileKey = 'The stored fileKey does not open under this gateway secret (it was sealed under another one): give the key again'
    if (Object.keys(errors).length > 0) throw new ValidationError(`Chip ${chip.uid} cannot use this profile`, errors)
    await tx.chips.setVerification({
      uid: chip.uid,
      profileId: profile?.id ?? null,
      randomUid: p.randomUid ?? chip.randomUid === 1,
      fileKey: profile?.keyScheme !== 'per_chip' ? null : fileKey ? sealKey(secret, fileKey, chipKeyContext(chip.uid)) : storedKey,
      keyVersion: p.keyVersion ?? chip.keyVersion,
    })
  })
}

/**
 * The profiles whose keys do not open under this secret: what a secret
 * mismatch between the CLI and the server, or a replaced secret.key, looks
 * like. Opens each sealed profile key once; names only, never keys.
 *
 * @example
 * unopenableProfiles(store, secret) // [{ profileId: 2, teamId: 1, name: 'old tags', context: 'profile:2:meta' }]
 */
export async function unopenableProfiles(store: Repositories, secret: Buffer): Promise<{ profileId: number; teamId: number; name: string; context: string }[]> {
  return (await store.chipProfiles.list()).flatMap((profile) => {
    const slot = slots.find((s) => {
      const blob = profile[field[s]]
      return blob !== null && !opens(secret, blob, profileKeyContext(profile.id, s))
    })
    return slot ? [{ profileId: profile.id, teamId: profile.teamId, name: profile.name, context: profileKeyContext(profile.id, slot) }] : []
  })
}

/**
 * Refuses to seal keys under a secret that does not open the keys already
 * stored: the usual cause is the CLI run without the server's TAPGATE_SECRET,
 * which would seal new keys under a fresh secret.key the server never reads.
 * Profiles for which `except` is true are being sealed again in full now, so
 * they do not count (re-registering every key is how a lost secret is recovered).
 *
 * @throws SealedKeyError (503, reason other_secret) naming the first profile whose keys do not open
 * @example
 * assertSecretOpensStoredKeys(store, secret, { except: (p) => p.teamId === 1 && p.name === 'tags' })
 */
export async function assertSecretOpensStoredKeys(
  store: Transactional,
  secret: Buffer,
  { except = () => false }: { except?: (profile: { teamId: number; name: string }) => boolean } = {},
): Promise<void> {
  const broken = (await unopenableProfiles(store, secret)).find((b) => !except(b))
  if (broken) throw new SealedKeyError(broken.context, 'other_secret')
}
