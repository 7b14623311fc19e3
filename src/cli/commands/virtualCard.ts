import { DEFAULT_URL_TEMPLATE, VirtualNtag424, type VirtualNtag424Options } from '../../../station/virtual-card/ntag424.js'
import { insertCard, VPCD_DEFAULT_HOST, VPCD_DEFAULT_PORT, VpcdUnreachableError, type InsertedCard } from '../../../station/virtual-card/vpcd.js'
import { UsageError, type Flags } from '../usage.js'
import { noPositionals, required, text } from './context.js'

export type VirtualCardSettings = { card: VirtualNtag424Options; host: string; port: number }

/** How long after connecting pcscd normally asks for the ATR (it polls every 400 ms). */
const SEEN_HINT_MS = 3000

/**
 * Parses `--vpcd HOST:PORT` (or just PORT; `[::1]:PORT` for IPv6).
 *
 * @throws UsageError when malformed
 * @example
 * parseVpcdAddress('127.0.0.1:35964') // { host: '127.0.0.1', port: 35964 }
 */
export function parseVpcdAddress(value: string | undefined): { host: string; port: number } {
  if (value === undefined) return { host: VPCD_DEFAULT_HOST, port: VPCD_DEFAULT_PORT }
  const m = /^(?:(\[[^\]]+\]|[^:]+):)?(\d{1,5})$/.exec(value)
  const port = m ? Number(m[2]) : NaN
  if (!m || port < 1 || port > 65535) throw new UsageError(`--vpcd takes HOST:PORT (e.g. ${VPCD_DEFAULT_HOST}:${VPCD_DEFAULT_PORT}), got "${value}"`)
  return { host: m[1]?.replace(/^\[|\]$/g, '') ?? VPCD_DEFAULT_HOST, port }
}

function keyFlag(flags: Flags, name: string): string {
  const raw = required(flags, name)
  // Never echo a key, not even a malformed one.
  if (!/^[0-9A-Fa-f]{32}$/.test(raw)) throw new UsageError(`--${name} must be 32 hex characters (an AES-128 key), got ${raw.length} characters`)
  return raw
}

/**
 * Reads the command line into the card's options and the vpcd address; builds the
 * card once to check the URL template.
 *
 * @throws UsageError for a missing or malformed flag
 * @example
 * virtualCardSettings({ uid: '04DE5F1EACC040', 'meta-key': K, 'file-key': K }) // { card: { uid: '04DE5F1EACC040', … }, host: '127.0.0.1', port: 35963 }
 */
export function virtualCardSettings(flags: Flags): VirtualCardSettings {
  const uid = required(flags, 'uid').replaceAll(':', '')
  if (!/^[0-9A-Fa-f]{14}$/.test(uid)) throw new UsageError('--uid must be the 7-byte UID: 14 hex digits (":" allowed)')
  if (flags.blank === true) {
    // A factory card has no keys, URL or counter to set: those come from provisioning.
    const configured = ['meta-key', 'file-key', 'mode', 'counter', 'url'].filter((name) => flags[name] !== undefined)
    if (configured.length > 0)
      throw new UsageError(`--blank starts a factory-fresh card (keys all zero, no URL, AES): drop ${configured.map((name) => `--${name}`).join(', ')}`)
    return { card: { uid: uid.toUpperCase(), blank: true }, ...parseVpcdAddress(text(flags, 'vpcd')) }
  }
  const metaKey = keyFlag(flags, 'meta-key')
  const fileKey = keyFlag(flags, 'file-key')
  const mode = text(flags, 'mode') ?? 'aes'
  if (mode !== 'aes' && mode !== 'lrp') throw new UsageError(`--mode is aes or lrp, got "${mode}"`)
  const counterText = text(flags, 'counter') ?? '0'
  const counter = /^(\d+|0x[0-9A-Fa-f]+)$/.test(counterText) ? Number(counterText) : NaN
  if (!(counter >= 0 && counter <= 0xfffffe))
    throw new UsageError(`--counter is SDMReadCtr before the first read: 0…16777214 (decimal or 0x hex), got "${counterText}"`)
  const url = text(flags, 'url') ?? DEFAULT_URL_TEMPLATE
  const card: VirtualNtag424Options = { uid: uid.toUpperCase(), metaKey, fileKey, mode, counter, url }
  try {
    new VirtualNtag424(card)
  } catch (error) {
    if (error instanceof RangeError) throw new UsageError(`--url: ${error.message}`)
    throw error
  }
  return { card, ...parseVpcdAddress(text(flags, 'vpcd')) }
}

/** `tapgate virtual-card [--blank]`: inserts a virtual NTAG 424 DNA (configured, or factory-fresh) into pcscd through vpcd, until Ctrl-C. */
export async function run(positionals: string[], flags: Flags) {
  noPositionals(positionals)
  const { card: options, host, port } = virtualCardSettings(flags)
  const card = new VirtualNtag424(options)
  const trace = process.env.DEBUG_APDU === '1' ? (line: string) => console.error(line) : undefined
  const where = `vpcd at ${host}:${port}`

  let inserted: InsertedCard
  try {
    inserted = await insertCard(card, { host, port, trace })
  } catch (error) {
    if (error instanceof VpcdUnreachableError) {
      console.error(`tapgate: ${error.message}`)
      process.exitCode = 1
      return
    }
    throw error
  }
  let reads = 0
  card.onRead(({ counter, url }) => {
    reads += 1
    console.log(`read ${reads} (SDMReadCtr ${counter}): ${url}`)
  })
  console.log(`virtual NTAG 424 DNA ${card.uid} (${card.mode.toUpperCase()}, SDMReadCtr ${card.counter}) inserted into ${where}`)
  if (card.blank) console.log('factory-fresh: keys 0–4 zero (version 00), empty NDEF file, no SDM; provision it to give it a URL')
  else console.log(`URL template: ${card.template}`)
  const slow = setTimeout(
    () =>
      console.log(
        `pcscd has not picked the card up after ${SEEN_HINT_MS / 1000} s: the slot may hold another card (one fits; this one waits), or ${host}:${port} is not a vpcd port`,
      ),
    SEEN_HINT_MS,
  )
  void inserted.seen.then(() => {
    clearTimeout(slow)
    console.log('pcscd has the card. Ctrl-C removes it.')
  })

  const stop = new Promise<'signal'>((resolve) => {
    const onSignal = () => resolve('signal')
    process.once('SIGINT', onSignal)
    process.once('SIGTERM', onSignal)
    void inserted.removed.then(() => {
      process.off('SIGINT', onSignal)
      process.off('SIGTERM', onSignal)
    })
  })
  const outcome = await Promise.race([stop, inserted.removed.then(() => 'closed' as const)])
  clearTimeout(slow)
  if (outcome === 'signal') {
    await inserted.remove()
    console.log(`card removed after ${reads} read${reads === 1 ? '' : 's'} (SDMReadCtr ${card.counter})`)
    return
  }
  console.error(`tapgate: ${where} closed the connection after ${reads} read${reads === 1 ? '' : 's'} (SDMReadCtr ${card.counter}): was pcscd stopped?`)
  process.exitCode = 1
}
