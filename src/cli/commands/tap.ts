import { recordTap } from '../../refs/recordTap.js'
import { ChipUid } from '../../schemas/common.js'
import { UsageError, type GlobalOptions } from '../usage.js'
import { printJson, required, withStore } from './context.js'

export async function tap(o: GlobalOptions & { uid?: string; linksModule?: boolean; json?: boolean }) {
  const parsed = ChipUid.safeParse(String(required(o.uid, '--uid')))
  if (!parsed.success) throw new UsageError(`--uid: ${parsed.error.issues[0]!.message}`)
  await withStore(o, (store) => {
    // Operator-entered: nobody proved the chip was present, so the ref is not authenticated.
    const { refId } = recordTap(store, {
      uid: parsed.data,
      source: o.linksModule ? 'links' : 'operator',
      authenticated: false,
      linksModule: o.linksModule ?? false,
      now: Date.now(),
    })
    if (o.json) printJson({ refId, uid: parsed.data })
    else console.log(refId)
  })
}
