import type { InjectOptions } from 'fastify'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { ALICE, type BackendGateway, BOB, call, CONTRACT, createBackendGateway, GUESTBOOK, metadata, queryRows, seedTeam, tableNames, tapChip } from '../helpers/gateway.js'

/**
 * The cross-team matrix: team B's API key against every one of team A's
 * resources, on every API-key endpoint. Each call must find nothing (404, or
 * only B's own rows in a listing) and change nothing: the whole database and
 * A's view through its own key are compared before and after.
 */

let gw: BackendGateway
afterEach(async () => gw?.close())

const B_GUESTBOOK = '0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0'
const A_UID = { token: '04E10000000001', proof: '04E10000000002', guestbook: '04E10000000003' }
const B_UID = '04F10000000001'
const A_TOKEN = { contractAddress: CONTRACT, chainId: 31337, tokenId: '7' }

type Ctx = {
  a: { apiKey: string; contractId: number; eventId: number; claimOtp: string; guestbookOtp: string; proofOtp: string; linksRef: string }
  b: { apiKey: string; contractId: number; eventId: number }
}
let ctx: Ctx

beforeEach(async () => {
  gw = await createBackendGateway()
  const a = await seedTeam(gw, {
    name: 'A',
    chipGroups: [{ name: 'A group' }],
    chips: Object.values(A_UID).map((uid) => ({ uid, group: 'A group' })),
    tokens: [{ ...A_TOKEN, chips: [A_UID.token], metadata: metadata({ name: 'A token' }), twoTapClaim: true }],
    proofEvents: [{ proofEventId: 701, name: 'A proof', status: 'active', chips: [A_UID.proof] }],
    guestbookContracts: [
      {
        name: 'A book',
        symbol: 'AB',
        chainId: 31337,
        address: GUESTBOOK,
        events: [{ name: 'A event', tokenId: '1', metadata: metadata({ name: 'A event metadata' }), chips: [A_UID.guestbook] }],
      },
    ],
  })
  const b = await seedTeam(gw, {
    name: 'B',
    chips: [{ uid: B_UID }],
    guestbookContracts: [
      {
        name: 'B book',
        symbol: 'BB',
        chainId: 31337,
        address: B_GUESTBOOK,
        events: [{ name: 'B event', tokenId: '1', metadata: metadata({ name: 'B event metadata' }), chips: [] }],
      },
    ],
  })

  const aContract = (await gw.store.guestbook.listContracts(a.teamId))[0]!
  const aEvent = (await gw.store.guestbook.listEvents(a.teamId))[0]!
  const bContract = (await gw.store.guestbook.listContracts(b.teamId))[0]!
  const bEvent = (await gw.store.guestbook.listEvents(b.teamId))[0]!

  // A's live OTPs, one of each kind, and an open claim registration on A's token.
  const q = async (uid: string) => (await call(gw, { url: `/refs/${await tapChip(gw, uid)}` })).body
  const claimOtp: string = (await q(A_UID.token)).linkedToken.otp
  const proofOtp: string = (await q(A_UID.proof)).proofEvents[0].otp
  const guestbookOtp: string = (await q(A_UID.guestbook)).guestbookEvents[0].otp
  const registration = await call(gw, {
    method: 'POST',
    url: '/phygitals/claim-registration',
    headers: { 'x-service-api-key': a.apiKey },
    payload: { ...A_TOKEN, recipient: ALICE },
  })
  expect(registration.status).toBe(200)

  ctx = {
    a: {
      apiKey: a.apiKey,
      contractId: aContract.id,
      eventId: aEvent.id,
      claimOtp,
      proofOtp,
      guestbookOtp,
      linksRef: await tapChip(gw, A_UID.token, { linksModule: true }),
    },
    b: { apiKey: b.apiKey, contractId: bContract.id, eventId: bEvent.id },
  }
})

/** Every row of every table, in a stable order. */
async function dumpDatabase(): Promise<Record<string, unknown[]>> {
  const tables = await tableNames(gw.store)
  return Object.fromEntries(await Promise.all(tables.map(async (name) => [name, await queryRows(gw.store, `SELECT * FROM "${name}" ORDER BY 1, 2`)])))
}

/** Team A's resources as A sees them through the API. */
async function viewOfA() {
  const key = { 'x-service-api-key': ctx.a.apiKey }
  const get = async (url: string, headers: Record<string, string> = key) => {
    const res = await call(gw, { url, headers })
    return { status: res.status, body: res.body as unknown }
  }
  return {
    chip: await get(`/phygitals/chip?contractAddress=${CONTRACT}&chainId=31337&tokenId=7`),
    groups: await get('/chip-groups'),
    contracts: await get('/events/contracts'),
    events: await get('/events'),
    eventsOfContract: await get(`/events?contractId=${ctx.a.contractId}`),
    otps: await Promise.all([ctx.a.claimOtp, ctx.a.proofOtp, ctx.a.guestbookOtp].map((code) => get(`/otps/${code}`, {}))),
    registration: await get(`/phygitals/claim-registration?contractAddress=${CONTRACT}&chainId=31337&tokenId=7&recipient=${ALICE}`, {}),
  }
}

type Row = {
  name: string
  request: (c: Ctx) => InjectOptions
  error: string
  /** The same (or the nearest legitimate) request by a key that may make it, to prove B's 404 is team scoping. */
  control: { as: 'a' | 'b'; request?: (c: Ctx) => InjectOptions; status: number }
}

const eventMetadata = JSON.stringify(metadata({ name: 'Changed by B' }))

const rows: Row[] = [
  {
    name: "GET /phygitals/chip for A's token",
    request: () => ({ url: `/phygitals/chip?contractAddress=${CONTRACT}&chainId=31337&tokenId=7` }),
    error: 'token_not_found',
    control: { as: 'a', status: 200 },
  },
  {
    name: "POST /phygitals/claim-registration on A's token",
    request: () => ({ method: 'POST', url: '/phygitals/claim-registration', payload: { ...A_TOKEN, recipient: BOB } }),
    error: 'token_not_found',
    // A's token already has an open registration: A is told so, B is not.
    control: { as: 'a', status: 409 },
  },
  {
    name: "DELETE /phygitals/claim-registration of A's recipient",
    request: () => ({ method: 'DELETE', url: '/phygitals/claim-registration', payload: { ...A_TOKEN, recipient: ALICE } }),
    error: 'token_not_found',
    control: { as: 'a', status: 200 },
  },
  {
    name: "PATCH /phygitals/metadata of A's token",
    request: () => ({
      method: 'PATCH',
      url: '/phygitals/metadata',
      payload: { ...A_TOKEN, metadata: JSON.stringify(metadata({ name: 'Hijacked' })) },
    }),
    error: 'token_not_found',
    control: { as: 'a', status: 200 },
  },
  {
    name: "DELETE /otps/:id of A's PHYGITAL_CLAIM OTP",
    request: (c) => ({ method: 'DELETE', url: `/otps/${c.a.claimOtp}` }),
    error: 'otp_not_found',
    control: { as: 'a', status: 200 },
  },
  {
    name: "DELETE /otps/:id of A's PROOF_EVENT OTP",
    request: (c) => ({ method: 'DELETE', url: `/otps/${c.a.proofOtp}` }),
    error: 'otp_not_found',
    control: { as: 'a', status: 200 },
  },
  {
    name: "DELETE /otps/:id of A's GUESTBOOK_EVENT OTP",
    request: (c) => ({ method: 'DELETE', url: `/otps/${c.a.guestbookOtp}` }),
    error: 'otp_not_found',
    control: { as: 'a', status: 200 },
  },
  {
    name: "POST /events in A's contract (numeric contractId)",
    request: (c) => ({
      method: 'POST',
      url: '/events',
      payload: { name: 'B sneaks in', tokenId: '99', contractId: c.a.contractId, metadata: eventMetadata },
    }),
    error: 'contract_not_found',
    control: { as: 'a', status: 200 },
  },
  {
    name: "POST /events in A's contract (string contractId)",
    request: (c) => ({
      method: 'POST',
      url: '/events',
      payload: { name: 'B sneaks in', tokenId: '99', contractId: String(c.a.contractId), metadata: eventMetadata },
    }),
    error: 'contract_not_found',
    control: { as: 'a', status: 200 },
  },
  {
    name: "POST /events reusing A's event token id in A's contract",
    request: (c) => ({
      method: 'POST',
      url: '/events',
      payload: { name: 'B sneaks in', tokenId: '1', contractId: c.a.contractId, metadata: eventMetadata },
    }),
    // A would get 409 event_exists; B must not learn the event exists.
    error: 'contract_not_found',
    control: { as: 'a', status: 409 },
  },
  {
    name: "GET /events?contractId=<A's contract>",
    request: (c) => ({ url: `/events?contractId=${c.a.contractId}` }),
    error: 'contract_not_found',
    control: { as: 'a', status: 200 },
  },
  {
    name: "PATCH /events/metadata of A's event by eventId",
    request: (c) => ({ method: 'PATCH', url: '/events/metadata', payload: { eventId: c.a.eventId, metadata: eventMetadata } }),
    error: 'event_not_found',
    control: { as: 'a', status: 200 },
  },
  {
    name: "PATCH /events/metadata of A's event by token triple",
    request: () => ({
      method: 'PATCH',
      url: '/events/metadata',
      payload: { tokenId: '1', contractAddress: GUESTBOOK.toLowerCase(), chainId: 31337, metadata: eventMetadata },
    }),
    error: 'event_not_found',
    control: { as: 'a', status: 200 },
  },
  {
    name: "POST /events/assign/legacy of A's event to B's chip",
    request: (c) => ({ method: 'POST', url: '/events/assign/legacy', payload: { tagUIDs: [B_UID], guestbookEventId: c.a.eventId } }),
    error: 'event_not_found',
    control: { as: 'b', request: (c) => ({ method: 'POST', url: '/events/assign/legacy', payload: { tagUIDs: [B_UID], guestbookEventId: c.b.eventId } }), status: 200 },
  },
  {
    name: "POST /events/assign/legacy of B's own event to A's chip",
    request: (c) => ({ method: 'POST', url: '/events/assign/legacy', payload: { tagUIDs: [A_UID.token], guestbookEventId: c.b.eventId } }),
    error: 'chip_not_found',
    control: { as: 'b', request: (c) => ({ method: 'POST', url: '/events/assign/legacy', payload: { tagUIDs: [B_UID], guestbookEventId: c.b.eventId } }), status: 200 },
  },
  {
    name: "POST /events/assign/legacy of B's own event to B's chip and A's chip (all or nothing)",
    request: (c) => ({
      method: 'POST',
      url: '/events/assign/legacy',
      payload: { tagUIDs: [B_UID, A_UID.guestbook.toLowerCase()], guestbookEventId: c.b.eventId },
    }),
    error: 'chip_not_found',
    control: { as: 'b', request: (c) => ({ method: 'POST', url: '/events/assign/legacy', payload: { tagUIDs: [B_UID], guestbookEventId: c.b.eventId } }), status: 200 },
  },
]

const withKey = (options: InjectOptions, key: string): InjectOptions => ({
  ...options,
  headers: { ...(options.headers ?? {}), 'x-service-api-key': key },
})

describe("team B's key against team A's resources", () => {
  test.each(rows)('$name → 404 $error, nothing changed', async (row) => {
    const dbBefore = await dumpDatabase()
    const viewBefore = await viewOfA()

    const res = await call(gw, withKey(row.request(ctx), ctx.b.apiKey))
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ success: false, error: row.error, message: expect.any(String) })
    // The message must not hint that the resource exists for someone else.
    expect(res.body.message).not.toMatch(/another|belongs|owned|owner/i)

    expect(await dumpDatabase()).toEqual(dbBefore)
    expect(await viewOfA()).toEqual(viewBefore)

    // Control: the request itself is well-formed and meaningful for the owning side.
    const control = row.control.request?.(ctx) ?? row.request(ctx)
    const ok = await call(gw, withKey(control, row.control.as === 'a' ? ctx.a.apiKey : ctx.b.apiKey))
    expect(ok.status).toBe(row.control.status)
  })

  test("A's view really covers A's resources (sanity check of the comparison)", async () => {
    const view = await viewOfA()
    expect(view.chip).toEqual({ status: 200, body: { uid: A_UID.token, uids: [A_UID.token] } })
    expect(view.groups.body).toEqual([expect.objectContaining({ name: 'A group' })])
    expect(view.contracts.body).toEqual([expect.objectContaining({ id: ctx.a.contractId, name: 'A book' })])
    expect(view.events.body).toEqual([expect.objectContaining({ id: ctx.a.eventId, name: 'A event' })])
    expect(view.otps.map((o) => o.status)).toEqual([200, 200, 200])
    expect(view.registration.body).toMatchObject({ recipient: ALICE, isRequired: true, isValid: true })
    // The stored metadata B tried to change is A's.
    expect(JSON.parse((await gw.store.tokens.findByKey(A_TOKEN))!.metadata!)).toMatchObject({ name: 'A token' })
    expect(JSON.parse((await gw.store.guestbook.getEvent(ctx.a.eventId))!.metadata)).toMatchObject({ name: 'A event metadata' })
  })
})

describe("team B's listings show only B's own rows", () => {
  type Listing = { name: string; url: string; expected: (c: Ctx) => unknown[] }
  const listings: Listing[] = [
    { name: 'GET /chip-groups', url: '/chip-groups', expected: () => [] },
    {
      name: 'GET /events/contracts',
      url: '/events/contracts',
      expected: (c) => [
        { id: c.b.contractId, name: 'B book', symbol: 'BB', address: B_GUESTBOOK, chainId: 31337, status: 'confirmed', createdAt: expect.any(String) },
      ],
    },
    {
      name: 'GET /events',
      url: '/events',
      expected: (c) => [
        {
          id: c.b.eventId,
          name: 'B event',
          contract: { id: c.b.contractId, chainId: 31337, tokenId: '1', address: B_GUESTBOOK, contractAddress: B_GUESTBOOK },
          createdAt: expect.any(String),
        },
      ],
    },
  ]

  test.each(listings)('$name', async ({ url, expected }) => {
    const dbBefore = await dumpDatabase()
    const res = await call(gw, { url, headers: { 'x-service-api-key': ctx.b.apiKey } })
    expect(res.status).toBe(200)
    expect(res.body).toEqual(expected(ctx))
    expect(JSON.stringify(res.body)).not.toMatch(/A book|A event|A group/)
    expect(await dumpDatabase()).toEqual(dbBefore)

    // A's key sees A's rows on the same URL, so the emptiness above is scoping.
    const a = await call(gw, { url, headers: { 'x-service-api-key': ctx.a.apiKey } })
    expect(a.status).toBe(200)
    expect(a.body).toHaveLength(1)
    expect(JSON.stringify(a.body)).toMatch(/A book|A event|A group/)
  })
})

describe("team B's key on A's refs", () => {
  test("A's Links Module ref is not valid for B and stays unconsumed", async () => {
    const res = await call(gw, { url: `/refs/${ctx.a.linksRef}`, headers: { 'x-service-api-key': ctx.b.apiKey } })
    expect(res.status).toBe(200)
    expect(res.body.isValidRef).toBe(false)
    expect(res.body.linkedToken).toEqual({ contractAddress: CONTRACT, chainId: 31337, tokenId: '7' })
    expect((await gw.store.refs.get(ctx.a.linksRef))?.consumedAt).toBeNull()

    const owner = await call(gw, { url: `/refs/${ctx.a.linksRef}`, headers: { 'x-service-api-key': ctx.a.apiKey } })
    expect(owner.body.isValidRef).toBe(true)
  })
})
