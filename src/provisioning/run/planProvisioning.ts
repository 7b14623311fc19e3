import type { ChipProfileRow, KeyScheme } from '../../db/chipProfiles.js'
import { extractSunFields } from '../../sun/extractSunFields.js'
import { isSunOffsetLayout, type SunLayout } from '../../sun/sunLayout.js'
import { NTAG424_FILES } from '../apdu.js'
import { encodeFileSettings, type FileSettings } from '../fileSettings.js'
import { planNdefUrl, sdmFileSettings, type NdefUrlPlan } from '../ndefUrl.js'
import { ndefWritePlan } from '../writeData.js'

/*
 * The plan of one provisioning run: everything that goes to the chip except
 * the keys. It is printed by `chip provision --dry-run` and stored (as JSON) in
 * the journal, so it must never hold key bytes: slots say where a key comes
 * from, not what it is.
 */

/** Key 1 encrypts PICCData (MetaRead), key 2 MACs (FileRead): sdm-backend's and Bolt Card's slots, which our profiles model. */
export const META_SLOT = 1
export const FILE_SLOT = 2

export type SlotRole = 'master' | 'meta' | 'file' | 'spare'
export type SlotPlan = { keyNo: number; role: SlotRole; source: string }

export type ProvisioningPlan = {
  profile: { id: number; name: string; keyScheme: KeyScheme }
  mode: 'aes' | 'lrp'
  template: string
  /** The URL as written (placeholders zero-filled: the chip overwrites them per tap). */
  url: string
  ndefFile: string
  ndefLength: number
  /** WriteData steps (offset, length): NLEN 0000 first, the real NLEN last. */
  ndefWrites: { offset: number; length: number }[]
  fileSettings: FileSettings
  /** ChangeFileSettings CmdData before encryption (settings only, never a key). */
  fileSettingsHex: string
  slots: SlotPlan[]
  /** Irreversible switches this run makes (empty for a plain AES run). */
  irreversible: ('lrp' | 'randomId')[]
}

export type PlanProvisioningParameters = {
  profile: { id: number; name: string; keyScheme: KeyScheme; mode: 'aes' | 'lrp'; layout: SunLayout | null }
  template: string
  /** Switch the chip to LRP (irreversible); the profile must be an LRP profile. */
  lrp?: boolean
  randomId?: boolean
}

/** A stored chip profile as the plan reads it: its layout parsed from the stored JSON. */
export function planProfileOf(row: Pick<ChipProfileRow, 'id' | 'name' | 'keyScheme' | 'mode' | 'layout'>): PlanProvisioningParameters['profile'] {
  return { id: row.id, name: row.name, keyScheme: row.keyScheme, mode: row.mode, layout: row.layout === null ? null : (JSON.parse(row.layout) as SunLayout) }
}

/** A template or profile that cannot be provisioned as asked; nothing was sent to a card. */
export class ProvisioningPlanError extends Error {
  override name = 'ProvisioningPlanError'
}

const SOURCES: Record<KeyScheme, Record<Exclude<SlotRole, 'spare'>, string>> = {
  static: { master: 'random, per chip', meta: "the profile's meta key", file: "the profile's file key" },
  per_chip: { master: 'random, per chip', meta: "the profile's meta key", file: 'random, per chip (stored sealed on the chip)' },
  an10922: { master: 'random, per chip', meta: "the profile's meta key", file: 'AN10922 diversification of the master key with the UID' },
  sdm_backend: { master: 'sdm-backend derivation, slot 0, per UID', meta: 'sdm-backend meta key', file: 'sdm-backend derivation, slot 2, per UID' },
  boltcard: { master: 'Bolt Card K0 (per UID and key version)', meta: 'Bolt Card K1 (issuer-wide)', file: 'Bolt Card K2 (per UID and key version)' },
}

function spareSource(scheme: KeyScheme, keyNo: number): string {
  if (scheme === 'sdm_backend') return `sdm-backend derivation, slot ${keyNo}, per UID`
  if (scheme === 'boltcard') return `Bolt Card K${keyNo} (per UID and key version)`
  return 'random, per chip'
}

/**
 * Checks that the gateway, reading this chip's URLs with the profile's layout,
 * finds each mirror where the chip writes it: fills each mirror with its own
 * marker, then extracts with the profile's layout.
 */
function checkLayoutAgrees(plan: NdefUrlPlan, layout: SunLayout | null): string | null {
  if (layout !== null && isSunOffsetLayout(layout) && plan.sunLayout) {
    const a = plan.sunLayout
    const same = a.piccOffset === layout.piccOffset && a.macInputOffset === layout.macInputOffset && a.macOffset === layout.macOffset
      && (a.encOffset ?? null) === (layout.encOffset ?? null) && (a.encLength ?? null) === (layout.encLength ?? null)
    return same ? null : `the profile's offset layout ${JSON.stringify(layout)} differs from this template's ${JSON.stringify(a)}`
  }
  const fill = (text: string, at: number | undefined, char: string, width: number) =>
    at === undefined ? text : text.slice(0, at) + char.repeat(width) + text.slice(at + width)
  const urlIndex = (fileOffset: number) => fileOffset - 7 + plan.uriPrefix.prefix.length
  const o = plan.offsets
  let url = plan.url
  const piccWidth = plan.mode === 'lrp' ? 48 : 32
  if (o.piccData !== undefined) url = fill(url, urlIndex(o.piccData), 'A', piccWidth)
  if (o.encData !== undefined) url = fill(url, urlIndex(o.encData), 'C', o.encLength!)
  if (o.uid !== undefined) url = fill(url, urlIndex(o.uid), 'D', 14)
  if (o.readCtr !== undefined) url = fill(url, urlIndex(o.readCtr), 'E', 6)
  url = fill(url, urlIndex(o.mac!), 'B', 16)
  let extracted
  try {
    extracted = extractSunFields(url, layout ?? undefined)
  } catch (error) {
    return (error as Error).message
  }
  if (!extracted.ok) return `the gateway would not read this URL with the profile's layout: ${extracted.detail}`
  if (extracted.kind === 'sun') {
    if (o.piccData === undefined) return 'the profile expects PICCData ({picc}) but the template mirrors the UID in clear'
    if (extracted.piccData !== 'A'.repeat(piccWidth) || extracted.sdmmac !== 'B'.repeat(16))
      return "the profile's layout reads PICCData or the MAC from other characters than the chip writes them to"
    const macInput = url.slice(urlIndex(o.macInput!), urlIndex(o.mac!))
    if (extracted.macInput !== macInput) return "the profile's layout computes the MAC over other characters than the chip does"
    return null
  }
  if (extracted.kind === 'plain_mirror') {
    if (o.piccData !== undefined) return 'the profile reads a plain UID mirror but the template has {picc}'
    return extracted.cmac === 'B'.repeat(16) ? null : "the profile's layout reads the MAC from other characters than the chip writes it to"
  }
  return 'the profile reads this URL as an NTAG 21x mirror (no MAC): add {mac}'
}

/**
 * Plans a run from a chip profile and a URL template: NDEF file, writes, SDM
 * file settings (validated against the data sheet's rules by sdmFileSettings),
 * the slot plan and irreversible switches. Pure; holds no key.
 *
 * @throws ProvisioningPlanError naming what to change (template, layout, mode)
 * @example
 * planProvisioning({ profile: { id: 1, name: 'tags', keyScheme: 'per_chip', mode: 'aes', layout: null }, template: 'https://t.example/tap?e={picc}&c={mac}' })
 */
export function planProvisioning(p: PlanProvisioningParameters): ProvisioningPlan {
  const mode = p.profile.mode
  if (p.lrp && mode !== 'lrp') throw new ProvisioningPlanError(`--lrp needs an LRP profile: profile ${p.profile.name} verifies AES taps`)
  if (!p.lrp && mode === 'lrp')
    throw new ProvisioningPlanError(`profile ${p.profile.name} verifies LRP taps: give --lrp --irreversible (a factory chip is in AES mode)`)
  let plan: NdefUrlPlan
  let settings: FileSettings
  try {
    plan = planNdefUrl(p.template, { mode })
    settings = sdmFileSettings(plan, {
      metaRead: plan.offsets.piccData === undefined ? 'E' : (String(META_SLOT) as '1'),
      fileRead: String(FILE_SLOT) as '2',
    })
  } catch (error) {
    throw new ProvisioningPlanError((error as Error).message)
  }
  const disagreement = checkLayoutAgrees(plan, p.profile.layout)
  if (disagreement) throw new ProvisioningPlanError(`profile ${p.profile.name}: ${disagreement}`)
  const scheme = p.profile.keyScheme
  const sources = SOURCES[scheme]
  const slots: SlotPlan[] = [
    { keyNo: 0, role: 'master', source: sources.master },
    { keyNo: META_SLOT, role: plan.offsets.piccData === undefined ? 'spare' : 'meta', source: plan.offsets.piccData === undefined ? spareSource(scheme, 1) : sources.meta },
    { keyNo: FILE_SLOT, role: 'file', source: sources.file },
    { keyNo: 3, role: 'spare', source: spareSource(scheme, 3) },
    { keyNo: 4, role: 'spare', source: spareSource(scheme, 4) },
  ]
  const irreversible: ProvisioningPlan['irreversible'] = []
  if (p.lrp) irreversible.push('lrp')
  if (p.randomId) irreversible.push('randomId')
  return {
    profile: { id: p.profile.id, name: p.profile.name, keyScheme: scheme },
    mode,
    template: p.template,
    url: plan.url,
    ndefFile: plan.ndefFile.toString('hex').toUpperCase(),
    ndefLength: plan.ndefFile.length,
    ndefWrites: ndefWritePlan(plan.ndefFile).map((w) => ({ offset: w.offset, length: w.data.length })),
    fileSettings: settings,
    fileSettingsHex: encodeFileSettings(settings, { fileNo: NTAG424_FILES.ndef.fileNo, mode }).toString('hex').toUpperCase(),
    slots,
    irreversible,
  }
}

/** What each irreversible switch costs, printed before anything is written. */
export const IRREVERSIBLE_CONSEQUENCES: Record<'lrp' | 'randomId', string> = {
  lrp: 'LRP mode is permanent: the chip never answers AES authentication again, its PICCData becomes 48 characters, and a reset cannot undo it',
  randomId: 'Random ID is permanent: the chip answers anticollision with a new random UID each time, so readers and phones see no UID; only an authenticated GetCardUID reveals it, and a reset cannot undo it',
}
