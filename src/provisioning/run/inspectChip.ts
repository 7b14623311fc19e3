import type { ProvisioningRun } from '../../db/provisioning.js'
import { expectIsoOk, NTAG424_FILES, selectNdefApplication } from '../apdu.js'
import { encodeGetFileSettingsAnswer, FACTORY_NDEF_SETTINGS, getFileSettings, type DecodedFileSettings } from '../fileSettings.js'
import { getKeyVersion } from '../getKeyVersion.js'
import { GET_VERSION_APDUS, parseGetVersion, type Ntag424Version } from '../getVersion.js'
import { readSig, verifyOriginality } from '../originality.js'
import { NtagStatusError } from '../statusWords.js'
import type { CardLink } from './cardLink.js'

/*
 * `chip inspect`: what a chip is, read without a single key. Nothing here
 * authenticates (an aborted or failed authentication may count against the
 * chip's failed-authentication limit), so a random-ID chip's UID, and the mode
 * of a chip the gateway does not know, stay unknown.
 */

export type Verdict =
  | { kind: 'factory' }
  | { kind: 'tapgate'; runId: number }
  /** A run that did not finish: slots already at the run's target version, and those still at the old one. */
  | { kind: 'partial'; runId: number; done: number[]; pending: number[] }
  | { kind: 'foreign'; why: string }

export type ChipReading = {
  version: Ntag424Version
  /** Uppercase hex, or null with Random ID on. */
  uid: string | null
  /** true/false, or null when the signature could not be read (Random ID needs a key). */
  originality: boolean | null
  keyVersions: [number, number, number, number, number]
  /** Files 01–03; null for a file whose settings the chip refused to show. */
  files: (DecodedFileSettings | null)[]
}

const FACTORY_NDEF_ANSWER = encodeGetFileSettingsAnswer(0x00, NTAG424_FILES.ndef.size, FACTORY_NDEF_SETTINGS)

/** Whether the NDEF file's settings are the factory ones (`00 00 E0EE 000100`). */
export function isFactoryNdef(file: DecodedFileSettings | null): boolean {
  return file !== null && encodeGetFileSettingsAnswer(file.fileType, file.fileSize, file.settings).equals(FACTORY_NDEF_ANSWER)
}

/**
 * Classifies a reading against the gateway's journal for that UID (the newest run).
 * A chip is `partial` only when every slot holds either the run's old version or
 * its target: anything else is a key this gateway never wrote.
 *
 * @example
 * classifyChip(reading, undefined) // { kind: 'factory' } for a blank chip
 */
export function classifyChip(reading: Pick<ChipReading, 'uid' | 'keyVersions' | 'files'>, run: ProvisioningRun | undefined): Verdict {
  const versions = reading.keyVersions
  const allZero = versions.every((v) => v === 0)
  if (run && reading.uid !== null) {
    const target = run.targetVersions
    const at = versions.map((v, i) => (v === target[i] ? 'new' : v === run.slotVersions[i] || v === oldVersion(run, i) ? 'old' : 'other'))
    const done = at.flatMap((a, i) => (a === 'new' ? [i] : []))
    const pending = at.flatMap((a, i) => (a === 'old' ? [i] : []))
    if (at.includes('other')) return { kind: 'foreign', why: `key versions ${versions.join(',')} match neither the old nor the new keys of run ${run.id}` }
    if (run.state === 'provisioned' && pending.length === 0) return { kind: 'tapgate', runId: run.id }
    if (run.state === 'factory' && allZero && isFactoryNdef(reading.files[1] ?? null)) return { kind: 'factory' }
    if (run.state !== 'provisioned' && run.state !== 'factory') return { kind: 'partial', runId: run.id, done, pending }
  }
  if (allZero && reading.uid !== null && isFactoryNdef(reading.files[1] ?? null)) return { kind: 'factory' }
  if (reading.uid === null) return { kind: 'foreign', why: 'the chip hides its UID (Random ID): this gateway has no run it can match without authenticating' }
  if (allZero) return { kind: 'foreign', why: 'factory keys, but the NDEF file settings are not the factory ones' }
  return { kind: 'foreign', why: `key versions ${versions.join(',')} and no run of this gateway for UID ${reading.uid}` }
}

/** The versions the slots held before a run: its recorded starting point (factory 0 for a provisioning of a blank chip). */
function oldVersion(run: ProvisioningRun, slot: number): number {
  const plan = JSON.parse(run.plan) as { startVersions?: number[] }
  return plan.startVersions?.[slot] ?? 0
}

/**
 * Reads a chip without keys: select, GetVersion, Read_Sig (before any
 * authentication), GetKeyVersion 0–4, GetFileSettings 01–03.
 *
 * @param originalityKey the public key to trust instead of NXP's (software cards in tests only)
 */
export async function readChip(link: CardLink, originalityKey?: Uint8Array): Promise<ChipReading> {
  expectIsoOk(await link.transmit('select', selectNdefApplication()), 'ISOSelectFile')
  const answers: Buffer[] = []
  for (const apdu of GET_VERSION_APDUS) answers.push(await link.transmit('GetVersion', apdu))
  const version = parseGetVersion(answers)
  const uid = version.uid === null ? null : version.uid.toString('hex').toUpperCase()
  let originality: boolean | null = null
  if (uid !== null) {
    try {
      const signature = await link.run('Read_Sig', readSig())
      originality = verifyOriginality({ uid, signature, publicKey: originalityKey })
    } catch (error) {
      if (!(error instanceof NtagStatusError)) throw error
      originality = false
    }
  }
  const keyVersions = [0, 0, 0, 0, 0] as ChipReading['keyVersions']
  for (let k = 0; k < 5; k++) keyVersions[k] = await link.run(`GetKeyVersion ${k}`, getKeyVersion(k))
  const files: (DecodedFileSettings | null)[] = []
  for (const fileNo of [1, 2, 3]) {
    try {
      files.push(await link.run(`GetFileSettings ${fileNo}`, getFileSettings(fileNo)))
    } catch (error) {
      if (!(error instanceof NtagStatusError)) throw error
      files.push(null)
    }
  }
  return { version, uid, originality, keyVersions, files }
}
