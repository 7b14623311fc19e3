import { ValidationError } from '../../errors.js'
import { openGatewaySecret, recordGatewaySecret } from '../../keys/secretCheck.js'
import { setChipWallet } from '../../kiosk/chipWallet.js'
import { Address, ChipUid } from '../../schemas/common.js'
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

/** `--wallet 0x…` (EIP-55 when stored), `--wallet none` to clear it, or undefined. */
function walletFlag(flags: Flags): string | null | undefined {
  const raw = text(flags, 'wallet')
  if (raw === undefined) return undefined
  if (raw === 'none') return null
  const parsed = Address.safeParse(raw)
  if (!parsed.success) throw new UsageError(`--wallet: ${parsed.error.issues[0]!.message} (or none)`)
  return parsed.data
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
  const wallet = walletFlag(flags)
  // --wallet alone sets the attendee's wallet and leaves the chip's verification as it is.
  if (wallet !== undefined && flags.profile === undefined) {
    for (const flag of ['file-key', 'file-key-file', 'random-uid', 'no-random-uid', 'key-version'])
      if (flags[flag] !== undefined) throw new UsageError(`--${flag} needs --profile`)
    await withStore(flags, (store) => {
      setChipWallet(store, { uid, teamId, wallet })
      printJson({ uid, teamId, wallet })
    })
    return
  }
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
    if (wallet !== undefined) setChipWallet(store, { uid, teamId, wallet })
    const chip = store.chips.get(uid)!
    printJson({
      uid: chip.uid,
      teamId: chip.teamId,
      profile: profileName,
      randomUid: chip.randomUid === 1,
      keyVersion: chip.keyVersion,
      hasFileKey: chip.fileKey !== null,
      wallet: chip.wallet,
    })
  })
}
