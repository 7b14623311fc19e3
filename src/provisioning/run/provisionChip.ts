import type { ChipProfileRow } from '../../db/chipProfiles.js'
import type { ProvisioningRun, SlotVersions } from '../../db/provisioning.js'
import type { Store, Repositories } from '../../db/store.js'
import { sealKey } from '../../keys/sealKey.js'
import { NDEF_URI_PREFIXES } from '../../sun/ndefUriPrefix.js'
import { chipKeyContext } from '../../keys/keyContexts.js'
import { createKeyring } from '../../taps/createKeyring.js'
import { verifyTap } from '../../taps/verifyTap.js'
import { CardRemovedError } from '../../card/cardSession.js'
import { expectIsoOk, NTAG424_FILES, readBinary, selectFile, selectNdefApplication } from '../apdu.js'
import { SecureMessagingError } from '../errors.js'
import { changeFileSettings } from '../fileSettings.js'
import type { SecureSession } from '../secureMessaging.js'
import { setConfiguration } from '../setConfiguration.js'
import { NtagStatusError } from '../statusWords.js'
import { ndefWritePlan, writeData } from '../writeData.js'
import type { CardLink } from './cardLink.js'
import { classifyChip, readChip, type ChipReading, type Verdict } from './inspectChip.js'
import { resolveRandomUid } from './randomId.js'
import { authenticateKey0, changeKeys, currentKey, openRunKeys, ProvisioningStopped, sealRunKeys } from './keySession.js'
import { FILE_SLOT, planProfileOf, planProvisioning, ProvisioningPlanError, type ProvisioningPlan } from './planProvisioning.js'
import { factoryKeys, FILE_KEY_CHANGES, nextKeyVersion, provisioningKeys, targetVersions, type SlotKeys } from './provisioningKeys.js'

export type ProvisionChipParameters = {
  store: Store
  secret: Buffer
  link: CardLink
  teamId: number
  profile: ChipProfileRow
  template: string
  lrp?: boolean
  randomId?: boolean
  /** Trust this originality key instead of NXP's (software cards only). */
  originalityKey?: Uint8Array
  /** Provision a chip whose originality signature does not verify. */
  allowUnverified?: boolean
  now?: () => number
}

export type ProvisionResult = {
  uid: string
  runId: number
  /** new: a factory chip; resumed: a run a pulled card left; reprovisioned: a tapgate chip re-keyed. */
  how: 'new' | 'resumed' | 'reprovisioned'
  keyVersion: number
  /** The verified first tap. */
  counter: number
  url: string
}

/** The plan as the journal stores it: with the versions the slots started at (still no key). */
type StoredPlan = ProvisioningPlan & { startVersions: number[] }

/** Reads the NDEF file as a phone does (select, ReadBinary NLEN, then the message) and rebuilds its URL. */
export async function readNdefUrl(link: CardLink): Promise<string> {
  expectIsoOk(await link.transmit('select', selectNdefApplication()), 'ISOSelectFile')
  expectIsoOk(await link.transmit('select NDEF file', selectFile(NTAG424_FILES.ndef.fid)), 'ISOSelectFile')
  const nlen = expectIsoOk(await link.transmit('ReadBinary NLEN', readBinary(0, 2)), 'ReadBinary').readUInt16BE(0)
  const message = expectIsoOk(await link.transmit('ReadBinary NDEF', readBinary(2, nlen)), 'ReadBinary')
  if (message.length < 5 || message[0] !== 0xd1 || message[1] !== 0x01 || message[3] !== 0x55)
    throw new ProvisioningStopped('verify_failed', 'the NDEF file does not hold one short URI record')
  const prefix = NDEF_URI_PREFIXES[message[4]!] ?? ''
  return prefix + message.subarray(5, 4 + message[2]!).toString('ascii')
}

function refuse(message: string): never {
  throw new ProvisioningStopped('refused', message)
}

/** Decides what to do with the chip on the reader; refuses everything but factory and our own runs. */
function decide(p: ProvisionChipParameters, reading: ChipReading, verdict: Verdict, latest: ProvisioningRun | undefined): 'new' | 'resumed' | 'reprovisioned' {
  if (reading.originality === false && !p.allowUnverified)
    refuse(`chip ${reading.uid}: its originality signature does not verify (not a genuine NXP chip?); nothing was written (--allow-unverified accepts it)`)
  switch (verdict.kind) {
    case 'factory':
      return 'new'
    case 'foreign':
      return refuse(`chip ${reading.uid ?? '(random ID)'} is foreign: ${verdict.why}. Nothing was written; no key was tried`)
    case 'partial':
      // Each refused authentication counts on the chip (a blocked key 0 is permanent): a person looks first.
      if (latest!.failure?.startsWith('auth_failed'))
        refuse(`chip ${reading.uid}: run ${latest!.id} stopped because the card refused its stored key; not trying again (${latest!.failure})`)
      if (latest!.kind !== 'provision') refuse(`chip ${reading.uid}: a reset (run ${latest!.id}) did not finish; finish it with tapgate chip reset --uid ${reading.uid}`)
      if (latest!.teamId !== p.teamId || latest!.profileId !== p.profile.id)
        refuse(`chip ${reading.uid}: run ${latest!.id} was for another team or profile; finish it with that profile, or reset the chip`)
      return 'resumed'
    case 'tapgate':
      if (!FILE_KEY_CHANGES[p.profile.keyScheme])
        refuse(`chip ${reading.uid} is already provisioned, and profile ${p.profile.name} (key scheme ${p.profile.keyScheme}) derives its file key from the UID alone: re-provisioning rewinds the chip's counter under the same key, so its old URLs would verify again. Use a per_chip or boltcard profile, or keep the chip as it is`)
      if (latest!.teamId !== p.teamId) refuse(`chip ${reading.uid} belongs to another team`)
      return 'reprovisioned'
  }
}

/**
 * Starts a run: plan, keys, and the journal row with the sealed keys, committed
 * (and opened again) before the card sees a single ChangeKey.
 */
async function startRun(p: ProvisionChipParameters, uid: string, reading: ChipReading, previous: ProvisioningRun | undefined, how: 'new' | 'reprovisioned', now: number): Promise<ProvisioningRun> {
  const store = p.store
  const plan = planProvisioning({
    profile: planProfileOf(p.profile),
    template: p.template,
    lrp: p.lrp,
    randomId: p.randomId,
  })
  const chip = await store.chips.get(uid)
  if (chip && chip.teamId !== p.teamId) refuse(`chip ${uid} belongs to team ${chip.teamId}`)
  const keyVersion = nextKeyVersion(Math.max(previous?.keyVersion ?? 0, chip?.keyVersion ?? 0), reading.keyVersions)
  const keys = provisioningKeys({ profile: p.profile, secret: p.secret, uid, keyVersion })
  const old: SlotKeys = how === 'reprovisioned' ? openRunKeys(p.secret, previous!).keys : factoryKeys()
  if (how === 'reprovisioned' && keys[FILE_SLOT].equals(old[FILE_SLOT])) refuse(`chip ${uid}: the new file key equals the old one; refusing (old URLs would verify again)`)
  const stored: StoredPlan = { ...plan, startVersions: [...reading.keyVersions] }
  const runId = await store.tx(async (tx) => {
    const id = await tx.provisioning.insert({
      uid,
      teamId: p.teamId,
      profileId: p.profile.id,
      kind: 'provision',
      state: 'pending',
      mode: p.profile.mode,
      randomId: p.randomId ?? false,
      keyVersion,
      targetVersions: targetVersions(keyVersion),
      slotVersions: [...reading.keyVersions] as SlotVersions,
      plan: JSON.stringify(stored),
      now,
          })
      const sealed = sealRunKeys(p.secret, id, keys, old)
      await tx.provisioning.setKeys(id, sealed.keys, sealed.old, now)
      if (!chip) await tx.chips.insert({ uid, teamId: p.teamId, groupId: null, kind: 'ntag424', redirectUrl: null, now })
      return id
    })
  const run = (await store.provisioning.get(runId))!
  // Read back from the committed row: a key that does not open now would be lost after ChangeKey.
  const check = openRunKeys(p.secret, run)
  if (!check.keys.every((k, i) => k.equals(keys[i]!))) throw new Error(`run ${runId}: the stored keys do not open to the planned ones`)
  return run
}

/**
 * Provisions the chip on the reader: a factory chip, a run a pulled card left
 * (resumed from the card's key versions and the journal, never by trying keys),
 * or one of this gateway's chips again (always with a new file key). Ends by
 * reading the URL as a phone would and verifying it with the gateway's own
 * verifier (right UID, counter 1); only then is the chip provisioned.
 *
 * @throws ProvisioningStopped (refused, auth_failed, card_removed, verify_failed, card_error); the journal says where
 */
export async function provisionChip(p: ProvisionChipParameters): Promise<ProvisionResult> {
  const now = p.now ?? Date.now
  const store = p.store
  let reading: ChipReading
  try {
    reading = await readChip(p.link, p.originalityKey)
  } catch (error) {
    throw asStopped(error)
  }
  if (reading.uid === null) {
    try {
      reading = { ...reading, uid: await resolveRandomUid(store, p.secret, p.link, reading) }
    } catch (error) {
      throw asStopped(error)
    }
  }
  const uid = reading.uid!
  const latest = await store.provisioning.latest(uid)
  const verdict = classifyChip(reading, latest)
  const how = decide(p, reading, verdict, latest)
  let run: ProvisioningRun
  try {
    run = how === 'resumed' ? latest! : await startRun(p, uid, reading, latest, how, now())
  } catch (error) {
    throw asStopped(error)
  }
  const plan = JSON.parse(run.plan) as StoredPlan
  const keys = openRunKeys(p.secret, run)
  const journal = (step: { step: string; sw: string | null; ms: number; ok: boolean; detail: string | null }) =>
    store.provisioning.addStep({ runId: run.id, ...step, at: now() })
  p.link.steps.forEach(journal)
  p.link.onStep = journal
  try {
    const versions = [...reading.keyVersions] as SlotVersions
    // Even with every key already changed, the session runs again: its ChangeFileSettings resets the
    // chip's counter, so a verification read lost to a pulled card still ends at counter 1. The
    // chip's mode: LRP once this run's switch was answered (journaled), AES before.
    let mode: 'aes' | 'lrp' = run.mode === 'lrp' && plan.irreversible.includes('lrp') && await lrpSwitched(store, run.id) ? 'lrp' : 'aes'
    let session: SecureSession
    try {
      session = await authenticateKey0(p.link, currentKey(0, versions[0], run, keys), mode)
    } catch (error) {
      // 91 9D to AES part 1: the chip is already in LRP mode (this run's SetConfiguration went
      // through but its answer was lost). Part 1 was refused, so no authentication was spent.
      if (!(run.mode === 'lrp' && mode === 'aes' && error instanceof NtagStatusError && error.sw === 0x919d)) throw error
      mode = 'lrp'
      session = await authenticateKey0(p.link, currentKey(0, versions[0], run, keys), mode)
    }
    if (run.mode === 'lrp' && mode === 'aes') {
      await p.link.run('SetConfiguration LRP', setConfiguration(session, { option: 'lrp', irreversible: true }))
      mode = 'lrp'
      session = await authenticateKey0(p.link, currentKey(0, versions[0], run, keys), mode)
    }
    for (const w of ndefWritePlan(Buffer.from(plan.ndefFile, 'hex')))
      await p.link.run(`WriteData NDEF @${w.offset}`, writeData({ fileNo: NTAG424_FILES.ndef.fileNo, offset: w.offset, data: w.data, commMode: 'plain' }, session))
    await p.link.run('ChangeFileSettings NDEF', changeFileSettings(session, { fileNo: NTAG424_FILES.ndef.fileNo, settings: plan.fileSettings }))
    await changeKeys(store, p.link, session, run, keys, versions, now)
    if (run.randomId) {
      const s = await authenticateKey0(p.link, keys.keys[0], mode)
      await p.link.run('SetConfiguration RandomID', setConfiguration(s, { option: 'randomId', irreversible: true }))
    }
    const url = await readNdefUrl(p.link)
    const counter = await finish(p, run, uid, url, now())
    run = (await store.provisioning.get(run.id))!
    return { uid, runId: run.id, how, keyVersion: run.keyVersion, counter, url }
  } catch (error) {
    const stopped = asStopped(error)
    await store.provisioning.setState(run.id, stopped.reason === 'card_removed' ? 'pending' : 'failed', `${stopped.reason}: ${stopped.message}`, now())
    throw stopped
  } finally {
    p.link.onStep = () => {}
  }
}

/** Whether this run's SetConfiguration LRP was answered 91 00 (the journal's steps say). */
async function lrpSwitched(store: Repositories, runId: number): Promise<boolean> {
  return (await store.provisioning.steps(runId)).some((s) => s.step === 'SetConfiguration LRP' && s.ok)
}

/**
 * The verified first tap, then the chip under its profile with the new keys
 * and counter epoch, in one transaction: a tap that does not verify rolls all back.
 */
function finish(p: ProvisionChipParameters, run: ProvisioningRun, uid: string, url: string, now: number): Promise<number> {
  const store = p.store
  const keys = openRunKeys(p.secret, run)
  return store.tx(async (tx) => {
    const fileKey = p.profile.keyScheme === 'per_chip' ? sealKey(p.secret, keys.keys[FILE_SLOT], chipKeyContext(uid)) : null
    await tx.chips.setVerification({ uid, profileId: p.profile.id, randomUid: run.randomId, fileKey, keyVersion: run.keyVersion })
    // Enabling SDM reset the chip's counter: a new epoch (the new file key makes old URLs fail).
    await tx.chips.setLastCounter(uid, 0)
    let tap
    try {
      tap = await verifyTap(tx, createKeyring(tx, p.secret), { url, source: 'phone', now })
    } catch (error) {
      throw new ProvisioningStopped('verify_failed', `the chip's first tap did not verify at this gateway: ${(error as Error).message}`)
    }
    if (tap.uid !== uid || tap.counter !== 1)
      throw new ProvisioningStopped('verify_failed', `the chip's first tap verified as UID ${tap.uid} counter ${tap.counter}, expected ${uid} counter 1`)
    await tx.provisioning.setState(run.id, 'provisioned', null, now)
    return tap.counter
  })
}

function asStopped(error: unknown): ProvisioningStopped {
  if (error instanceof ProvisioningStopped) return error
  if (error instanceof CardRemovedError) return new ProvisioningStopped('card_removed', 'the card left the reader mid-run: put it back to resume')
  // The profile cannot give this chip its keys (no key, or a key left at factory): nothing was written yet.
  if (error instanceof ProvisioningPlanError) return new ProvisioningStopped('refused', `${error.message}; nothing was written`)
  if (error instanceof NtagStatusError && error.command.startsWith('Authenticate'))
    return new ProvisioningStopped('auth_failed', `${error.message}: the stored key was refused; stopped after this one attempt, nothing else was tried`)
  if (error instanceof SecureMessagingError && error.kind === 'mutual_auth')
    return new ProvisioningStopped('auth_failed', `${error.message}; stopped after this one attempt`)
  if (error instanceof NtagStatusError || error instanceof SecureMessagingError) return new ProvisioningStopped('card_error', error.message)
  throw error
}
