import type { ProvisioningRun, SlotVersions } from '../../db/provisioning.js'
import type { Store } from '../../db/store.js'
import { NTAG424_FILES } from '../apdu.js'
import { changeFileSettings, FACTORY_NDEF_SETTINGS, getFileSettings } from '../fileSettings.js'
import { CardRemovedError } from '../../card/cardSession.js'
import { NtagStatusError } from '../statusWords.js'
import { writeData } from '../writeData.js'
import type { CardLink } from './cardLink.js'
import { classifyChip, isFactoryNdef, readChip } from './inspectChip.js'
import { resolveRandomUid } from './randomId.js'
import { authenticateKey0, changeKeys, currentKey, openRunKeys, ProvisioningStopped, sealRunKeys } from './keySession.js'
import { factoryKeys, ZERO_KEY, type SlotKeys } from './provisioningKeys.js'

export type ResetChipParameters = {
  store: Store
  secret: Buffer
  link: CardLink
  /** The UID the operator means: the chip on the reader must be this one (a reset of the wrong chip bricks it). */
  uid: string
  originalityKey?: Uint8Array
  now?: () => number
}

/** What a reset never undoes, said every time. */
export const RESET_CANNOT_UNDO = [
  'LRP mode and Random ID, once switched on, are permanent',
  "the chip's SDM read counter and failed-authentication counters are not rewound by a reset",
  'the chip stays in the gateway (team, tap history); it is taken off its profile, so its old URLs fail',
]

export type ResetResult = { uid: string; runId: number; resumed: boolean; cannotUndo: string[] }

/**
 * Takes one of this gateway's chips back to factory keys and settings, with the
 * stored keys: UID checked first, journaled (state resetting), resumable from
 * the key versions like a provisioning run. Order: ChangeFileSettings to
 * `00 E0 EE` (needs key 0), ChangeKey 1–4 and 0 to zero at version 00, then an
 * authentication with the zero key clears the NDEF file and checks the settings.
 *
 * @throws ProvisioningStopped (refused, auth_failed, card_removed, card_error)
 */
export async function resetChip(p: ResetChipParameters): Promise<ResetResult> {
  const now = p.now ?? Date.now
  const store = p.store
  let reading
  try {
    reading = await readChip(p.link, p.originalityKey)
  } catch (error) {
    if (error instanceof CardRemovedError) throw new ProvisioningStopped('card_removed', 'the card left the reader before the reset began: nothing was written')
    throw error
  }
  if (reading.uid === null) {
    try {
      reading = { ...reading, uid: await resolveRandomUid(store, p.secret, p.link, reading, p.uid) }
    } catch (error) {
      if (error instanceof ProvisioningStopped) throw error
      if (error instanceof NtagStatusError && error.command.startsWith('Authenticate'))
        throw new ProvisioningStopped('auth_failed', `${error.message}: stopped after this one attempt`)
      throw new ProvisioningStopped('card_error', (error as Error).message)
    }
  }
  if (reading.uid !== p.uid) throw new ProvisioningStopped('refused', `the chip on the reader is ${reading.uid}, not ${p.uid}: nothing was written`)
  const latest = await store.provisioning.latest(p.uid)
  if (!latest) throw new ProvisioningStopped('refused', `this gateway never provisioned chip ${p.uid}: it holds no keys for it`)
  // Each refused authentication counts on the chip (a blocked key 0 is permanent): a person looks first.
  if (latest.failure?.startsWith('auth_failed'))
    throw new ProvisioningStopped('refused', `run ${latest.id} stopped because the card refused its stored key; not trying again (${latest.failure})`)
  const verdict = classifyChip(reading, latest)
  let run: ProvisioningRun
  let resumed = false
  if (verdict.kind === 'partial' && latest.kind === 'reset') {
    run = latest
    resumed = true
  } else if (verdict.kind === 'tapgate' || verdict.kind === 'partial') {
    // The keys the chip holds now, slot by slot, become the reset run's old keys.
    const from = openRunKeys(p.secret, latest)
    const current = reading.keyVersions.map((v, i) => currentKey(i, v, latest, from)) as SlotKeys
    const at = now()
    const id = await store.tx(async (tx) => {
      const id = await tx.provisioning.insert({
        uid: p.uid,
        teamId: latest.teamId,
        profileId: latest.profileId,
        kind: 'reset',
        state: 'resetting',
        mode: latest.mode,
        randomId: latest.randomId,
        keyVersion: 0,
        targetVersions: [0, 0, 0, 0, 0],
        slotVersions: [...reading.keyVersions] as SlotVersions,
        plan: JSON.stringify({ reset: true, startVersions: reading.keyVersions, cannotUndo: RESET_CANNOT_UNDO }),
        now: at,
      })
      const sealed = sealRunKeys(p.secret, id, factoryKeys(), current)
      await tx.provisioning.setKeys(id, sealed.keys, sealed.old, at)
      await tx.provisioning.setState(latest.id, latest.state === 'provisioned' ? 'provisioned' : 'failed', latest.state === 'provisioned' ? null : `superseded by reset run ${id}`, at)
      return id
    })
    run = (await store.provisioning.get(id))!
  } else if (verdict.kind === 'factory') {
    throw new ProvisioningStopped('refused', `chip ${p.uid} is already at factory keys and settings`)
  } else {
    throw new ProvisioningStopped('refused', `chip ${p.uid}: ${verdict.kind === 'foreign' ? verdict.why : 'not this gateway\'s'}; nothing was written, no key was tried`)
  }
  const keys = openRunKeys(p.secret, run)
  p.link.steps.forEach((s) => store.provisioning.addStep({ runId: run.id, ...s, at: now() }))
  p.link.onStep = (s) => store.provisioning.addStep({ runId: run.id, ...s, at: now() })
  try {
    let versions = [...reading.keyVersions] as SlotVersions
    if (versions.some((v) => v !== 0)) {
      const session = await authenticateKey0(p.link, currentKey(0, versions[0], run, keys), run.mode)
      const ndef = reading.files[1]
      if (ndef && !isFactoryNdef(ndef))
        await p.link.run('ChangeFileSettings factory', changeFileSettings(session, { fileNo: NTAG424_FILES.ndef.fileNo, settings: FACTORY_NDEF_SETTINGS, currentChange: ndef.settings.accessRights.change }))
      versions = await changeKeys(store, p.link, session, run, keys, versions, now)
    }
    // One authentication with the zero key: proves the reset, then the NDEF message is emptied.
    const check = await authenticateKey0(p.link, ZERO_KEY, run.mode)
    const settings = await p.link.run('GetFileSettings NDEF', getFileSettings(NTAG424_FILES.ndef.fileNo, check))
    if (!isFactoryNdef(settings)) throw new ProvisioningStopped('card_error', 'after the reset the NDEF file settings are not the factory ones')
    await p.link.run('WriteData NLEN 0000', writeData({ fileNo: NTAG424_FILES.ndef.fileNo, offset: 0, data: Buffer.alloc(2), commMode: 'plain' }, check))
    await store.tx(async (tx) => {
      const chip = await tx.chips.get(p.uid)
      if (chip) await tx.chips.setVerification({ uid: p.uid, profileId: null, randomUid: run.randomId, fileKey: null, keyVersion: chip.keyVersion })
      await tx.provisioning.setState(run.id, 'factory', null, now())
    })
    return { uid: p.uid, runId: run.id, resumed, cannotUndo: RESET_CANNOT_UNDO }
  } catch (error) {
    const removed = error instanceof CardRemovedError
    const stopped =
      error instanceof ProvisioningStopped
        ? error
        : removed
          ? new ProvisioningStopped('card_removed', 'the card left the reader mid-reset: put it back to resume')
          : error instanceof NtagStatusError && error.command.startsWith('Authenticate')
            ? new ProvisioningStopped('auth_failed', `${error.message}: stopped after this one attempt`)
            : new ProvisioningStopped('card_error', (error as Error).message)
    await store.provisioning.setState(run.id, removed ? 'resetting' : 'failed', `${stopped.reason}: ${stopped.message}`, now())
    throw stopped
  } finally {
    p.link.onStep = () => {}
  }
}
