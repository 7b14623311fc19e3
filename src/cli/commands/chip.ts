import { ValidationError } from '../../errors.js'
import { openGatewaySecret, recordGatewaySecret } from '../../profiles/secretCheck.js'
import { setChipWallet } from '../../kiosk/chipWallet.js'
import { Address, ChipUid } from '../../schemas/common.js'
import { assertSecretOpensStoredKeys, setChipVerification } from '../../profiles/chipProfiles.js'
import type { Store } from '../../db/store.js'
import { CardRemovedError } from '../../card/cardSession.js'
import type { ReaderSource } from '../../../station/reader.js'
import { inspectCard, onCards, RECORD_WARNING, TranscriptRecorder } from './chipCommands.js'
import { batchSummary, dryRunPlan, outcomeLine, profileOf, provisionCard, resetCard, type CardOutcome } from '../../provisioning/run/provisioningBatch.js'
import { IRREVERSIBLE_CONSEQUENCES, ProvisioningPlanError } from '../../provisioning/run/planProvisioning.js'
import { UsageError, type Flags } from '../usage.js'
import { onePositional, printJson, required, teamIdOf, text, withStore } from './context.js'
import { keyFromFlags } from './profile.js'
import { provisionTemplate } from './provisionTemplate.js'

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

/** The flags each action reads (beside --data-dir, --config, --help): one option list serves all four in --help. */
const ACTION_FLAGS = {
  set: ['uid', 'team', 'profile', 'file-key', 'file-key-file', 'random-uid', 'no-random-uid', 'key-version', 'wallet'],
  inspect: ['reader', 'json'],
  provision: ['team', 'profile', 'url', 'reader', 'batch', 'dry-run', 'record', 'lrp', 'random-id', 'irreversible', 'allow-unverified'],
  reset: ['uid', 'reader', 'record'],
} as const
type Action = keyof typeof ACTION_FLAGS
const GLOBAL_FLAGS = ['data-dir', 'config', 'help']

const isAction = (name: string): name is Action => Object.hasOwn(ACTION_FLAGS, name)

/** A flag another action reads would be ignored here without a word (`chip inspect --batch`): refused instead. */
function checkFlagsOf(action: Action, flags: Flags): void {
  const allowed: readonly string[] = ACTION_FLAGS[action]
  const stray = Object.keys(flags).filter((name) => flags[name] !== undefined && !allowed.includes(name) && !GLOBAL_FLAGS.includes(name))
  if (stray.length > 0)
    throw new UsageError(`${stray.map((f) => `--${f}`).join(', ')} ${stray.length === 1 ? 'does' : 'do'} not apply to chip ${action} (it takes ${allowed.map((f) => `--${f}`).join(', ')})`)
}

/**
 * `tapgate chip set`: puts a chip under a chip profile, with its own file key
 * for a per_chip profile, its random-UID flag and its Bolt Card key version.
 * Prints the chip's settings, never its key.
 */
export async function run(positionals: string[], flags: Flags) {
  const action = onePositional(positionals, 'action (set, inspect, provision, reset)')
  if (!isAction(action)) throw new UsageError(`unknown action "chip ${action}" (set, inspect, provision, reset)`)
  checkFlagsOf(action, flags)
  if (action !== 'set') return runProvisioning(action, flags)
  const parsed = ChipUid.safeParse(required(flags, 'uid'))
  if (!parsed.success) throw new UsageError(`--uid: ${parsed.error.issues[0]!.message}`)
  const uid = parsed.data
  const teamId = teamIdOf(flags)
  const wallet = walletFlag(flags)
  // --wallet alone sets the attendee's wallet and leaves the chip's verification as it is.
  if (wallet !== undefined && flags.profile === undefined) {
    for (const flag of ['file-key', 'file-key-file', 'random-uid', 'no-random-uid', 'key-version'])
      if (flags[flag] !== undefined) throw new UsageError(`--${flag} needs --profile`)
    await withStore(flags, async (store) => {
      await setChipWallet(store, { uid, teamId, wallet })
      printJson({ uid, teamId, wallet })
    })
    return
  }
  const profileName = required(flags, 'profile')
  const fileKey = keyFromFlags(flags, 'file-key')
  const randomUid = randomUidFlag(flags)
  const keyVersion = keyVersionFlag(flags)
  await withStore(flags, async (store, config) => {
    const secret = await openGatewaySecret(store, { dataDir: config.dataDir, secretHex: config.secret })
    if (fileKey !== undefined) await assertSecretOpensStoredKeys(store, secret)
    try {
      await setChipVerification(store, secret, { uid, teamId, profileName, fileKey, randomUid, keyVersion })
      if (fileKey !== undefined) await recordGatewaySecret(store, secret)
    } catch (error) {
      if (error instanceof ValidationError && error.errors)
        throw new ValidationError(
          error.message,
          Object.fromEntries(Object.entries(error.errors).map(([field, message]) => [FIELD_FLAGS[field] ?? field, message])),
          error.code,
        )
      throw error
    }
    if (wallet !== undefined) await setChipWallet(store, { uid, teamId, wallet })
    const chip = (await store.chips.get(uid))!
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

/** The --record file, created before any reader opens: a path that cannot be written (or already exists) is the user's to fix, not a crash. */
function openRecorder(file: string, action: 'inspect' | 'provision' | 'reset'): TranscriptRecorder {
  try {
    return new TranscriptRecorder(file, `tapgate chip ${action}`)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EEXIST') throw new UsageError(`--record: ${file} already exists; give a new file name (a transcript never writes over a file, nor through a link)`)
    throw new UsageError(`--record: cannot create ${file} (${code ?? (error as Error).message})`)
  }
}

/** PC/SC finds its readers a few hundred ms after it opens: "no reader" said sooner would be noise. */
const NO_READER_HINT_MS = 1500

/**
 * The PC/SC readers (only those whose name contains --reader); a virtual reader in tests goes through
 * provisioning's own API instead. Says so when no reader came, rather than wait in silence.
 */
async function openReaders(flags: Flags): Promise<ReaderSource> {
  const { openPcscReaders } = await import('../../../station/pcsc/pcscReaders.js')
  const log = { info: (m: string) => console.error(m), warn: (m: string) => console.error(m) }
  const filter = text(flags, 'reader')
  const source = await openPcscReaders({ readerFilter: filter, log })
  let readers = 0
  source.on('reader', () => void readers++)
  setTimeout(() => {
    if (readers > 0) return
    console.error(
      filter === undefined
        ? 'No PC/SC reader attached yet: plug one in (it is picked up when it appears), or try a software card: tapgate virtual-card --uid 04A1B2C3D4E5F6 --blank'
        : `No reader whose name contains "${filter}" yet (names above; --reader matches part of a name, case-insensitive)`,
    )
  }, NO_READER_HINT_MS).unref()
  return source
}

function irreversibleFlags(flags: Flags): { lrp: boolean; randomId: boolean } {
  const lrp = flags.lrp === true
  const randomId = flags['random-id'] === true
  if ((lrp || randomId) && flags.irreversible !== true)
    throw new UsageError(`${lrp ? '--lrp' : '--random-id'} cannot be undone: add --irreversible to confirm (${IRREVERSIBLE_CONSEQUENCES[lrp ? 'lrp' : 'randomId']})`)
  return { lrp, randomId }
}

/** The originality check in `chip inspect`'s line: true, false or null (the chip did not answer Read_Sig). */
const ORIGINALITY_WORDS: Record<string, string> = {
  true: "signed by NXP",
  false: "NOT signed by NXP's published key (a clone, or a software card)",
  null: 'unknown (no signature read)',
}

/**
 * What `chip provision` will do, checked before any reader opens: the profile, the template (--url or
 * the profile's) and the plan made from them. A plan the data sheet or the profile's layout refuses
 * is the user's input, so it is a ValidationError (exit 1 with the reason), not a crash.
 */
async function provisioningPlanOf(store: Store, flags: Flags) {
  const teamId = teamIdOf(flags)
  const profile = await profileOf(store, teamId, required(flags, 'profile'))
  const template = provisionTemplate(text(flags, 'url'), profile)
  const { lrp, randomId } = irreversibleFlags(flags)
  try {
    const plan = dryRunPlan({ profile, template, lrp, randomId })
    return { plan, run: { teamId, profile, template, lrp, randomId } }
  } catch (error) {
    if (error instanceof ProvisioningPlanError) throw new ValidationError(`cannot provision with profile ${JSON.stringify(profile.name)}: ${error.message}`, {}, 'provisioning_plan_invalid')
    throw error
  }
}

/**
 * `tapgate chip inspect | provision | reset`: the provisioning run on a reader
 * (src/provisioning/run). One card, or with --batch every card until Ctrl-C.
 * Prints plans, verdicts and progress; never a key.
 */
async function runProvisioning(action: 'inspect' | 'provision' | 'reset', flags: Flags): Promise<void> {
  if (action === 'provision' && flags['dry-run'] === true) {
    await withStore(flags, async (store) => printJson((await provisioningPlanOf(store, flags)).plan))
    return
  }
  const record = text(flags, 'record')
  if (record !== undefined) console.error(RECORD_WARNING)
  await withStore(flags, async (store, config) => {
    let uidFlag: string | undefined
    if (action === 'reset') {
      const parsed = ChipUid.safeParse(required(flags, 'uid'))
      if (!parsed.success) throw new UsageError(`--uid: ${parsed.error.issues[0]!.message}`)
      uidFlag = parsed.data
    }
    // Refusals first: thrown after the readers open, they would leave a PC/SC context (and the process) running.
    const planned = action === 'provision' ? await provisioningPlanOf(store, flags) : undefined
    for (const consequence of planned?.plan.consequences ?? []) console.error(`irreversible: ${consequence}`)
    const secret = action === 'inspect' ? null : await openGatewaySecret(store, { dataDir: config.dataDir, secretHex: config.secret })
    const recorder = record === undefined ? undefined : openRecorder(record, action)
    const source = await openReaders(flags)
    const outcomes: CardOutcome[] = []
    const batch = flags.batch === true && action === 'provision'
    console.error(batch ? 'Waiting for cards (Ctrl-C ends the batch)…' : 'Waiting for a card…')
    try {
      await new Promise<void>((resolve, reject) => {
        const stop = () => resolve()
        process.once('SIGINT', stop)
        onCards(source, async (card) => {
          if (action === 'inspect') {
            let report: Awaited<ReturnType<typeof inspectCard>>
            try {
              report = await inspectCard(store, card)
            } catch (error) {
              if (!(error instanceof CardRemovedError)) throw error
              return console.error('the card left the reader before it was read: put it back')
            }
            if (flags.json === true) printJson(report)
            else console.log(`${report.uid ?? '(random ID)'}: ${report.verdict.kind}${'why' in report.verdict ? ` (${report.verdict.why})` : ''}; key versions ${report.keyVersions.join(',')}; originality ${ORIGINALITY_WORDS[String(report.originality)]}`)
            return resolve()
          }
          const outcome =
            action === 'reset'
              ? await resetCard({ store, secret: secret!, card, uid: uidFlag!, recorder })
              : await provisionCard({ store, secret: secret!, card, ...planned!.run, allowUnverified: flags['allow-unverified'] === true, recorder })
          outcomes.push(outcome)
          console.log(outcomeLine(outcome))
          if (!batch) resolve()
        }, reject)
      })
    } finally {
      recorder?.close()
      await source.close()
    }
    if (batch) printJson(batchSummary(outcomes))
    if (outcomes.some((o) => !o.ok)) process.exitCode = 1
  })
}
