import { recordTap } from '../../taps/recordTap.js'
import { ChipUid } from '../../schemas/common.js'
import { UsageError, type Flags } from '../usage.js'
import { noPositionals, printJson, required, withStore } from './context.js'

export async function run(positionals: string[], flags: Flags) {
  noPositionals(positionals)
  const parsed = ChipUid.safeParse(required(flags, 'uid'))
  if (!parsed.success) throw new UsageError(`--uid: ${parsed.error.issues[0]!.message}`)
  const linksModule = flags['links-module'] === true
  await withStore(flags, async (store) => {
    // Operator-entered: nobody proved the chip was present, so the ref is not authenticated.
    const { refId } = await recordTap(store, {
      uid: parsed.data,
      source: linksModule ? 'links' : 'operator',
      authenticated: false,
      linksModule,
      now: Date.now(),
    })
    if (flags.json) printJson({ refId, uid: parsed.data })
    else console.log(refId)
  })
}
