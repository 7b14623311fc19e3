import fs from 'node:fs'
import type { InjectOptions } from 'fastify'
import { afterEach, describe, expect, test } from 'vitest'
import { demoFixturePath } from '../../src/bootstrapDemo.js'
import { mediaKey } from '../../src/media/mediaUrl.js'
import type { PostgresStore, SqliteStore } from '../../src/db/store.js'
import { type ChainGateway, contractOf, createBackendChainGateway, pullWithSignature, USER } from '../helpers/chainGateway.js'
import { type BackendGateway, call, CONTRACT, createBackendGateway, GUESTBOOK, metadata, queryRows, seedTeam, tapChip } from '../helpers/gateway.js'
import { type ConsoleRequest, consoleRequest, signInConsole } from './consoleClient.js'

// Issue 28, part 3 A (notes/console-contract-3.md): the console's products, their metadata, chip
// profiles and the chip import. Each route is the API's or the CLI's own function under the session's
// team: items.ts and readTokenOwner, updateTokenMetadata, `profile list`, `tapgate import`.

let gw: BackendGateway
let chainGw: ChainGateway<SqliteStore | PostgresStore> | undefined
afterEach(async () => {
  await gw?.close()
  await chainGw?.close()
  chainGw = undefined
})

const api = (method: InjectOptions['method'], url: string, opts: ConsoleRequest = {}) => consoleRequest(gw, method, url, opts)
const count = async (table: string) => Number((await queryRows<{ n: number }>(gw.store, `SELECT count(*) AS n FROM ${table}`))[0]!.n)

const HOODIE_CHIP = '04DE5F1EACC040'
const SPARE_CHIP = '04958CAA5C5E80'
const MIRROR_CHIP = '04144682BA7380'
const KEY = '00000000000000000000000000000000'
const TEMPLATE = 'https://tap.example/t?e={picc}&c={mac}'
const hoodieMetadata = metadata({ name: 'Hoodie', collection: 'Shop merch', description: 'Warm', image: 'https://example.com/hoodie.png', extra_field: 'kept' })

/** A shop: a profile with keys, chips (one an NTAG 21x), a registered contract with a hoodie (2-tap claim) and a cap. */
async function shop(name = 'Shop A', contract = CONTRACT) {
  const team = await seedTeam(gw, {
    name,
    chipGroups: [{ name: 'Merch' }],
    chipProfiles: [{ name: 'Factory keys', mode: 'aes', keyScheme: 'static', metaKey: KEY, fileKey: KEY, urlTemplate: TEMPLATE }],
    chips: name === 'Shop A' ? [{ uid: HOODIE_CHIP, group: 'Merch', profile: 'Factory keys' }, { uid: SPARE_CHIP }, { uid: MIRROR_CHIP, kind: 'ntag21x' }] : [],
    phygitalContracts: [{ name: `${name} merch`, symbol: 'SHP', chainId: 31337, address: contract }],
    tokens: [
      { chainId: 31337, contract: `${name} merch`, tokenId: '1', chips: name === 'Shop A' ? [HOODIE_CHIP] : [], metadata: hoodieMetadata, twoTapClaim: { delaySeconds: 60, windowSeconds: 600 } },
      { chainId: 31337, contract: `${name} merch`, tokenId: '2', metadata: metadata({ name: 'Cap', image: '' }) },
    ],
  })
  const [hoodie, cap] = await gw.store.tokens.listByTeam(team.teamId)
  return { ...team, hoodieId: hoodie!.id, capId: cap!.id, cookie: await signInConsole(gw, team.teamId) }
}

const csv = (cookie: string, text: string) => api('POST', '/console/api/chips/import', { cookie, body: text, contentType: 'text/csv' })
const json = (cookie: string, file: unknown) => api('POST', '/console/api/chips/import', { cookie, body: JSON.stringify(file), contentType: 'application/json' })

describe('products', () => {
  test('the list: the team\'s tokens oldest first with their chips, profile, last tap, /media image and stored metadata; the owner unknown while the chain cannot be asked', async () => {
    gw = await createBackendGateway()
    const s = await shop()
    const list = await api('GET', '/console/api/products', { cookie: s.cookie })
    expect(list.status, JSON.stringify(list.body)).toBe(200)
    const hoodie = {
      id: s.hoodieId,
      name: 'Hoodie',
      description: 'Warm',
      collection: 'Shop merch',
      imageUrl: `/media/${mediaKey('https://example.com/hoodie.png')}`,
      contract: { address: CONTRACT, chainId: 31337 },
      tokenId: '1',
      chips: [{ uid: HOODIE_CHIP, profile: 'Factory keys', lastTapAt: null }],
      // This gateway runs no embedded chain: the list still comes back.
      owner: { address: null, state: 'unknown' },
      metadata: hoodieMetadata,
    }
    expect(list.body).toEqual({
      success: true,
      products: [hoodie, expect.objectContaining({ id: s.capId, name: 'Cap', imageUrl: null, tokenId: '2', chips: [], owner: { address: null, state: 'unknown' } })],
    })
    // The image path is the kiosk's: GET /media/<key> knows the URL.
    expect(await gw.store.media.get(mediaKey('https://example.com/hoodie.png'))).toMatchObject({ url: 'https://example.com/hoodie.png' })
    // The same items as the hosted API's, by id.
    const item = (await call(gw, { url: `/items/${s.hoodieId}`, headers: { 'x-service-api-key': s.apiKey } })).body
    expect(item).toMatchObject({ id: s.hoodieId, name: 'Hoodie', description: 'Warm', tokenId: '1', contract: { chainId: 31337 } })

    // A tap of the chip: its last tap, as the Taps tab filtered by its UID shows it.
    await tapChip(gw, HOODIE_CHIP)
    const one = await api('GET', `/console/api/products/${s.hoodieId}`, { cookie: s.cookie })
    expect(one).toMatchObject({ status: 200, body: { success: true, product: { ...hoodie, chips: [{ uid: HOODIE_CHIP, profile: 'Factory keys', lastTapAt: new Date(gw.clock.now).toISOString() }] } } })
    const taps = await api('GET', `/console/api/taps?uid=${HOODIE_CHIP}&limit=1`, { cookie: s.cookie })
    expect(one.body.product.chips[0].lastTapAt).toBe(taps.body.taps[0].at)

    expect(await api('GET', '/console/api/products/999999', { cookie: s.cookie })).toMatchObject({ status: 404, body: { success: false, error: 'item_not_found' } })
    expect((await api('GET', '/console/api/products/abc', { cookie: s.cookie })).status).toBe(400)
    expect((await api('GET', '/console/api/products')).status).toBe(401)
  })

  test('owners on the chain: the demo hoodie after its mint to a wallet is owned by it, the unminted token not_minted', async () => {
    chainGw = await createBackendChainGateway()
    const demo = JSON.parse(fs.readFileSync(demoFixturePath, 'utf8')) as { teams: [{ name: string }] }
    const at = { ...chainGw, clock: { now: Date.now() } }
    const { teamId, apiKey } = await seedTeam(at, demo.teams[0])
    chainGw.relayer.wake(31337)
    await chainGw.settle()
    const contract = await contractOf(chainGw, teamId)
    await pullWithSignature(chainGw, { apiKey, contract, tokenId: '1', recipient: USER })
    const cookie = await signInConsole(at, teamId)
    const list = await consoleRequest(chainGw, 'GET', '/console/api/products', { cookie })
    expect(list.status, JSON.stringify(list.body)).toBe(200)
    expect(list.body.products.map((p: { name: string; tokenId: string; chips: { uid: string }[]; owner: unknown }) => [p.name, p.tokenId, p.chips.map((c) => c.uid), p.owner])).toEqual([
      ['Tapgate Hoodie #1', '1', [HOODIE_CHIP], { address: USER, state: 'owned' }],
      [expect.any(String), '2', expect.any(Array), { address: null, state: 'not_minted' }],
    ])
  }, 60_000)
})

describe('metadata', () => {
  test("PATCH: updateTokenMetadata's rules (extra fields kept); a bad image URL is 400 at metadata.image, as PATCH /phygitals/metadata answers, and nothing is stored", async () => {
    gw = await createBackendGateway()
    const s = await shop()
    const patch = (body: unknown) => api('PATCH', `/console/api/products/${s.hoodieId}/metadata`, { cookie: s.cookie, body })
    const stored = async () => JSON.parse((await gw.store.tokens.get(s.hoodieId))!.metadata!) as Record<string, unknown>

    const edited = { ...hoodieMetadata, name: 'Hoodie v2', collection: 'Winter', image: 'https://example.com/v2.png' }
    const saved = await patch({ metadata: edited })
    expect(saved.status, JSON.stringify(saved.body)).toBe(200)
    expect(saved.body.product).toMatchObject({ id: s.hoodieId, name: 'Hoodie v2', collection: 'Winter', imageUrl: `/media/${mediaKey('https://example.com/v2.png')}`, metadata: edited })
    expect(await stored()).toEqual(edited)
    expect((await api('GET', '/console/api/products', { cookie: s.cookie })).body.products[0].name).toBe('Hoodie v2')

    const bad = await patch({ metadata: { ...edited, name: 'Not saved', image: 'not a url' } })
    expect(bad).toMatchObject({ status: 400, body: { success: false, error: 'validation_failed', errors: { 'metadata.image': 'Must be a URL (or empty)' } } })
    // The API's own answer for the same metadata, as text.
    const viaApi = await call(gw, {
      method: 'PATCH',
      url: '/phygitals/metadata',
      headers: { 'x-service-api-key': s.apiKey },
      payload: { chainId: 31337, contractAddress: CONTRACT, tokenId: '1', metadata: JSON.stringify({ ...edited, image: 'not a url' }) },
    })
    expect(viaApi).toMatchObject({ status: 400, body: { error: 'validation_failed', errors: bad.body.errors } })
    expect(await patch({ metadata: { name: 'Only a name' } })).toMatchObject({ status: 400, body: { errors: { 'metadata.collection': 'Required', 'metadata.media_gallery': 'Required' } } })
    expect(await patch({ metadata: [] })).toMatchObject({ status: 400, body: { error: 'validation_failed', errors: { metadata: expect.any(String) } } })
    expect(await patch({ metadata: edited, name: 'x' })).toMatchObject({ status: 400, body: { error: 'validation_failed' } })
    // Too deep for metadata, and far too deep to stringify: 400, never a 500.
    for (const depth of [40, 100_000]) {
      const deep = `{"metadata":{"a":${'['.repeat(depth)}${']'.repeat(depth)}}}`
      const res = await api('PATCH', `/console/api/products/${s.hoodieId}/metadata`, { cookie: s.cookie, body: deep, contentType: 'application/json' })
      expect(res, `depth ${depth}`).toMatchObject({ status: 400, body: { error: 'validation_failed', errors: { metadata: expect.stringContaining('levels deep') } } })
    }
    // Larger than PATCH /phygitals/metadata's 64 KiB of text.
    expect(await patch({ metadata: { ...edited, description: 'x'.repeat(80_000) } })).toMatchObject({ status: 400, body: { errors: { metadata: expect.any(String) } } })
    expect(await stored()).toEqual(edited)

    // A change: no Origin, no change.
    expect(await api('PATCH', `/console/api/products/${s.hoodieId}/metadata`, { cookie: s.cookie, body: { metadata: hoodieMetadata }, origin: null })).toMatchObject({ status: 403, body: { error: 'console_cross_site' } })
    expect(await stored()).toEqual(edited)
  })
})

describe('chip profiles', () => {
  test("`profile list`'s view: name, scheme, mode, URL template and chip count, never a key", async () => {
    gw = await createBackendGateway()
    const s = await shop()
    const res = await api('GET', '/console/api/chip-profiles', { cookie: s.cookie })
    expect(res.body).toEqual({ success: true, profiles: [{ name: 'Factory keys', scheme: 'static', mode: 'aes', urlTemplate: TEMPLATE, chips: 1 }] })
    expect(JSON.stringify(res.body)).not.toContain(KEY)
  })
})

describe('chip import', () => {
  test('a CSV with bad rows is 400 at each line and column and imports nothing; fixed, it imports through tapgate import (group made, profile set, linked to its product)', async () => {
    gw = await createBackendGateway()
    const s = await shop()
    const before = { chips: await count('chips'), groups: await count('chip_groups'), links: await count('token_chips') }
    const nothingStored = async () => expect({ chips: await count('chips'), groups: await count('chip_groups'), links: await count('token_chips') }).toEqual(before)

    const bad = await csv(s.cookie, `UID,Profile,Group,Product\n04AA0000000001,Factory keys,Drop 2,${s.capId}\n04AA000000002,,,\n04AA0000000003,,,999999\n04aa:00:00:00:00:01,,,\n`)
    expect(bad).toMatchObject({ status: 400, body: { success: false, error: 'csv_rows_invalid' } })
    expect(bad.body.errors).toEqual({
      'line 3, uid': expect.stringMatching(/^A chip UID is 7 bytes/),
      'line 4, product': 'No product with id 999999 in this team',
      'line 5, uid': 'Chip 04AA0000000001 is on line 2 already',
    })
    expect(bad.body.message).toBe('3 problems in the chip list file; nothing was imported')
    await nothingStored()

    // The import's own errors, at the row they come from: a profile the team does not have.
    const unknownProfile = await csv(s.cookie, `uid,group,profile\n04AA0000000001,Drop 2,\n04AA0000000002,,Nope\n`)
    expect(unknownProfile).toMatchObject({ status: 400, body: { error: 'csv_rows_invalid', errors: { 'line 3, profile': 'No chip profile named "Nope" in this team' } } })
    await nothingStored()
    // An NTAG 21x cannot take a profile: the import's rule, at its line.
    expect((await csv(s.cookie, `uid,profile\n${MIRROR_CHIP},Factory keys\n`)).body.errors).toEqual({ 'line 2, profile': expect.stringContaining('NTAG 21x') })

    const good = await csv(s.cookie, `\uFEFFUID;Product;Profile;Group\n04AA0000000001;${s.capId};Factory keys;Drop 2\n04aa:00:00:00:00:02;;;\n${MIRROR_CHIP};;;Drop 2\n`)
    expect(good.status, JSON.stringify(good.body)).toBe(200)
    expect(good.body).toEqual({
      success: true,
      summary: { teams: [{ id: s.teamId, name: 'Shop A', created: false }], chipProfiles: 0, chips: 3, phygitalContracts: 0, deploys: 0, tokens: 1, proofEvents: 0, guestbookContracts: 0, guestbookEvents: 0 },
      chips: 3,
    })
    const cap = (await api('GET', `/console/api/products/${s.capId}`, { cookie: s.cookie })).body.product
    expect(cap.chips).toEqual([{ uid: '04AA0000000001', profile: 'Factory keys', lastTapAt: null }])
    const drop = (await gw.store.chipGroups.getByName(s.teamId, 'Drop 2'))!
    expect(await gw.store.chips.get('04AA0000000001')).toMatchObject({ teamId: s.teamId, groupId: drop.id, kind: 'ntag424' })
    expect(await gw.store.chips.get('04AA0000000002')).toMatchObject({ teamId: s.teamId, groupId: null, profileId: null })
    // What the list leaves out stays: the NTAG 21x's kind, the cap's metadata and the hoodie's 2-tap claim.
    expect(await gw.store.chips.get(MIRROR_CHIP)).toMatchObject({ kind: 'ntag21x', groupId: drop.id })
    expect(cap.name).toBe('Cap')
    await csv(s.cookie, `uid,product\n${SPARE_CHIP},${s.hoodieId}\n`)
    expect(await gw.store.tokens.get(s.hoodieId)).toMatchObject({ twoTapClaim: 1, claimDelaySeconds: 60, claimWindowSeconds: 600 })
    // Linked at the same clock time: listed in UID order.
    expect(await gw.store.tokens.chipUids(s.hoodieId)).toEqual([SPARE_CHIP, HOODIE_CHIP])
  })

  test("a chip list's header, an empty file, a chip of another team, the wrong type and a file over 1 MiB: each refused, nothing imported", async () => {
    gw = await createBackendGateway()
    const s = await shop()
    const other = await seedTeam(gw, { name: 'Other', chips: [{ uid: '04BB0000000001' }] })
    const chips = await count('chips')

    expect(await csv(s.cookie, 'uid,colour\n04AA0000000001,red\n')).toMatchObject({ status: 400, body: { error: 'csv_rows_invalid', errors: { 'line 1, colour': expect.stringContaining('Unknown column "colour"') } } })
    expect(await csv(s.cookie, 'profile\nFactory keys\n')).toMatchObject({ status: 400, body: { errors: { 'line 1, uid': expect.stringContaining('no uid column') } } })
    expect(await csv(s.cookie, 'uid,UID\n04AA0000000001,04AA0000000001\n')).toMatchObject({ status: 400, body: { errors: { 'line 1, UID': 'Column "uid" is given twice' } } })
    expect(await csv(s.cookie, 'uid\n')).toMatchObject({ status: 400, body: { error: 'csv_no_rows' } })
    expect(await csv(s.cookie, '\n  \n')).toMatchObject({ status: 400, body: { error: 'csv_unreadable' } })
    expect(await csv(s.cookie, 'uid,group\n04AA0000000001\n')).toMatchObject({ status: 400, body: { error: 'csv_unreadable', errors: { 'line 2': expect.any(String) } } })
    // Another team's chip is the import's own error, never a move.
    expect(await csv(s.cookie, 'uid\n04AA0000000001\n04BB0000000001\n')).toMatchObject({ status: 400, body: { errors: { 'line 3, uid': 'Chip 04BB0000000001 belongs to another team' } } })
    expect(await gw.store.chips.get('04BB0000000001')).toMatchObject({ teamId: other.teamId })

    expect(await api('POST', '/console/api/chips/import', { cookie: s.cookie, body: 'uid\n04AA0000000001\n', contentType: 'text/plain' })).toMatchObject({ status: 415, body: { error: 'unsupported_media_type' } })
    expect(await api('POST', '/console/api/chips/import', { cookie: s.cookie, body: 'PK', contentType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' })).toMatchObject({ status: 415, body: { error: 'unsupported_media_type' } })
    const big = `uid\n${'04AA0000000001\n'.repeat(80_000)}`
    expect(await csv(s.cookie, big)).toMatchObject({ status: 413, body: { success: false, error: 'body_too_large' } })
    expect(await api('POST', '/console/api/chips/import', { cookie: s.cookie, body: JSON.stringify({ teams: [{ name: 'Shop A', pad: 'x'.repeat(1024 * 1024) }] }), contentType: 'application/json' })).toMatchObject({ status: 413, body: { error: 'body_too_large' } })
    // A change: no Origin (or another site's), no import.
    expect(await api('POST', '/console/api/chips/import', { cookie: s.cookie, body: 'uid\n04AA0000000001\n', contentType: 'text/csv', origin: null })).toMatchObject({ status: 403, body: { error: 'console_cross_site' } })
    expect((await api('POST', '/console/api/chips/import', { cookie: s.cookie, body: 'uid\n04AA0000000001\n', contentType: 'text/csv', origin: 'https://evil.example' })).status).toBe(403)
    expect(await count('chips')).toBe(chips)
    // The guest list upload beside it still streams its own text/csv.
    expect((await api('POST', '/console/api/events/999999/guests', { cookie: s.cookie, body: 'Name\nJane\n', contentType: 'text/csv' })).body.error).toBe('event_not_found')
  })

  test("a `tapgate import` file for this team imports (its paths in errors); one for another team's name is 400 at teams.N.name and imports nothing", async () => {
    gw = await createBackendGateway()
    const s = await shop()
    const teams = await count('teams')
    const foreign = await json(s.cookie, { teams: [{ name: 'Other team', chips: [{ uid: '04AA0000000009' }] }] })
    expect(foreign).toMatchObject({
      status: 400,
      body: { success: false, error: 'validation_failed', errors: { 'teams.0.name': 'This console is signed in to team "Shop A"; the file is for "Other team"' } },
    })
    const mixed = await json(s.cookie, { teams: [{ name: 'Shop A', chips: [{ uid: '04AA0000000009' }] }, { name: 'Other team' }] })
    expect(mixed.body.errors).toEqual({ 'teams.1.name': expect.stringContaining('"Other team"') })
    expect(await count('teams')).toBe(teams)
    expect(await gw.store.chips.get('04AA0000000009')).toBeUndefined()

    expect(await json(s.cookie, { teams: [{ name: 'Shop A', chips: [{ uid: 'nope' }] }] })).toMatchObject({ status: 400, body: { errors: { 'teams.0.chips.0.uid': expect.stringMatching(/^A chip UID/) } } })
    const file = {
      teams: [{
        name: 'Shop A',
        chipGroups: [{ name: 'Badges' }],
        chips: [{ uid: '04AA0000000009', group: 'Badges', profile: 'Factory keys' }],
        guestbookContracts: [{ name: 'Shop A guests', symbol: 'SAG', chainId: 31337, address: GUESTBOOK, events: [{ name: 'Launch', tokenId: '1', metadata: metadata(), chips: ['04AA0000000009'] }] }],
      }],
    }
    const ok = await json(s.cookie, file)
    expect(ok).toMatchObject({ status: 200, body: { success: true, summary: { teams: [{ id: s.teamId, name: 'Shop A', created: false }], chips: 1, guestbookContracts: 1, guestbookEvents: 1 }, chips: 1 } })
    expect(await gw.store.chips.get('04AA0000000009')).toMatchObject({ teamId: s.teamId })
    expect((await api('GET', '/console/api/chip-profiles', { cookie: s.cookie })).body.profiles[0].chips).toBe(2)
  })
})

describe("one team's session and another team's products", () => {
  test("team B's session gets 404 or an empty list on every route, and A's products, chips and profiles stay as they were", async () => {
    gw = await createBackendGateway()
    const a = await shop()
    const bTeam = await seedTeam(gw, { name: 'Shop B' })
    const b = { ...bTeam, cookie: await signInConsole(gw, bTeam.teamId) }
    const aBefore = (await api('GET', '/console/api/products', { cookie: a.cookie })).body
    const metadataBefore = (await gw.store.tokens.get(a.hoodieId))!.metadata

    expect((await api('GET', '/console/api/products', { cookie: b.cookie })).body).toEqual({ success: true, products: [] })
    expect((await api('GET', '/console/api/chip-profiles', { cookie: b.cookie })).body).toEqual({ success: true, profiles: [] })
    for (const [method, url, body] of [
      ['GET', `/console/api/products/${a.hoodieId}`, undefined],
      ['PATCH', `/console/api/products/${a.hoodieId}/metadata`, { metadata: { ...hoodieMetadata, name: 'Taken' } }],
      // A bad body is 404 too: the product is looked up before the metadata is checked.
      ['PATCH', `/console/api/products/${a.hoodieId}/metadata`, { metadata: { ...hoodieMetadata, image: 'not a url' } }],
    ] as const) {
      expect(await api(method, url, { cookie: b.cookie, body }), `${method} ${url}`).toMatchObject({ status: 404, body: { success: false, error: 'item_not_found' } })
    }
    // A's product in B's chip list is no product of B's: the same words as an id nobody has.
    const linked = await csv(b.cookie, `uid,product\n04CC0000000001,${a.hoodieId}\n04CC0000000002,999999\n`)
    expect(linked).toMatchObject({ status: 400, body: { errors: { 'line 2, product': `No product with id ${a.hoodieId} in this team`, 'line 3, product': 'No product with id 999999 in this team' } } })
    // A's chip in B's list, or A's team in B's import file: refused, nothing moved.
    expect((await csv(b.cookie, `uid\n${HOODIE_CHIP}\n`)).body.errors).toEqual({ 'line 2, uid': `Chip ${HOODIE_CHIP} belongs to another team` })
    expect((await json(b.cookie, { teams: [{ name: 'Shop A', chips: [{ uid: '04CC0000000003' }] }] })).body.errors).toEqual({ 'teams.0.name': expect.stringContaining('"Shop B"') })

    expect((await api('GET', '/console/api/products', { cookie: a.cookie })).body).toEqual(aBefore)
    expect((await gw.store.tokens.get(a.hoodieId))!.metadata).toBe(metadataBefore)
    expect(await gw.store.chips.get(HOODIE_CHIP)).toMatchObject({ teamId: a.teamId })
    expect(await gw.store.chips.listByTeam(b.teamId)).toEqual([])
  })
})
