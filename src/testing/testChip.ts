import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import type { Store } from '../db/store.js'
import { generateSunMessage } from '../sun/generateSunMessage.js'
import { formatNtag21xMirror } from '../sun/ntag21xMirror.js'
import { plainWords, type TapRejectReason } from '../taps/tapErrors.js'

/** How a test chip proves its taps: NTAG 424 DNA SUN in AES or LRP mode, or an NTAG 21x's plain mirror (no MAC). */
export type ChipScheme = 'aes' | 'lrp' | 'ntag21x'

/** A token on the embedded chain, as the API names one. */
export type TokenRef = { chainId: number; contractAddress: `0x${string}`; tokenId: string }

/** What the gateway made of a tap, as its tap log keeps it. */
export type TapVerdict =
  | { accepted: true; uid: string; counter: number | null; authenticated: boolean }
  | {
      accepted: false
      /** The code the tap log and `tapgate taps list` give, e.g. counter_replay or mac_mismatch. */
      reason: TapRejectReason | (string & {})
      /** The reason in the words the tap page would use. */
      words: string
      /** The operator's diagnosis (e.g. the counters compared). */
      detail: string | null
      uid: string | null
      counter: number | null
    }

export type TapResult = {
  /** The new ref, whole (the tap log's copy; the phone gets it as serviceRef); null when refused. */
  refId: string | null
  verdict: TapVerdict
  /** The HTTP status the phone got: 302 or 200 accepted, 400 refused. */
  status: number
}

export type TestChip = {
  /** 14 hex characters, 04… as NXP's UIDs start. */
  readonly uid: string
  readonly scheme: ChipScheme
  /** The chip's SDM keys as hex (NTAG 424 DNA); null for NTAG 21x. */
  readonly keys: { metaKey: string; fileKey: string } | null
  /** The token the chip is linked to (`token: true`); null otherwise. */
  readonly token: TokenRef | null
  /** The counter of the last URL made (tapUrl, tap); -1 before any. */
  readonly counter: number
  /** The URL the chip writes at its next tap (or at `counter`), absolute, on this gateway's tap path. */
  tapUrl(options?: { counter?: number }): string
  /** Taps the chip: GET of tapUrl() as a phone does, then the verdict from the tap log. */
  tap(options?: { counter?: number }): Promise<TapResult>
  /** The last URL made, again: what a copied link or a replayed NFC read looks like. */
  replayedUrl(): string
  /** A URL with the next counter and a MAC that does not verify (one bit flipped). NTAG 21x has no MAC to forge. */
  forgedUrl(): string
}

export type ChipFactoryDeps = {
  app: () => FastifyInstance
  store: () => Store
  baseUrl: string
  tapPath: string
  /** Registers the chip (and its profile, and token) through the import, in the team. */
  register: (chip: { uid: string; scheme: ChipScheme; keys: { metaKey: string; fileKey: string } | null; token: boolean }) => Promise<TokenRef | null>
}

/** A fresh chip of `scheme`, registered with random keys; its UID is random, 04 first. */
export async function createTestChip(deps: ChipFactoryDeps, options: { scheme?: ChipScheme; token?: boolean } = {}): Promise<TestChip> {
  const scheme = options.scheme ?? 'aes'
  if (!['aes', 'lrp', 'ntag21x'].includes(scheme)) throw new RangeError(`chip scheme must be aes, lrp or ntag21x, not ${String(scheme)}`)
  const uid = `04${randomBytes(6).toString('hex').toUpperCase()}`
  const keys = scheme === 'ntag21x' ? null : { metaKey: randomBytes(16).toString('hex').toUpperCase(), fileKey: randomBytes(16).toString('hex').toUpperCase() }
  const token = await deps.register({ uid, scheme, keys, token: options.token ?? false })
  let counter = -1
  let lastUrl: string | null = null

  const urlFor = (ctr: number, forge = false): string => {
    const base = `${deps.baseUrl}${deps.tapPath}`
    if (keys === null) return `${base}?uid=${formatNtag21xMirror({ uid, counter: ctr })}`
    const msg = generateSunMessage({ ...keys, mode: scheme === 'lrp' ? 'lrp' : 'aes', uid, counter: ctr })
    // The MAC's last hex digit, changed: a URL the chip never wrote.
    const mac = forge ? msg.sdmmac.slice(0, -1) + ((Number.parseInt(msg.sdmmac.slice(-1), 16) ^ 1).toString(16).toUpperCase()) : msg.sdmmac
    return `${base}?e=${msg.piccData}&c=${mac}`
  }
  const nextUrl = (chosen?: number): string => {
    const ctr = chosen ?? counter + 1
    if (!Number.isInteger(ctr) || ctr < 0 || ctr > 0xffffff) throw new RangeError(`a tap counter is 0…16777215, not ${ctr}`)
    counter = ctr
    lastUrl = urlFor(ctr)
    return lastUrl
  }
  const chip: TestChip = {
    uid,
    scheme,
    keys,
    token,
    get counter() {
      return counter
    },
    tapUrl: (o = {}) => nextUrl(o.counter),
    tap: (o = {}) => tapUrlOnGateway(deps, uid, nextUrl(o.counter)),
    replayedUrl() {
      if (lastUrl === null) throw new Error('replayedUrl: this chip has made no URL yet (tap it or call tapUrl first)')
      return lastUrl
    },
    forgedUrl() {
      if (keys === null) throw new Error('an NTAG 21x mirror has no MAC: anyone can write one, and the gateway records its taps as unauthenticated')
      return urlFor(counter + 1, true)
    },
  }
  return chip
}

/**
 * Sends `url` to the gateway's tap route as a phone would (in-process inject: the same route, no
 * socket) and reads the verdict from the tap log. The route answers every refusal with one page,
 * so the reason is only there.
 */
export async function tapUrlOnGateway(deps: Pick<ChipFactoryDeps, 'app' | 'store'>, uid: string | null, url: string): Promise<TapResult> {
  const { pathname, search, host } = new URL(url)
  const before = await lastTapId(deps.store())
  const res = await deps.app().inject({ method: 'GET', url: `${pathname}${search}`, headers: { host } })
  const rows = (await deps.store().tapLog.list({ teamId: null, refusedOnly: false, limit: 20 })).filter((row) => row.id > before)
  const row = rows.find((r) => uid === null || r.chipUid === uid || r.chipUid === null) ?? rows[0]
  if (!row) throw new Error(`the tap answered ${res.statusCode} but left no tap log row`)
  const verdict: TapVerdict =
    row.accepted === 1
      ? { accepted: true, uid: row.chipUid ?? '', counter: row.counter, authenticated: row.authenticated === 1 }
      : {
          accepted: false,
          reason: row.reason,
          words: plainWords[row.reason as TapRejectReason] ?? row.reason,
          detail: row.detail,
          uid: row.chipUid,
          counter: row.counter,
        }
  return { refId: row.refId, verdict, status: res.statusCode }
}

async function lastTapId(store: Store): Promise<number> {
  return (await store.tapLog.list({ teamId: null, refusedOnly: false, limit: 1 }))[0]?.id ?? 0
}
