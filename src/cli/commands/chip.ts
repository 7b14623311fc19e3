import { ValidationError } from '../../errors.js'
import { openGatewaySecret, recordGatewaySecret } from '../../keys/secretCheck.js'
import { ChipUid } from '../../schemas/common.js'
import { assertSecretOpensStoredKeys, setChipVerification } from '../../taps/chipProfiles.js'
import { UsageError, type Flags } from '../usage.js'
import { onePositional, printJson, required, teamIdOf, text, withStore } from './context.js'
import { keyFromFlags } from './profile.js'

const FIELD_FLAGS: Record<string, string> = { fileKey: '--file-key', keyVersion: '--key-version', profile: '--profile' }

function keyVersionFlag(flags: Flags): number | undefined {
  const raw = text(flags, 'key-version')
  if (raw === undefined) return undefined
  if (!/^\d{1,10}$/.test(raw) || Number(raw) > 0xffffffff) throw new UsageError('--key-version takes an integer 0…4294967295')
  return Number(raw)
}

function randomUidFlag(flags: Flags): boolean | undefined {
  if (flags['random-uid'] === true && flags['no-random-uid'] === true) throw new UsageError('give --random-uid or --no-random-uid, not both')
  if (flags['random-uid'] === true) return true
  if (flags['no-random-uid'] === true) return false
  return undefined
}

/**
 * `tapgate chip set`: puts a chip under a chip profile, with its own file key
 * for a per_chip profile, its random-UID flag and its Bolt Card key version.
 * Prints the chip's settings, never its key.
 */
export async function run(positionals: string[], flags: Flags) {
  const action = onePositional(positionals, 'action (set)')
  if (action !== 'set') throw new UsageError(`unknown action "chip ${action}" (set)`)
  const parsed = ChipUid.safeParse(required(flags, 'uid'))
  if (!parsed.success) throw new UsageError(`--uid: ${parsed.error.issues[0]!.message}`)
  const uid = parsed.data
  const teamId = teamIdOf(flags)
  const profileName = required(flags, 'profile')
  const fileKey = keyFromFlags(flags, 'file-key')
  const randomUid = randomUidFlag(flags)
  const keyVersion = keyVersionFlag(flags)
  await withStore(flags, (store, config) => {
    const secret = openGatewaySecret(store, { dataDir: config.dataDir, secretHex: config.secret })
    if (fileKey !== undefined) assertSecretOpensStoredKeys(store, secret)
    try {
      setChipVerification(store, secret, { uid, teamId, profileName, fileKey, randomUid, keyVersion })
      if (fileKey !== undefined) recordGatewaySecret(store, secret)
    } catch (error) {
      if (error instanceof ValidationError && error.errors)
        throw new ValidationError(
          error.message,
          Object.fromEntries(Object.entries(error.errors).map(([field, message]) => [FIELD_FLAGS[field] ?? field, message])),
          error.code,
        )
      throw error
    }
    const chip = store.chips.get(uid)!
    printJson({
      uid: chip.uid,
      teamId: chip.teamId,
      profile: profileName,
      randomUid: chip.randomUid === 1,
      keyVersion: chip.keyVersion,
      hasFileKey: chip.fileKey !== null,
    })
  })
}
