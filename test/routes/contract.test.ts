// Issue 9 acceptance: a contract test driven by /openapi.json itself. For every operation in the
// document, requests are generated from the operation's own schemas (json-schema-faker, seeded), valid
// ones and ones made invalid on purpose, and sent to a real gateway whose data the generated ids often
// hit. Every answer must carry a status the operation documents (never a 500), a documented content
// type, and a body that validates against the documented schema (ajv). A request valid under the
// document is never refused as malformed, and one invalid under it always is; the document's security
// requirement is what the server asks for. CONTRACT_SEED=<n> runs another seed.
import type { ValidateFunction } from 'ajv'
// OpenAPI 3.0 schema objects are draft-04 style (a boolean exclusiveMinimum, nullable): Ajv's draft-04 class reads them as written.
import AjvDraft04 from 'ajv-draft-04'
import addFormats from 'ajv-formats'
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import { generateSync, type JsonSchema } from 'json-schema-faker'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { createHash } from 'node:crypto'
import { createKioskToken } from '../../src/kiosk/kioskTokens.js'
import { setStaffPin } from '../../src/kiosk/staffAuth.js'
import { setStationMode } from '../../src/kiosk/stationModes.js'
import { createStation } from '../../src/stations/stations.js'
import { ALICE, type BackendGateway, BOB, CONTRACT, createBackendGateway, GUESTBOOK, metadata, seedTeam, tapChip } from '../helpers/gateway.js'
import { seededRandom } from '../helpers/seededRandom.js'

const SEED = Number(process.env.CONTRACT_SEED ?? 20261121)
// CONTRACT_COMPAT=iyk (test/routes/contractCompat.test.ts): the same checks with issue 26's compat=iyk answers.
const COMPAT = process.env.CONTRACT_COMPAT === 'iyk' ? ('iyk' as const) : undefined
/** Our stable error code: `error`, or `code` in the hosted API's error shape (compat=iyk, its operations only). */
const codeOf = (body: unknown): string | undefined => {
  const b = body as { error?: string; code?: string; statusCode?: number } | undefined
  if (COMPAT && b?.statusCode !== undefined) return b.code
  return b?.error
}
const VALID_PER_OPERATION = 32
const INVALID_PER_OPERATION = 16

type Schema = Record<string, unknown>
type Parameter = { name: string; in: string; required?: boolean; schema: Schema }
type Media = Record<string, { schema: Schema }>
type Operation = {
  parameters?: Parameter[]
  requestBody?: { required?: boolean; content: Media }
  responses: Record<string, { content?: Media }>
  security?: Array<Record<string, string[]>>
}
type Doc = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Schema> } }

/** One request, as generated: the parts the document describes, plus the credentials. */
type Request = { path: Record<string, string>; query: Record<string, string>; body?: unknown; headers: Record<string, string> }

const rng = seededRandom(SEED)
const chance = (p: number) => rng() < p
const pick = <T>(items: readonly T[]): T => items[Math.floor(rng() * items.length)]!
let generated = 0
const fake = (schema: Schema): unknown =>
  generateSync(schema as JsonSchema, { seed: SEED * 1000 + generated++, optionalsProbability: 0.6, maxItems: 3 })

let gw: BackendGateway
let doc: Doc
// Not strict: the document's schemas carry OpenAPI keywords (example) that are no JSON Schema keywords.
const ajv = new AjvDraft04.default({ strict: false })
addFormats.default(ajv)
const compiled = new Map<Schema, ValidateFunction>()
/** Validates against a schema of the document; `#/components/…` refs resolve in the document. */
function validator(schema: Schema): ValidateFunction {
  let validate = compiled.get(schema)
  if (!validate) {
    validate = ajv.compile({ ...schema, components: doc.components })
    compiled.set(schema, validate)
  }
  return validate
}
const isValid = (schema: Schema, value: unknown) => validator(schema)(value) === true

const UIDS = ['04C0A000000001', '04C0A000000002', '04C0A000000003', '04C0A000000004', '04C0A000000005']
const credentials = { apiKey: '', foreignApiKey: '', station: '', kiosk: '', kioskStationId: 0 }
let sessions = 0
/** A fresh staff session of the kiosk's station (POST /kiosk/staff/end ends the one it is sent with). */
async function staffSession(): Promise<string> {
  const token = `tgss_contract_${++sessions}`
  await gw.store.staffAuth.insertSession(createHash('sha256').update(token).digest('hex'), credentials.kioskStationId, gw.clock.now)
  return token
}
/** Values of the seeded data, by parameter or property name: a generated request takes one often, so it reaches real rows. */
const hints: Record<string, Array<() => unknown>> = {}
const otps: string[] = []
/** Codes for the /otps/{id} path, apart from those sent as credentials: DELETE /otps/{id} removes them. */
const pathOtps: string[] = []
const refIds: string[] = []

beforeAll(async () => {
  gw = await createBackendGateway({ config: { rateLimit: { max: 1_000_000, windowMs: 60_000 }, ...(COMPAT ? { compat: COMPAT } : {}) } })
  const a = await seedTeam(gw, {
    name: 'A',
    chipGroups: [{ name: 'Desk' }],
    chips: UIDS.map((uid) => ({ uid })),
    tokens: [
      { chainId: 31337, contractAddress: CONTRACT, tokenId: '1', chips: [UIDS[0]], metadata: metadata(), twoTapClaim: { delaySeconds: 0, windowSeconds: 600 } },
      { chainId: 31337, contractAddress: CONTRACT, tokenId: '2', chips: [UIDS[1]], metadata: metadata() },
      { chainId: 31337, contractAddress: CONTRACT, tokenId: '3', metadata: metadata() },
    ],
    proofEvents: [{ proofEventId: 801, name: 'Proof', status: 'active', chips: [UIDS[2]] }],
    guestbookContracts: [
      {
        name: 'Guests',
        symbol: 'GST',
        chainId: 31337,
        address: GUESTBOOK,
        events: [
          { name: 'Opening', tokenId: '1', metadata: metadata(), chips: [UIDS[3]] },
          { name: 'Closing', tokenId: '2', metadata: metadata(), chips: [UIDS[3], UIDS[4]] },
        ],
      },
      { name: 'Pending', symbol: 'PND', chainId: 31337 },
    ],
  })
  const b = await seedTeam(gw, { name: 'B', chips: [{ uid: '04C0B000000001' }], tokens: [{ chainId: 31337, contractAddress: CONTRACT, tokenId: '9', chips: ['04C0B000000001'] }] })
  credentials.apiKey = a.apiKey
  credentials.foreignApiKey = b.apiKey
  const desk = await gw.store.tx((tx) => createStation(tx, { teamId: a.teamId, name: 'desk', now: gw.clock.now }))
  credentials.station = desk.token
  // The kiosk staff routes: a check-in station with a PIN, a kiosk token, sessions made per request.
  await setStationMode(gw.store, { stationId: desk.stationId, mode: 'checkin', eventId: (await gw.store.guestbook.listEvents(a.teamId))[0]!.id, now: gw.clock.now })
  await setStaffPin(gw.store, { stationId: desk.stationId, pin: '2468', now: gw.clock.now })
  credentials.kiosk = (await createKioskToken(gw.store, { stationId: desk.stationId, now: gw.clock.now })).token
  credentials.kioskStationId = desk.stationId

  // Refs: some left unread for GET /refs/{id}, the others read once for their OTPs.
  for (let round = 0; round < 8; round++)
    for (const uid of UIDS) {
      const refId = await tapChip(gw, uid)
      if (round % 2 === 0) {
        refIds.push(refId)
        continue
      }
      const view = JSON.parse((await gw.app.inject({ url: `/refs/${refId}` })).body) as {
        otp?: string
        linkedToken?: { otp?: string }
        proofEvents: { otp?: string }[]
        guestbookEvents: { otp?: string }[]
      }
      for (const code of [view.otp, view.linkedToken?.otp, ...view.proofEvents.map((e) => e.otp), ...view.guestbookEvents.map((e) => e.otp)])
        if (code) (round % 4 === 1 ? pathOtps : otps).push(code)
    }

  const contracts = (await gw.store.guestbook.listContracts(a.teamId)).map((c) => c.id)
  const events = (await gw.store.guestbook.listEvents(a.teamId)).map((e) => e.id)
  const values = (...items: unknown[]) => items.map((item) => () => item)
  Object.assign(hints, {
    contractAddress: values(CONTRACT, GUESTBOOK, CONTRACT.toLowerCase()),
    contract: values(CONTRACT, GUESTBOOK),
    chainId: values(31337, '31337'),
    tokenId: values('1', '2', '3', 1, '9'),
    eventId: values(...events),
    guestbookEventId: values(...events),
    contractId: values(...contracts, String(contracts[0])),
    tagUID: values(...UIDS),
    tagUIDs: values([UIDS[3]], [UIDS[3], UIDS[4]!.toLowerCase()]),
    rfUid: values(...UIDS),
    recipient: values(ALICE, BOB, ALICE.toLowerCase()),
    // JSON text of the metadata object: the document can say "a string", not what the JSON inside must hold.
    metadata: values(JSON.stringify(metadata())),
    refs: [() => pick(refIds)],
    otps: [() => pick(pathOtps)],
  })
  doc = JSON.parse((await gw.app.inject({ url: '/openapi.json' })).body) as Doc
})

afterAll(async () => gw?.close())

/** A hint for this name (the `id` of /refs and /otps by path), taken more often than not. */
function hinted(path: string, name: string): unknown {
  const key = name === 'id' ? path.split('/')[1]! : name
  const options = hints[key]
  return options && chance(0.6) ? pick(options)() : undefined
}

const parametersOf = (op: Operation, where: string) => (op.parameters ?? []).filter((p) => p.in === where)
const bodySchemaOf = (op: Operation) => op.requestBody?.content['application/json']?.schema

/** A request valid under the document, or undefined when the generator could not make one. */
function validRequest(path: string, op: Operation): Request | undefined {
  for (let attempt = 0; attempt < 5; attempt++) {
    const request: Request = { path: {}, query: {}, headers: {} }
    for (const p of parametersOf(op, 'path')) request.path[p.name] = String(hinted(path, p.name) ?? fake(p.schema))
    for (const p of parametersOf(op, 'query'))
      if (p.required || chance(0.5)) request.query[p.name] = String(hinted(path, p.name) ?? fake(p.schema))
    const bodySchema = bodySchemaOf(op)
    if (bodySchema) {
      const body = fake(bodySchema)
      if (typeof body === 'object' && body !== null && !Array.isArray(body))
        for (const name of Object.keys(bodySchema.properties ?? {})) {
          const value = hinted(path, name)
          if (value !== undefined && (name in body || chance(0.3))) (body as Record<string, unknown>)[name] = value
        }
      request.body = body
    }
    if (documentValid(op, request)) return request
  }
  return undefined
}

function documentValid(op: Operation, request: Request): boolean {
  const params = (where: 'path' | 'query') =>
    parametersOf(op, where).every((p) => (request[where][p.name] === undefined ? !p.required : isValid(p.schema, request[where][p.name])))
  const bodySchema = bodySchemaOf(op)
  return params('path') && params('query') && (bodySchema === undefined || isValid(bodySchema, request.body))
}

const WRONG_VALUES: unknown[] = [true, null, {}, [], -1, 1.5, 0, '', '!not valid!', '0x1234']
// Path parameters stay under the router's limit (100 characters: 414, checked on its own below).
const WRONG_STRINGS = { path: ['!not valid!', '-1', '1.5', '0', '0x1234', 'x'.repeat(99)], query: ['!not valid!', '-1', '1.5', '0', '0x1234', 'x'.repeat(300)] }

/** The valid request with one part broken so that the document no longer allows it. */
function invalidRequest(path: string, op: Operation): { request: Request; what: string } | undefined {
  const base = validRequest(path, op)
  if (!base) return undefined
  const bodySchema = bodySchemaOf(op)
  const mutations: Array<() => { request: Request; what: string } | undefined> = []
  for (const where of ['path', 'query'] as const)
    for (const p of parametersOf(op, where)) {
      mutations.push(() => {
        const wrong = WRONG_STRINGS[where].filter((s) => !isValid(p.schema, s))
        if (wrong.length === 0) return undefined
        const value = pick(wrong)
        return { request: { ...base, [where]: { ...base[where], [p.name]: value } }, what: `${where} ${p.name}=${JSON.stringify(value).slice(0, 40)}` }
      })
      if (p.required && where === 'query')
        mutations.push(() => {
          const { [p.name]: _dropped, ...rest } = base.query
          return { request: { ...base, query: rest }, what: `query ${p.name} left out` }
        })
    }
  if (bodySchema && typeof base.body === 'object' && base.body !== null) {
    const body = base.body as Record<string, unknown>
    const properties = (bodySchema.properties ?? {}) as Record<string, Schema>
    for (const [name, schema] of Object.entries(properties))
      mutations.push(() => {
        const wrong = WRONG_VALUES.filter((v) => !isValid(schema, v))
        if (wrong.length === 0) return undefined
        const value = pick(wrong)
        return { request: { ...base, body: { ...body, [name]: value } }, what: `body ${name}=${JSON.stringify(value)}` }
      })
    for (const name of (bodySchema.required ?? []) as string[])
      mutations.push(() => {
        const { [name]: _dropped, ...rest } = body
        return { request: { ...base, body: rest }, what: `body ${name} left out` }
      })
    mutations.push(() => ({ request: { ...base, body: pick([[], 'text', 42]) }, what: 'body not an object' }))
  }
  for (let attempt = 0; attempt < 5 && mutations.length > 0; attempt++) {
    const broken = pick(mutations)()
    if (broken && !documentValid(op, broken.request)) return broken
  }
  return undefined
}

/** The string form a schema allows, where it has a pattern: the schema itself, or one branch of its anyOf / oneOf. */
function patternedString(schema: Schema): Schema | undefined {
  const branches = [schema, ...((schema.anyOf ?? schema.oneOf ?? []) as Schema[])]
  return branches.find((s) => s.type === 'string' && typeof s.pattern === 'string')
}

// What a generator from the patterns never makes, and a lenient server reads anyway (an OpenAPI fuzzer
// found `02`, `" 2"` and `"2\n"` taken as token id 2, and a recipient with a trailing newline taken).
const BOUNDARY: Array<[string, (value: string) => string]> = [
  ['a leading zero', (v) => `0${v}`],
  ['a leading space', (v) => ` ${v}`],
  ['a trailing space', (v) => `${v} `],
  ['a trailing newline', (v) => `${v}\n`],
  ['a tab around it', (v) => `\t${v}\t`],
]

/**
 * The valid request with each string parameter or body property that has a pattern (and each array
 * of them) turned into the boundary values its pattern forbids, one at a time: every one of them
 * must be refused.
 */
function boundaryRequests(path: string, op: Operation): Array<{ request: Request; what: string }> {
  const base = validRequest(path, op)
  if (!base) return []
  const out: Array<{ request: Request; what: string }> = []
  const variants = (schema: Schema, current: unknown): Array<[string, string]> => {
    const text = patternedString(schema)
    if (!text) return []
    const value = typeof current === 'string' && isValid(text, current) ? current : String(fake(text))
    return BOUNDARY.map(([what, change]): [string, string] => [what, change(value)]).filter(([, v]) => !isValid(schema, v))
  }
  for (const where of ['path', 'query'] as const)
    for (const p of parametersOf(op, where))
      for (const [what, value] of variants(p.schema, base[where][p.name]))
        out.push({ request: { ...base, [where]: { ...base[where], [p.name]: value } }, what: `${where} ${p.name} with ${what}: ${JSON.stringify(value)}` })
  const bodySchema = bodySchemaOf(op)
  if (bodySchema && typeof base.body === 'object' && base.body !== null && !Array.isArray(base.body)) {
    const body = base.body as Record<string, unknown>
    for (const [name, schema] of Object.entries((bodySchema.properties ?? {}) as Record<string, Schema>)) {
      const items = schema.type === 'array' ? (schema.items as Schema | undefined) : undefined
      const current = body[name]
      if (items) {
        const list = Array.isArray(current) && current.length > 0 ? current : [undefined]
        for (const [what, value] of variants(items, list[0]))
          out.push({ request: { ...base, body: { ...body, [name]: [value, ...list.slice(1)] } }, what: `body ${name}[0] with ${what}: ${JSON.stringify(value)}` })
      } else
        for (const [what, value] of variants(schema, current))
          out.push({ request: { ...base, body: { ...body, [name]: value } }, what: `body ${name} with ${what}: ${JSON.stringify(value)}` })
    }
  }
  return out.filter((b) => !documentValid(op, b.request))
}

/**
 * Credentials as the operation's security requirement asks: `mixed` mostly good ones (sometimes
 * another team's key or an unknown code), `good` only good ones, `none` none, `wrong` unknown ones.
 */
async function withCredentials(op: Operation, request: Request, how: 'mixed' | 'good' | 'none' | 'wrong'): Promise<Request> {
  const schemes = (op.security ?? []).flatMap((requirement) => Object.keys(requirement))
  const headers: Record<string, string> = {}
  const optional = (op.security ?? []).some((requirement) => Object.keys(requirement).length === 0)
  for (const scheme of schemes) {
    if (how === 'none' || (how === 'mixed' && optional && chance(0.5))) continue
    const good = how === 'good' || (how === 'mixed' && chance(0.85))
    if (scheme === 'apiKey') headers['x-service-api-key'] = how === 'wrong' ? 'tg_not_a_key' : good ? credentials.apiKey : credentials.foreignApiKey
    if (scheme === 'otp') headers['x-service-code'] = how === 'wrong' || !good ? 'not-a-code' : pick(otps)
    if (scheme === 'station') headers['x-station-token'] = how === 'wrong' ? 'tgs_not_a_token' : credentials.station
    if (scheme === 'kiosk') headers['x-kiosk-token'] = how === 'wrong' ? 'tgk_not_a_token' : credentials.kiosk
    if (scheme === 'staffSession') headers['x-staff-session'] = how === 'wrong' ? 'tgss_not_a_session' : await staffSession()
  }
  return { ...request, headers }
}

function toInject(method: string, path: string, request: Request, extra: Partial<InjectOptions> = {}): InjectOptions {
  const url = path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(request.path[name] ?? ''))
  const query = new URLSearchParams(request.query).toString()
  return {
    method: method.toUpperCase() as InjectOptions['method'],
    url: query ? `${url}?${query}` : url,
    headers: { ...request.headers, ...(request.body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(request.body === undefined ? {} : { payload: JSON.stringify(request.body) }),
    ...extra,
  }
}

const failures: string[] = []
const described = (sent: InjectOptions) => `sent ${sent.method} ${String(sent.url).slice(0, 160)} ${String(sent.payload ?? '').slice(0, 300)}`
const seen = new Map<string, Set<number>>()

/** Checks an answer against the operation's documented responses; returns the parsed body. */
function checkResponse(label: string, op: Pick<Operation, 'responses'>, res: LightMyRequestResponse, sent: InjectOptions): unknown {
  const fail = (why: string) => failures.push(`${label}: ${why}\n    ${described(sent)}\n    got ${res.statusCode} ${res.body.slice(0, 300)}`)
  const documented = op.responses[String(res.statusCode)]
  if (res.statusCode >= 500 && res.statusCode !== 503) fail('a 5xx')
  if (!documented) return fail(`status ${res.statusCode} is not documented (documented: ${Object.keys(op.responses).join(', ')})`)
  const type = String(res.headers['content-type'] ?? '').split(';')[0]!.trim()
  if (!documented.content) return res.body === '' ? undefined : fail('a body where none is documented')
  const media = documented.content[type] ?? (type === '' && res.body === '' ? Object.values(documented.content)[0] : undefined)
  if (!media) return fail(`content type "${type}" is not documented (documented: ${Object.keys(documented.content).join(', ')})`)
  let body: unknown = res.body
  if (type === 'application/json') {
    try {
      body = JSON.parse(res.body)
    } catch {
      return fail('the body is not JSON')
    }
  }
  const validate = validator(media.schema)
  if (!validate(body)) fail(`the body does not match the documented schema: ${ajv.errorsText(validate.errors)}`)
  return body
}

async function send(label: string, method: string, path: string, op: Operation, options: InjectOptions): Promise<{ status: number; body: unknown }> {
  const res = await gw.app.inject(options)
  const status = res.statusCode
  const statuses = seen.get(`${method} ${path}`) ?? new Set<number>()
  statuses.add(status)
  seen.set(`${method} ${path}`, statuses)
  return { status, body: checkResponse(`${method.toUpperCase()} ${path} [${label}]`, op, res, options) }
}

const MALFORMED_CODES = new Set(['validation_failed', 'invalid_recipient', 'invalid_json'])

test('every operation answers generated requests as its OpenAPI document says', { timeout: 60_000 }, async () => {
  const started = Date.now()
  const operations = Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ path, method, op })))
  expect(operations.length).toBeGreaterThan(25)
  let validSent = 0
  let invalidSent = 0
  let boundarySent = 0

  for (const { path, method, op } of operations) {
    const label = `${method.toUpperCase()} ${path}`
    let valid = 0
    for (let i = 0; i < VALID_PER_OPERATION; i++) {
      const request = validRequest(path, op)
      if (!request) continue
      valid++
      const sent = toInject(method, path, await withCredentials(op, request, 'mixed'))
      const { status, body } = await send('valid', method, path, op, sent)
      const error = codeOf(body)
      const fields = Object.keys((body as { errors?: Record<string, string> } | undefined)?.errors ?? {})
      // The one rule the document cannot state: what the JSON text inside `metadata` must hold.
      const aboutMetadata = fields.length > 0 && fields.every((f) => f === 'metadata' || f.startsWith('metadata.'))
      if (status === 400 && error && MALFORMED_CODES.has(error) && !aboutMetadata)
        failures.push(`${label} [valid]: a request the document allows was refused as ${error}: ${JSON.stringify(body)}\n    ${described(sent)}`)
    }
    validSent += valid
    if (valid < VALID_PER_OPERATION / 2) failures.push(`${label}: the generator made only ${valid} valid requests`)

    // Requests the document forbids, with good credentials: refused as malformed, whatever else is wrong.
    const hasInput = (op.parameters ?? []).some((p) => p.in !== 'header') || bodySchemaOf(op) !== undefined
    for (let i = 0; hasInput && i < INVALID_PER_OPERATION; i++) {
      const broken = invalidRequest(path, op)
      if (!broken) continue
      invalidSent++
      const sent = toInject(method, path, await withCredentials(op, broken.request, 'good'))
      const { status } = await send(`invalid: ${broken.what}`, method, path, op, sent)
      if (status !== 400) failures.push(`${label} [invalid: ${broken.what}]: answered ${status}, not 400\n    ${described(sent)}`)
    }

    // The boundaries of every pattern, with good credentials: what the document forbids is refused as malformed.
    for (const broken of boundaryRequests(path, op)) {
      boundarySent++
      const sent = toInject(method, path, await withCredentials(op, broken.request, 'good'))
      const { status, body } = await send(`boundary: ${broken.what}`, method, path, op, sent)
      const error = codeOf(body)
      if (status !== 400 || !error || !MALFORMED_CODES.has(error))
        failures.push(`${label} [boundary: ${broken.what}]: answered ${status} ${error ?? ''}, not 400 as malformed\n    ${described(sent)}`)
    }

    // The security requirement is what the server asks for.
    const required = (op.security ?? []).length > 0 && !(op.security ?? []).some((r) => Object.keys(r).length === 0)
    const request = validRequest(path, op)
    if (request) {
      for (const how of ['none', 'wrong'] as const) {
        const { status } = await send(`credentials: ${how}`, method, path, op, toInject(method, path, await withCredentials(op, request, how)))
        if (required && status !== 401) failures.push(`${label}: with ${how} credentials answered ${status}, not 401`)
        if (!required && status === 401 && how === 'none') failures.push(`${label}: documented without credentials, answered 401`)
      }
      // What the framework refuses, in the documented statuses and shape: Fastify reads the body of
      // these methods whether or not the operation documents one.
      if (bodySchemaOf(op) || ['post', 'patch', 'put', 'delete'].includes(method)) {
        const withAuth = await withCredentials(op, request, 'good')
        const text = toInject(method, path, withAuth, { headers: { ...withAuth.headers, 'content-type': 'text/plain' }, payload: 'plain text' })
        const notJson = await send('text/plain body', method, path, op, text)
        if (notJson.status !== 415) failures.push(`${label}: a text/plain body answered ${notJson.status}, not 415`)
        const json = { ...withAuth.headers, 'content-type': 'application/json' }
        const big = toInject(method, path, withAuth, { headers: json, payload: JSON.stringify({ pad: 'x'.repeat(1024 * 1024) }) })
        const tooBig = await send('body over 1 MiB', method, path, op, big)
        if (tooBig.status !== 413) failures.push(`${label}: a body over 1 MiB answered ${tooBig.status}, not 413`)
        const broken = await send('body not JSON', method, path, op, toInject(method, path, withAuth, { headers: json, payload: '{"not": json' }))
        if (broken.status !== 400) failures.push(`${label}: a body that is not JSON answered ${broken.status}, not 400`)
      }
      for (const p of parametersOf(op, 'path')) {
        const long = { ...request, path: { ...request.path, [p.name]: '1'.repeat(101) } }
        const res = await send(`path ${p.name} of 101 characters`, method, path, op, toInject(method, path, await withCredentials(op, long, 'good')))
        if (res.status !== 414) failures.push(`${label}: a path parameter of 101 characters answered ${res.status}, not 414`)
      }
    }
  }

  // Methods a path does not document: 405 with Allow naming the documented ones (and HEAD where Fastify adds it).
  const errorSchema = { responses: { 404: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } } } }
  const asError = (status: number) => ({ responses: { [status]: errorSchema.responses[404] } })
  for (const [path, ops] of Object.entries(doc.paths)) {
    const documented = Object.keys(ops).map((m) => m.toUpperCase())
    const request = validRequest(path, Object.values(ops)[0]!) ?? { path: {}, query: {}, headers: {} }
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'].filter((m) => !documented.includes(m))) {
      const sent = toInject(method, path, { ...request, body: undefined })
      const res = await gw.app.inject(sent)
      checkResponse(`${method} ${path} [undocumented method]`, asError(405), res, sent)
      const allow = String(res.headers.allow ?? '').split(', ').filter((m) => m !== 'HEAD')
      if (res.statusCode !== 405 || [...allow].sort().join() !== [...documented].sort().join())
        failures.push(`${method} ${path}: answered ${res.statusCode} with Allow "${String(res.headers.allow)}", documented ${documented.join(', ')}`)
    }
  }
  const unknown = { method: 'GET' as const, url: '/no/such/path' }
  checkResponse('GET /no/such/path', asError(404), await gw.app.inject(unknown), unknown)

  const elapsed = Date.now() - started
  console.log(
    `contract: seed ${SEED}, ${operations.length} operations, ${validSent} valid, ${invalidSent} invalid and ${boundarySent} boundary requests in ${elapsed} ms; statuses seen:\n` +
      [...seen].map(([op, statuses]) => `  ${op}: ${[...statuses].sort().join(' ')}`).join('\n'),
  )
  expect(failures.slice(0, 25).join('\n'), `${failures.length} failures (seed ${SEED})`).toBe('')
  // Generated ids reach real rows: most operations succeeded at least once (the others need a 2-tap
  // registration, a mined token, a signed request or a chip's real tap, which random data does not make).
  // Every pattern's boundaries were sent: path, query and body (tokenId, chainId, recipient, UIDs, addresses…).
  expect(boundarySent).toBeGreaterThan(200)
  const succeeded = [...seen].filter(([, statuses]) => [...statuses].some((s) => s < 300)).length
  expect(succeeded).toBeGreaterThanOrEqual(18)
})
