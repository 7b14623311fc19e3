// Issue 3 acceptance: 10,000 random and mutated tap URLs against /tap with zero 5xx responses.
// Mutations start from real chip URLs (AES, LRP, file data, sdm-backend names, plain and NTAG 21x
// mirrors) so most inputs get deep into verification before they fail. The generator is seeded:
// a failure names the seed and the URL, and FUZZ_SEED=<seed> replays the run.
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { formatNtag21xMirror, sdmMac, sdmSessionKeys, toHex } from '../../src/sun/index.js'
import { type BackendGateway, CONTRACT, createBackendGateway, metadata, queryRows, seedSunChip, seedSunProfile, seedTeam, sunTapUrl } from '../helpers/gateway.js'
import { seededRandom } from '../helpers/seededRandom.js'

const TOTAL = 10_000
const MAX_URL = 100_000
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31)

const META = '8E3A1F0C5B7D92E4A6C8F1B3D5E7092B'
const FILE = '4C6E8A0B2D4F61839AB5C7D9E1F30517'
const LRP_META = '7A7A7A7A7A7A7A7A7A7A7A7A7A7A7A7A'
const LRP_FILE = '5B5B5B5B5B5B5B5B5B5B5B5B5B5B5B5B'
const UID = { aes: '04F0000000000A', redirect: '04F0000000000B', lrp: '04F0000000000C', ntag21x: '04F0000000000D', plain: '04F0000000000E' }

const rng = seededRandom(SEED)
const int = (n: number) => Math.floor(rng() * n)
const pick = <T>(items: readonly T[]): T => items[int(items.length)]!
const HEX = '0123456789ABCDEF'
const UNICODE = ['é', 'ß', '😀', '\u202e', '\u0000', '\u0301', '\ufffd', 'ﬀ', '\u00a0', 'İ', '\ud800', '中文', '\u200b']
const PUNCT = ['%', '&', '=', '?', '#', ' ', '+', '/', ';', '"', '<', '>', '\\', "'", '`', '[', ']', '{', '}', '|', '^', '\t', '\n', '\r']

let counter = 1
let gw: BackendGateway

/** A genuine URL of one of the chips, with a counter never used before. */
function freshUrl(): string {
  const c = counter++
  switch (int(7)) {
    case 0:
      return sunTapUrl({ metaKey: META, fileKey: FILE, uid: UID.aes, counter: c })
    case 1:
      return sunTapUrl({ metaKey: META, fileKey: FILE, uid: UID.redirect, counter: c, fileData: toHex(Buffer.alloc(16 * (1 + int(3)), c)) })
    case 2:
      return sunTapUrl({ metaKey: LRP_META, fileKey: LRP_FILE, mode: 'lrp', uid: UID.lrp, counter: c })
    case 3:
      return sunTapUrl({ metaKey: META, fileKey: FILE, uid: UID.aes, counter: c, params: { picc: 'picc_data', mac: 'cmac', enc: 'enc' } })
    case 4:
      return `/tap?uid=${formatNtag21xMirror({ uid: UID.ntag21x, counter: c })}`
    case 5: {
      // A plain UID/counter mirror with CMAC (uid, ctr, cmac): the counter mirrored big-endian as the chip does.
      const ctr = c.toString(16).toUpperCase().padStart(6, '0')
      const mac = toHex(sdmMac({ sessionKey: sdmSessionKeys({ fileKey: FILE, uid: Buffer.from(UID.plain, 'hex'), counter: c }).macKey, macInput: '' }))
      return `/tap?uid=${UID.plain}&ctr=${ctr}&cmac=${mac}`
    }
    default:
      // UID-only, counter-only, unknown chip, counter at its limit.
      return pick([
        () => sunTapUrl({ metaKey: META, fileKey: FILE, uid: UID.aes, counter: null }),
        () => sunTapUrl({ metaKey: META, fileKey: FILE, uid: null, counter: c }),
        () => sunTapUrl({ metaKey: META, fileKey: FILE, uid: '04F000000000FF', counter: c }),
        () => sunTapUrl({ metaKey: META, fileKey: FILE, uid: UID.aes, counter: 0xffffff }),
      ])()
  }
}

const queryStart = (u: string) => Math.max(0, u.indexOf('?'))
const at = (u: string, i: number, insert: string, remove = 0) => u.slice(0, i) + insert + u.slice(i + remove)
const inQuery = (u: string) => queryStart(u) + int(Math.max(1, u.length - queryStart(u)))

const mutations: Record<string, (u: string) => string> = {
  flipHex: (u) => {
    const spots = [...u].flatMap((ch, i) => (i > queryStart(u) && HEX.includes(ch.toUpperCase()) ? [i] : []))
    return spots.length === 0 ? u : at(u, pick(spots), pick([...HEX, ...HEX.toLowerCase()]), 1)
  },
  nonHex: (u) => at(u, inQuery(u), pick(['G', 'z', 'x', 'X', '-', '_', '.', ...PUNCT]), 1),
  truncate: (u) => u.slice(0, int(u.length + 1)),
  duplicateParam: (u) => {
    const params = u.slice(queryStart(u) + 1).split('&')
    return `${u}&${pick(params)}`
  },
  removeParam: (u) => {
    const [path, query = ''] = u.split('?', 2) as [string, string?]
    const params = query.split('&')
    params.splice(int(params.length), 1)
    return `${path}?${params.join('&')}`
  },
  swapParams: (u) => {
    const [path, query = ''] = u.split('?', 2) as [string, string?]
    return `${path}?${query.split('&').reverse().join('&')}`
  },
  lowerQuery: (u) => u.slice(0, queryStart(u)) + u.slice(queryStart(u)).toLowerCase(),
  upperAll: (u) => u.toUpperCase(),
  toggleCase: (u) => {
    const i = inQuery(u)
    const ch = u[i] ?? ''
    return at(u, i, ch === ch.toLowerCase() ? ch.toUpperCase() : ch.toLowerCase(), 1)
  },
  percentEncode: (u) => {
    const i = inQuery(u)
    const ch = u[i] ?? 'A'
    return at(u, i, `%${ch.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`, 1)
  },
  percentGarbage: (u) => at(u, inQuery(u), pick(['%', '%2', '%ZZ', '%00', '%25', '%E2%80%AE', '%C0%AF', '%FF%FE', '%26c%3D'])),
  encodeWholeQuery: (u) => {
    try {
      return u.slice(0, queryStart(u) + 1) + encodeURIComponent(u.slice(queryStart(u) + 1))
    } catch {
      return u // a lone surrogate (from the unicode mutation) has no UTF-8 encoding
    }
  },
  hugeValue: (u) => `${u}&${pick(['e', 'c', 'd', 'uid', 'ctr', 'cmac', 'picc_data', 'enc', 'x'])}=${pick(['A', '0', 'F', 'Z', '%41'])!.repeat(1 + int(pick([100, 5_000, 70_000])))}`,
  hugeRepeat: (u) => `${u}${`&${u.slice(queryStart(u) + 1)}`.repeat(1 + int(200))}`,
  manyParams: (u) => `${u}${Array.from({ length: 1 + int(2_000) }, (_, i) => `&p${i}=${i}`).join('')}`,
  unicode: (u) => at(u, int(u.length + 1), pick(UNICODE)),
  empty: () => pick(['/tap', '/tap?', '/tap?&', '/tap?=', '/tap?e=&c=', '/tap?e&c&d', '/tap?&&&&', '/tap??', '/tap?#']),
  missingQuestionMark: (u) => u.replace('?', pick(['', '&', '/', '#', ';'])),
  extraQuestionMark: (u) => at(u, inQuery(u), '?'),
  fragment: (u) => at(u, inQuery(u), `#${pick(['', 'x', 'c=0000000000000000', '&e='])}`),
  paramNameCase: (u) => u.replace(/([?&])(e|c|d|uid|ctr|cmac)=/, (_m, sep: string, name: string) => `${sep}${name.toUpperCase()}=`),
  bareKeys: (u) => u.replace(/=/g, pick(['', '==', ':'])),
  otherPath: (u) => u.replace('/tap', pick(['/tap/', '/TAP', '/tap/x', '/ta', '//tap', '/./tap', '/tap%3F', '/%74ap', '/tap;x'])),
  randomAscii: () => `/tap?${Array.from({ length: int(300) }, () => String.fromCharCode(32 + int(95))).join('')}`,
  randomHexFields: () => `/tap?e=${Array.from({ length: pick([32, 48, 31, 33, 64]) }, () => pick([...HEX])).join('')}&c=${Array.from({ length: pick([16, 15, 17]) }, () => pick([...HEX])).join('')}`,
}
const mutationNames = Object.keys(mutations)

const sent: string[] = []

function nextUrl(): { url: string; how: string } {
  const roll = rng()
  if (roll < 0.04) {
    const url = freshUrl()
    sent.push(url)
    return { url, how: 'fresh' }
  }
  // A genuine URL seen before: a replay (or an older counter after a newer one).
  if (roll < 0.06 && sent.length > 0) return { url: pick(sent), how: 'replay' }
  let url = freshUrl()
  const applied: string[] = []
  for (let n = 1 + int(3); n > 0; n--) {
    const name = pick(mutationNames)
    // Beyond ~100 kB only the test slows down: real servers refuse a request line over 16 kB (431) anyway.
    url = mutations[name]!(url).slice(0, MAX_URL)
    applied.push(name)
  }
  return { url: sendable(url), how: applied.join('+') }
}

/**
 * What a client puts on the wire. light-my-request builds the request line with WHATWG URL, like a
 * browser: it cannot send an empty URL (a client sends at least "/"), and it reads "/\x" as the
 * host "x", which a browser would send as "//x"; "%5C" keeps such a URL on its path instead.
 */
function sendable(url: string): string {
  if (url === '') return '/'
  return URL.canParse(url.startsWith('//') ? `http://localhost${url}` : url, 'http://localhost') ? url : url.replaceAll('\\', '%5C')
}

beforeAll(async () => {
  gw = await createBackendGateway({ config: { rateLimit: { max: 10_000_000 } } })
  const { teamId } = await seedTeam(gw, {
    name: 'Fuzz',
    redirectUrl: null,
    chips: [
      { uid: UID.aes },
      { uid: UID.redirect, redirectUrl: 'https://shop.example/p?q=1' },
      { uid: UID.lrp },
      { uid: UID.ntag21x, kind: 'ntag21x' },
      { uid: UID.plain },
    ],
    tokens: [{ chainId: 31337, contractAddress: CONTRACT, tokenId: '1', chips: [UID.aes], metadata: metadata({ name: '<b>"Fuzzy"</b>' }) }],
  })
  await seedSunProfile(gw, { teamId, name: 'aes', metaKey: META, fileKey: FILE })
  await seedSunProfile(gw, { teamId, name: 'lrp', mode: 'lrp', metaKey: LRP_META, fileKey: LRP_FILE })
  for (const uid of [UID.aes, UID.redirect, UID.plain]) await seedSunChip(gw, { teamId, uid, profileName: 'aes' })
  await seedSunChip(gw, { teamId, uid: UID.lrp, profileName: 'lrp' })
})

afterAll(async () => gw?.close())

describe(`fuzzing GET /tap (seed ${SEED})`, () => {
  test(`${TOTAL} random and mutated tap URLs: no 5xx, every answer a 2xx/302/4xx with an HTML or JSON body`, { timeout: 60_000 }, async () => {
    const statuses = new Map<number, number>()
    const failures: string[] = []
    for (let i = 0; i < TOTAL; i++) {
      const { url, how } = nextUrl()
      const res = await gw.app.inject({ method: 'GET', url })
      const status = res.statusCode
      statuses.set(status, (statuses.get(status) ?? 0) + 1)
      const type = String(res.headers['content-type'] ?? '')
      let problem: string | null = null
      if (status >= 500) problem = `status ${status}: ${res.body.slice(0, 200)}`
      else if (status === 302) {
        if (!String(res.headers.location ?? '').includes('serviceRef=')) problem = 'a 302 without serviceRef'
      } else if (!(status >= 200 && status < 300) && !(status >= 400 && status < 500)) problem = `status ${status}`
      else if (type.startsWith('text/html')) {
        if (!res.body.startsWith('<!doctype html>') || !res.body.trimEnd().endsWith('</html>')) problem = 'an HTML body that is not a whole page'
      } else if (type.startsWith('application/json')) {
        try {
          JSON.parse(res.body)
        } catch {
          problem = 'a JSON body that does not parse'
        }
      } else problem = `content type ${JSON.stringify(type)}`
      if (problem && failures.length < 20) failures.push(`${problem} for ${JSON.stringify(url.slice(0, 300))} (${how}; FUZZ_SEED=${SEED})`)
    }
    expect(failures).toEqual([])
    expect([...statuses.keys()].filter((s) => s >= 500)).toEqual([])
    // The run reached every outcome: accepted pages and redirects, and refusals (one public status for all; the kinds are in the tap log).
    for (const status of [200, 302, 400]) expect(statuses.get(status) ?? 0, `responses with status ${status}`).toBeGreaterThan(0)
    const reasons = new Set((await queryRows<{ reason: string }>(gw.store, 'SELECT DISTINCT reason FROM tap_log')).map((row) => row.reason))
    for (const reason of ['accepted', 'malformed', 'mac_mismatch', 'counter_replay', 'unknown_chip']) expect(reasons).toContain(reason)
  })
})
