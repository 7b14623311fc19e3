import type { ProvisioningRun, SealedSlots, SlotVersions } from '../../db/provisioning.js'
import type { Store } from '../../db/store.js'
import { openKey, sealKey } from '../../keys/sealKey.js'
import { authenticateEv2First } from '../authenticateEv2.js'
import { authenticateLrpFirst } from '../authenticateLrp.js'
import { changeKey } from '../changeKey.js'
import type { SecureSession } from '../secureMessaging.js'
import type { CardLink } from './cardLink.js'
import { ZERO_KEY, type SlotKeys } from './provisioningKeys.js'

/*
 * What provisioning and reset share: the journal's keys, which key each slot
 * holds now (told by its version, never by trying), one authentication attempt,
 * and ChangeKey 1–4 then 0 with the journal updated after each.
 */

export const runKeyContext = (runId: number, slot: number, which: 'new' | 'old') => `provisioning:${runId}:${which}${slot}`

/** Seals a run's target and old keys (zero keys are stored as null: the factory key is no secret). */
export function sealRunKeys(secret: Buffer, runId: number, keys: SlotKeys, old: SlotKeys): { keys: SealedSlots; old: SealedSlots } {
  const seal = (k: Buffer, slot: number, which: 'new' | 'old') => (k.equals(ZERO_KEY) ? null : sealKey(secret, k, runKeyContext(runId, slot, which)))
  return {
    keys: keys.map((k, i) => seal(k, i, 'new')) as SealedSlots,
    old: old.map((k, i) => seal(k, i, 'old')) as SealedSlots,
  }
}

/** Opens a run's keys. @throws SealedKeyError when they were sealed under another secret */
export function openRunKeys(secret: Buffer, run: ProvisioningRun): { keys: SlotKeys; old: SlotKeys } {
  const open = (b: Buffer | null, slot: number, which: 'new' | 'old') => (b === null ? ZERO_KEY : openKey(secret, b, runKeyContext(run.id, slot, which)))
  return {
    keys: run.keys.map((b, i) => open(b, i, 'new')) as SlotKeys,
    old: run.oldKeys.map((b, i) => open(b, i, 'old')) as SlotKeys,
  }
}

/** A step that stopped a run: its name and the card's status word, for the journal and the CLI. */
export class ProvisioningStopped extends Error {
  override name = 'ProvisioningStopped'
  constructor(
    readonly reason: 'refused' | 'card_removed' | 'auth_failed' | 'verify_failed' | 'card_error',
    message: string,
  ) {
    super(message)
  }
}

/**
 * The key a slot holds now, told by the version the card reports: the run's
 * target or the run's starting point. Anything else was refused by classifyChip.
 */
export function currentKey(slot: number, version: number, run: ProvisioningRun, keys: { keys: SlotKeys; old: SlotKeys }): Buffer {
  return version === run.targetVersions[slot] ? keys.keys[slot]! : keys.old[slot]!
}

/**
 * One authentication attempt with key 0 (AES, or LRP on an LRP chip). A refusal
 * ends the run: no other key is ever tried.
 */
export async function authenticateKey0(link: CardLink, key: Buffer, mode: 'aes' | 'lrp'): Promise<SecureSession> {
  if (mode === 'lrp') {
    const auth = authenticateLrpFirst({ keyNo: 0, key })
    const part2 = auth.part2(await link.transmit('AuthenticateLRPFirst', auth.command))
    return auth.finish(await link.transmit('AuthenticateLRPFirst part 2', part2))
  }
  const auth = authenticateEv2First({ keyNo: 0, key })
  const part2 = auth.part2(await link.transmit('AuthenticateEV2First', auth.command))
  return auth.finish(await link.transmit('AuthenticateEV2First part 2', part2))
}

/**
 * ChangeKey 1–4, then 0 (changing key 0 ends the session), for every slot not
 * yet at its target; the journal records each slot the moment the card says 91 00.
 *
 * @returns the versions the slots hold afterwards
 */
export async function changeKeys(
  store: Store,
  link: CardLink,
  session: SecureSession,
  run: ProvisioningRun,
  keys: { keys: SlotKeys; old: SlotKeys },
  versions: SlotVersions,
  now: () => number,
): Promise<SlotVersions> {
  const after = [...versions] as SlotVersions
  for (const keyNo of [1, 2, 3, 4, 0]) {
    const target = run.targetVersions[keyNo]!
    if (after[keyNo] === target) continue
    const oldKey = currentKey(keyNo, after[keyNo]!, run, keys)
    await link.run(`ChangeKey ${keyNo}`, changeKey(session, { keyNo, newKey: keys.keys[keyNo]!, oldKey, keyVersion: target }))
    after[keyNo] = target
    await store.provisioning.setSlotVersions(run.id, after, now())
  }
  return after
}
