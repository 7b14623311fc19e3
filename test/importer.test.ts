import fs from 'node:fs'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { ConfigSchema } from '../src/config.js'
import type { PostgresStore, SqliteStore } from '../src/db/store.js'
import { ValidationError } from '../src/errors.js'
import { importData, parseImportFile, type ImportSummary } from '../src/importer/importData.js'
import { SealedKeyError } from '../src/keys/errors.js'
import { openKey } from '../src/keys/sealKey.js'
import { generateSunMessage } from '../src/sun/index.js'
import { chipKeyContext, profileKeyContext } from '../src/keys/keyContexts.js'
import { createKeyring } from '../src/taps/createKeyring.js'
import { verifyTap } from '../src/taps/verifyTap.js'
import { CONTRACT, GUESTBOOK, makeTempDir, metadata, openBackendStore, queryRows, tableNames } from './helpers/gateway.js'
import { rejected, thrown as thrownError } from './helpers/thrown.js'

const SECRET = Buffer.alloc(32, 7)

// Claim settings that differ from the schema defaults, so a token that takes them is visible.
const config = ConfigSchema.parse({ logLevel: 'silent', claim: { delaySeconds: 15, windowSeconds: 7200 } })

let dataDir: string
let store: SqliteStore | PostgresStore
beforeEach(async () => {
  dataDir = makeTempDir('tapgate-import-')
  store = await openBackendStore(dataDir)
})
afterEach(async () => {
  await store.close()
  fs.rmSync(dataDir, { recursive: true, force: true })
})

const run = (doc: unknown, now = 1_000): Promise<ImportSummary> => importData(store, parseImportFile(doc), { config, now, secret: SECRET })

const thrown = (fn: () => unknown) => thrownError(fn, ValidationError)
const rejects = (promise: Promise<unknown>) => rejected(promise, ValidationError)

/** Row counts of every table, to show that nothing was written or duplicated. */
async function countRows(): Promise<Record<string, number>> {
  const tables = await tableNames(store)
  return Object.fromEntries(await Promise.all(tables.map(async (t) => [t, (await queryRows<{ n: number }>(store, `SELECT COUNT(*) AS n FROM "${t}"`))[0]!.n])))
}

const guestbookMetadata = (overrides: Record<string, unknown> = {}) => ({
  name: 'Checked in',
  collection: 'Acme Guestbook',
  description: 'You were there',
  image: 'https://example.com/checkin.png',
  attributes: [{ trait_type: 'Day', value: 1 }],
  service_metadata_version: 1,
  ...overrides,
})

type Row = Record<string, unknown>
type TeamDoc = Row & { chips: Row[]; tokens: Row[]; proofEvents: Row[]; guestbookContracts: (Row & { events: Row[] })[] }

/** A team that uses every section of the format. */
const fullTeam = (): TeamDoc => ({
  name: 'Acme',
  redirectUrl: 'https://acme.example/tap',
  chipGroups: [{ name: 'Listed group' }],
  chips: [
    { uid: '04:aa:bb:cc:dd:ee:01', kind: 'ntag424', group: 'Listed group' },
    { uid: '04aabbccddee02', kind: 'ntag21x', group: 'Auto group', redirectUrl: 'https://acme.example/chip-2' },
    { uid: '04AABBCCDDEE03' },
    { uid: '04AABBCCDDEE04' },
    { uid: '04AABBCCDDEE05' },
  ],
  tokens: [
    {
      chainId: 31337,
      contractAddress: CONTRACT.toLowerCase(),
      tokenId: '1',
      chips: ['04aabbccddee01'],
      metadata: metadata({ name: 'Hoodie', extra_field: 'kept' }),
    },
    { chainId: '31337', contractAddress: CONTRACT, tokenId: 2, twoTapClaim: true },
    { chainId: 31337, contractAddress: CONTRACT, tokenId: '003', twoTapClaim: { delaySeconds: 60 } },
    { chainId: 1, contractAddress: CONTRACT, tokenId: '1', twoTapClaim: { windowSeconds: 600 }, chips: ['04:AA:BB:CC:DD:EE:02'] },
  ],
  proofEvents: [
    { proofEventId: 180001, name: 'Launch', status: 'future', chips: ['04AABBCCDDEE03'] },
    { proofEventId: '170042', chips: ['04AABBCCDDEE03', '04aabbccddee04'] },
  ],
  guestbookContracts: [
    {
      name: 'Book',
      symbol: 'BK',
      chainId: 31337,
      address: GUESTBOOK.toLowerCase(),
      events: [{ name: 'Check-in', tokenId: '1', metadata: guestbookMetadata(), chips: ['04AABBCCDDEE04', '04AABBCCDDEE05'] }],
    },
    { name: 'Draft', symbol: 'DR', chainId: 31337, events: [{ name: 'Later', tokenId: 7, metadata: guestbookMetadata({ name: 'Later' }) }] },
  ],
})

const tokenKey = (tokenId: string, chainId = 31337) => ({ chainId, contractAddress: CONTRACT, tokenId })

describe('importData', () => {
  test('every section lands in the store', async () => {
    const summary = await run({ teams: [fullTeam()] })
    const teamId = summary.teams[0]!.id
    expect(summary).toEqual({
      teams: [{ id: teamId, name: 'Acme', created: true }],
      chipProfiles: 0,
      chips: 5,
      phygitalContracts: 0,
      // The "Draft" guestbook has no address: its deploy is queued for the relayer.
      deploys: 1,
      tokens: 4,
      proofEvents: 2,
      guestbookContracts: 2,
      guestbookEvents: 2,
    })
    expect(await store.teams.get(teamId)).toEqual({ id: teamId, name: 'Acme', redirectUrl: 'https://acme.example/tap', createdAt: 1_000 })

    // Chip groups: the listed one, and the one a chip named without listing it.
    const groups = await store.chipGroups.listByTeam(teamId)
    expect(groups.map((g) => g.name)).toEqual(['Listed group', 'Auto group'])
    const [listed, auto] = groups as [(typeof groups)[0], (typeof groups)[0]]

    // Chips: UIDs normalised, kind defaults to ntag424.
    expect((await store.chips.listByTeam(teamId)).map((c) => c.uid)).toEqual([
      '04AABBCCDDEE01',
      '04AABBCCDDEE02',
      '04AABBCCDDEE03',
      '04AABBCCDDEE04',
      '04AABBCCDDEE05',
    ])
    expect(await store.chips.get('04AABBCCDDEE01')).toEqual({
      uid: '04AABBCCDDEE01',
      teamId,
      groupId: listed.id,
      kind: 'ntag424',
      lastCounter: null,
      redirectUrl: null,
      createdAt: 1_000,
      profileId: null,
      randomUid: 0,
      fileKey: null,
      keyVersion: 1,
      counterMirror: null,
      wallet: null,
    })
    expect(await store.chips.get('04AABBCCDDEE02')).toMatchObject({ groupId: auto.id, kind: 'ntag21x', redirectUrl: 'https://acme.example/chip-2' })
    expect(await store.chips.get('04AABBCCDDEE03')).toMatchObject({ groupId: null, kind: 'ntag424' })

    // Tokens: address checksummed, token id canonical, metadata kept whole, two-tap variants.
    const hoodie = (await store.tokens.findByKey(tokenKey('1')))!
    expect(hoodie).toMatchObject({ teamId, contractAddress: CONTRACT, twoTapClaim: 0, claimDelaySeconds: 15, claimWindowSeconds: 7200 })
    expect(JSON.parse(hoodie.metadata!)).toEqual(metadata({ name: 'Hoodie', extra_field: 'kept' }))
    expect(await store.tokens.chipUids(hoodie.id)).toEqual(['04AABBCCDDEE01'])
    expect(await store.tokens.findByKey(tokenKey('2'))).toMatchObject({ metadata: null, twoTapClaim: 1, claimDelaySeconds: 15, claimWindowSeconds: 7200 })
    expect(await store.tokens.findByKey(tokenKey('3'))).toMatchObject({ tokenId: '3', twoTapClaim: 1, claimDelaySeconds: 60, claimWindowSeconds: 7200 })
    const otherChain = (await store.tokens.findByKey(tokenKey('1', 1)))!
    expect(otherChain).toMatchObject({ twoTapClaim: 1, claimDelaySeconds: 15, claimWindowSeconds: 600 })
    expect((await store.tokens.findByChip('04AABBCCDDEE02'))?.id).toBe(otherChain.id)
    expect(await store.tokens.findByChip('04AABBCCDDEE03')).toBeUndefined()

    // Proof events: name and status default to '' and active.
    expect((await store.proofEvents.listByChip('04AABBCCDDEE03')).map(({ proofEventId, name, status, teamId: t }) => ({ proofEventId, name, status, t }))).toEqual([
      { proofEventId: 180001, name: 'Launch', status: 'future', t: teamId },
      { proofEventId: 170042, name: '', status: 'active', t: teamId },
    ])
    expect((await store.proofEvents.listByChip('04AABBCCDDEE04')).map((e) => e.proofEventId)).toEqual([170042])

    // Guestbook: a contract with an address is confirmed, one without is pending.
    expect(await store.guestbook.listContracts(teamId)).toEqual([
      expect.objectContaining({ name: 'Book', symbol: 'BK', chainId: 31337, address: GUESTBOOK, status: 'confirmed', paused: 0 }),
      expect.objectContaining({ name: 'Draft', symbol: 'DR', chainId: 31337, address: null, status: 'pending' }),
    ])
    const events = await store.guestbook.listEvents(teamId)
    expect(events).toEqual([
      expect.objectContaining({ name: 'Check-in', tokenId: '1', chainId: 31337, contractAddress: GUESTBOOK }),
      expect.objectContaining({ name: 'Later', tokenId: '7', chainId: 31337, contractAddress: null }),
    ])
    expect(JSON.parse(events[0]!.metadata)).toEqual(guestbookMetadata())
    expect((await store.guestbook.listEventsByChip('04AABBCCDDEE05')).map((e) => e.name)).toEqual(['Check-in'])
    expect((await store.guestbook.listEventsByChip('04AABBCCDDEE04')).map((e) => e.name)).toEqual(['Check-in'])
    expect(await store.guestbook.listEventsByChip('04AABBCCDDEE01')).toEqual([])
  })

  test('re-importing an edited file updates rows in place', async () => {
    const first = await run({ teams: [fullTeam()] }, 1_000)
    const teamId = first.teams[0]!.id
    const counts = await countRows()
    const hoodieId = (await store.tokens.findByKey(tokenKey('1')))!.id
    const launchId = (await store.proofEvents.listByChip('04AABBCCDDEE03'))[0]!.id

    const edited = fullTeam()
    edited.tokens[0]!.metadata = metadata({ name: 'Hoodie, second edition' })
    edited.tokens[1]!.twoTapClaim = false
    edited.proofEvents[0]!.name = 'Launch (over)'
    edited.proofEvents[0]!.status = 'expired'
    edited.guestbookContracts[0]!.events[0]!.name = 'Booth check-in'
    delete edited.chips[1]!.redirectUrl
    const second = await run({ teams: [edited] }, 2_000)

    // The pending "Draft" guestbook is found by name: no second deploy.
    expect(second).toEqual({ ...first, deploys: 0, teams: [{ id: teamId, name: 'Acme', created: false }] })
    expect(await countRows()).toEqual(counts)

    const hoodie = (await store.tokens.findByKey(tokenKey('1')))!
    expect(hoodie).toMatchObject({ id: hoodieId, createdAt: 1_000, updatedAt: 2_000 })
    expect(JSON.parse(hoodie.metadata!)).toEqual(metadata({ name: 'Hoodie, second edition' }))
    expect(await store.tokens.findByKey(tokenKey('2'))).toMatchObject({ twoTapClaim: 0 })
    expect(await store.proofEvents.get(launchId)).toMatchObject({ proofEventId: 180001, name: 'Launch (over)', status: 'expired', createdAt: 1_000 })
    expect((await store.guestbook.listEvents(teamId)).map((e) => e.name)).toEqual(['Booth check-in', 'Later'])
    // A chip's redirect URL left out of the file is kept.
    expect((await store.chips.get('04AABBCCDDEE02'))?.redirectUrl).toBe('https://acme.example/chip-2')

    // A token re-imported without metadata keeps what it had.
    const bare = fullTeam()
    delete bare.tokens[0]!.metadata
    await run({ teams: [bare] }, 3_000)
    expect(JSON.parse((await store.tokens.findByKey(tokenKey('1')))!.metadata!)).toEqual(metadata({ name: 'Hoodie, second edition' }))
    expect(await countRows()).toEqual(counts)
  })

  test('a re-import that omits a chip group or redirect keeps the stored one', async () => {
    await run({ teams: [{ name: 'Acme', chips: [{ uid: '04AABBCCDDEE01', group: 'Door', redirectUrl: 'https://acme.example/a' }] }] })
    await run({ teams: [{ name: 'Acme', chips: [{ uid: '04AABBCCDDEE01', kind: 'ntag21x' }] }] })
    const chip = (await store.chips.get('04AABBCCDDEE01'))!
    expect(chip.kind).toBe('ntag21x')
    expect(chip.redirectUrl).toBe('https://acme.example/a')
    expect(chip.groupId).toBe((await store.chipGroups.getByName(chip.teamId, 'Door'))!.id)
    await run({ teams: [{ name: 'Acme', chips: [{ uid: '04AABBCCDDEE01', redirectUrl: null }] }] })
    expect((await store.chips.get('04AABBCCDDEE01'))!.redirectUrl).toBeNull()
  })

  test("a re-import that omits a chip's kind or a token's 2-tap claim keeps the stored one; new rows get ntag424 and no 2-tap claim", async () => {
    const twoTap = { delaySeconds: 60, windowSeconds: 600 }
    await run({ teams: [{ name: 'Acme', chips: [{ uid: '04AABBCCDDEE01', kind: 'ntag21x' }, { uid: '04AABBCCDDEE02' }], tokens: [{ chainId: 31337, contractAddress: CONTRACT, tokenId: '1', twoTapClaim: twoTap }, { chainId: 31337, contractAddress: CONTRACT, tokenId: '2' }] }] })
    await run({ teams: [{ name: 'Acme', chips: [{ uid: '04AABBCCDDEE01', group: 'Door' }], tokens: [{ chainId: 31337, contractAddress: CONTRACT, tokenId: '1', chips: ['04AABBCCDDEE01'] }] }] })
    expect((await store.chips.get('04AABBCCDDEE01'))!.kind).toBe('ntag21x')
    expect((await store.chips.get('04AABBCCDDEE02'))!.kind).toBe('ntag424')
    expect(await store.tokens.findByKey(tokenKey('1'))).toMatchObject({ twoTapClaim: 1, claimDelaySeconds: 60, claimWindowSeconds: 600 })
    expect(await store.tokens.findByKey(tokenKey('2'))).toMatchObject({ twoTapClaim: 0 })
    // A stored NTAG 21x left without a kind may still declare its counter mirror.
    await run({ teams: [{ name: 'Acme', chips: [{ uid: '04AABBCCDDEE01', counterMirror: true }] }] })
    await run({ teams: [{ name: 'Acme', tokens: [{ chainId: 31337, contractAddress: CONTRACT, tokenId: '1', twoTapClaim: false }] }] })
    expect(await store.tokens.findByKey(tokenKey('1'))).toMatchObject({ twoTapClaim: 0 })
  })

  test('a pending contract re-imported with its address is confirmed, not duplicated', async () => {
    const contract = { name: 'Guestbook', symbol: 'GB', chainId: 31337 }
    const [team] = (await run({ teams: [{ name: 'Acme', guestbookContracts: [contract] }] })).teams
    const [pending] = await store.guestbook.listContracts(team!.id)
    expect(pending).toMatchObject({ status: 'pending', address: null })
    await run({ teams: [{ name: 'Acme', guestbookContracts: [{ ...contract, address: GUESTBOOK.toLowerCase() }] }] })
    const contracts = await store.guestbook.listContracts(team!.id)
    expect(contracts).toHaveLength(1)
    expect(contracts[0]).toMatchObject({ id: pending!.id, status: 'confirmed', address: GUESTBOOK })
    // A second contract of the same name at another address is a different contract.
    await run({ teams: [{ name: 'Acme', guestbookContracts: [{ ...contract, address: CONTRACT }] }] })
    expect(await store.guestbook.listContracts(team!.id)).toHaveLength(2)
  })

  test('chip UIDs are normalised wherever they appear', async () => {
    await run({
      teams: [
        {
          name: 'Acme',
          chips: [{ uid: '04:ab:cd:ef:01:23:45' }, { uid: '04ABCDEF012345' }],
          tokens: [{ chainId: 31337, contractAddress: CONTRACT, tokenId: '1', chips: ['04abcdef012345'] }],
          proofEvents: [{ proofEventId: 1, chips: ['04:AB:CD:EF:01:23:45'] }],
          // Issue 26: the hosted API's decimal form of the same 7 bytes.
          guestbookContracts: [{ name: 'GB', symbol: 'GB', chainId: 31337, address: GUESTBOOK, events: [{ name: 'Day', tokenId: '1', metadata: metadata(), chips: ['1314800873317189'] }] }],
        },
      ],
    })
    expect(await queryRows(store, 'SELECT uid FROM chips')).toEqual([{ uid: '04ABCDEF012345' }])
    expect(await queryRows(store, 'SELECT chip_uid AS uid FROM guestbook_event_chips')).toEqual([{ uid: '04ABCDEF012345' }])
    expect((await store.tokens.findByChip('04ABCDEF012345'))?.tokenId).toBe('1')
    expect(await store.proofEvents.listByChip('04ABCDEF012345')).toHaveLength(1)

    for (const uid of ['04:AB:CD', '04ABCDEF01234G', '04 AB CD EF 01 23 45', '004ABCDEF012345', '01314800873317189', '72057594037927936'])
      expect(thrown(() => parseImportFile({ teams: [{ name: 'A', chips: [{ uid }] }] })).errors, uid).toEqual({
        'teams.0.chips.0.uid': 'A chip UID is 7 bytes: 14 hex digits (optionally separated by ":") or its decimal form (15-17 digits, at most 2^56-1)',
      })
  })
})

describe('importData: what another team owns is an error, and nothing is written', () => {
  const A_CHIP = '04AAAAAAAAAA01'
  const B_CHIP = '04BBBBBBBBBB01'
  beforeEach(async () => {
    await run({
      teams: [
        {
          name: 'A',
          chips: [{ uid: A_CHIP }],
          tokens: [{ chainId: 31337, contractAddress: CONTRACT, tokenId: '1', chips: [A_CHIP] }],
          guestbookContracts: [{ name: 'A book', symbol: 'AB', chainId: 31337, address: GUESTBOOK }],
        },
      ],
    })
  })

  const teamB = (extra: Record<string, unknown>) => ({ name: 'B', chips: [{ uid: B_CHIP }], ...extra })
  const cases: { what: string; team: Record<string, unknown>; errors: Record<string, string> }[] = [
    {
      what: 'a token listing a chip of another team',
      team: teamB({ tokens: [{ chainId: 31337, contractAddress: CONTRACT, tokenId: '2', chips: [A_CHIP.toLowerCase()] }] }),
      errors: { 'teams.0.tokens.0.chips.0': `Chip ${A_CHIP} is not one of this team's chips; list it under teams.0.chips` },
    },
    {
      what: 'a token listing a chip that is not registered',
      team: teamB({ tokens: [{ chainId: 31337, contractAddress: CONTRACT, tokenId: '2', chips: [B_CHIP, '04CCCCCCCCCC01'] }] }),
      errors: { 'teams.0.tokens.0.chips.1': `Chip 04CCCCCCCCCC01 is not one of this team's chips; list it under teams.0.chips` },
    },
    {
      what: 'a token owned by another team',
      team: teamB({ tokens: [{ chainId: 31337, contractAddress: CONTRACT.toLowerCase(), tokenId: '01' }] }),
      errors: { 'teams.0.tokens.0': `Token 1 of ${CONTRACT} belongs to another team` },
    },
    {
      what: 'a chip owned by another team',
      team: { name: 'B', chips: [{ uid: B_CHIP }, { uid: A_CHIP }] },
      errors: { 'teams.0.chips.1.uid': `Chip ${A_CHIP} belongs to another team` },
    },
    {
      what: 'a proof event listing a chip of another team',
      team: teamB({ proofEvents: [{ proofEventId: 5, chips: [A_CHIP] }] }),
      errors: { 'teams.0.proofEvents.0.chips.0': `Chip ${A_CHIP} is not one of this team's chips; list it under teams.0.chips` },
    },
    {
      what: 'a guestbook contract of another team',
      team: teamB({ guestbookContracts: [{ name: 'Mine', symbol: 'M', chainId: 31337, address: GUESTBOOK }] }),
      errors: { 'teams.0.guestbookContracts.0.address': `Contract ${GUESTBOOK} belongs to another team` },
    },
    {
      what: 'a guestbook event assigned a chip of another team',
      team: teamB({
        guestbookContracts: [
          { name: 'B book', symbol: 'BB', chainId: 31337, events: [{ name: 'E', tokenId: '1', metadata: guestbookMetadata(), chips: [A_CHIP] }] },
        ],
      }),
      errors: { 'teams.0.guestbookContracts.0.events.0.chips.0': `Chip ${A_CHIP} is not one of this team's chips; list it under teams.0.chips` },
    },
  ]

  test.each(cases)('$what', async ({ team, errors }) => {
    const before = await countRows()
    const error = await rejects(run({ teams: [team] }))
    expect(error).toMatchObject({ statusCode: 400, code: 'validation_failed', message: 'The import file conflicts with stored data' })
    expect(error.errors).toEqual(errors)
    expect(await countRows()).toEqual(before)
    expect(await store.teams.getByName('B')).toBeUndefined()
    expect(await store.chips.get(B_CHIP)).toBeUndefined()
    expect((await store.chips.get(A_CHIP))?.teamId).toBe((await store.teams.getByName('A'))!.id)
  })

  test('a conflict in a later team rolls back the earlier teams of the same file', async () => {
    const before = await countRows()
    const error = await rejects(
      run({
        teams: [
          { name: 'A', chipGroups: [{ name: 'New group' }], chips: [{ uid: A_CHIP, kind: 'ntag21x' }] },
          { name: 'C', chips: [{ uid: '04CCCCCCCCCC01' }] },
          { name: 'B', chips: [{ uid: A_CHIP }] },
        ],
      }),
    )
    expect(error.errors).toEqual({ 'teams.2.chips.0.uid': `Chip ${A_CHIP} belongs to another team` })
    expect(await countRows()).toEqual(before)
    expect((await store.chips.get(A_CHIP))?.kind).toBe('ntag424')
    expect(await store.teams.getByName('C')).toBeUndefined()
  })
})

describe('parseImportFile', () => {
  test('schema errors are reported by path, all at once', () => {
    const error = thrown(() =>
      parseImportFile({
        teams: [
          {
            name: 'A',
            colour: 'red',
            chips: [{ uid: 'XYZ' }],
            tokens: [
              {
                chainId: 31337,
                contractAddress: '0x123',
                tokenId: 'abc',
                metadata: metadata({ image: undefined }),
                twoTapClaim: { delaySeconds: -1 },
              },
            ],
            proofEvents: [{ proofEventId: 0, status: 'done' }],
            guestbookContracts: [
              { name: 'B', symbol: 'B', chainId: 1, events: [{ name: 'E', tokenId: '1', metadata: guestbookMetadata({ collection: undefined }) }] },
            ],
          },
        ],
      }),
    )
    expect(error).toMatchObject({ statusCode: 400, code: 'validation_failed', message: 'The import file is not valid' })
    expect(error.errors).toEqual({
      'teams.0': 'Unrecognized key: "colour"',
      'teams.0.chips.0.uid': expect.stringContaining('14 hex digits'),
      'teams.0.tokens.0.contractAddress': expect.any(String),
      'teams.0.tokens.0.tokenId': 'Must be a decimal uint256',
      'teams.0.tokens.0.metadata.image': 'Required',
      'teams.0.tokens.0.twoTapClaim.delaySeconds': expect.any(String),
      'teams.0.proofEvents.0.proofEventId': 'Must be a positive integer',
      'teams.0.proofEvents.0.status': expect.stringContaining('expected one of'),
      'teams.0.guestbookContracts.0.events.0.metadata.collection': 'Required',
    })
  })

  test('the metadata.image example, and the document shape', () => {
    const missingImage = thrown(() =>
      parseImportFile({ teams: [{ name: 'A', tokens: [{ chainId: 1, contractAddress: CONTRACT, tokenId: '1', metadata: metadata({ image: undefined }) }] }] }),
    )
    expect(missingImage.errors).toEqual({ 'teams.0.tokens.0.metadata.image': 'Required' })
    expect(thrown(() => parseImportFile({ teams: [] })).errors).toEqual({ teams: expect.stringContaining('>=1') })
    expect(thrown(() => parseImportFile({})).errors).toEqual({ teams: 'Required' })
    expect(Object.keys(thrown(() => parseImportFile([])).errors!)).toEqual(['body'])
  })

  test('defaults are filled in and values canonicalised', () => {
    expect(parseImportFile({ teams: [{ name: 'A', tokens: [{ chainId: '5', contractAddress: CONTRACT.toLowerCase(), tokenId: 42 }] }] })).toEqual({
      teams: [
        {
          name: 'A',
          chipGroups: [],
          chips: [],
          phygitalContracts: [],
          tokens: [{ chainId: 5, contractAddress: CONTRACT, tokenId: '42', chips: [] }],
          proofEvents: [],
          guestbookContracts: [],
        },
      ],
    })
  })
})

describe('importData: chip profiles and chip keys', () => {
  const META = '8C3E51A07BD24F96E0A1C5B7D9F30246'
  const FILE = '5B0D2E7A9C4F18E3D6A0B2C4E6F81357'
  const MASTER = 'A7E3C91F05B82D64F0E2A4C6B8D13579'
  const CHIP_KEY = '1F3E5D7C9B0A28466E4C2A0F8D6B4937'
  const KEYS = [META, FILE, MASTER, CHIP_KEY]
  const U1 = '04C1C1C1C1C101'
  const U2 = '04C1C1C1C1C102'
  const U3 = '04C1C1C1C1C103'

  const team = (): Row & { chipProfiles: Row[]; chips: Row[] } => ({
    name: 'Acme',
    chipProfiles: [
      { name: 'shop', keyScheme: 'static', metaKey: META, fileKey: FILE, layout: { piccParam: 'picc_data', macParam: 'cmac', encParam: 'enc' } },
      { name: 'own', mode: 'lrp', keyScheme: 'per_chip', metaKey: META.toLowerCase() },
      { name: 'bolt', keyScheme: 'boltcard', masterKey: MASTER },
    ],
    chips: [
      { uid: U1, profile: 'shop' },
      { uid: U2, profile: 'own', fileKey: CHIP_KEY, randomUid: true },
      { uid: U3, profile: 'bolt', keyVersion: 4 },
    ],
  })

  const expectNoKeys = (text: string) => {
    for (const key of KEYS) expect(text.toUpperCase()).not.toContain(key)
  }

  test('profiles and chip settings land in the store, keys sealed; the summary counts profiles and shows no key', async () => {
    const summary = await run({ teams: [team()] })
    expect(summary).toMatchObject({ chipProfiles: 3, chips: 3 })
    expectNoKeys(JSON.stringify(summary))
    const teamId = summary.teams[0]!.id
    const [shop, own, bolt] = await store.chipProfiles.listByTeam(teamId)
    expect(shop).toMatchObject({ name: 'shop', mode: 'aes', keyScheme: 'static', layout: JSON.stringify({ piccParam: 'picc_data', macParam: 'cmac', encParam: 'enc' }) })
    expect(own).toMatchObject({ name: 'own', mode: 'lrp', keyScheme: 'per_chip', fileKey: null, masterKey: null })
    expect(bolt).toMatchObject({ name: 'bolt', mode: 'aes', keyScheme: 'boltcard', metaKey: null, fileKey: null })
    expect(openKey(SECRET, shop!.fileKey!, profileKeyContext(shop!.id, 'file')).toString('hex').toUpperCase()).toBe(FILE)
    expect(openKey(SECRET, own!.metaKey!, profileKeyContext(own!.id, 'meta')).toString('hex').toUpperCase()).toBe(META)
    expect(openKey(SECRET, bolt!.masterKey!, profileKeyContext(bolt!.id, 'master')).toString('hex').toUpperCase()).toBe(MASTER)

    expect(await store.chips.get(U1)).toMatchObject({ profileId: shop!.id, randomUid: 0, fileKey: null, keyVersion: 1 })
    expect(await store.chips.get(U2)).toMatchObject({ profileId: own!.id, randomUid: 1 })
    expect(openKey(SECRET, (await store.chips.get(U2))!.fileKey!, chipKeyContext(U2)).toString('hex').toUpperCase()).toBe(CHIP_KEY)
    expect(await store.chips.get(U3)).toMatchObject({ profileId: bolt!.id, keyVersion: 4 })

    // The imported profile verifies taps with the layout it was given.
    const m = generateSunMessage({ metaKey: META, fileKey: FILE, uid: U1, counter: 3, fileData: '00'.repeat(16), macInput: ({ encFileData }) => `${encFileData}&cmac=` })
    const url = `https://shop.example/t?picc_data=${m.piccData}&enc=${m.encFileData}&cmac=${m.sdmmac}`
    expect(await verifyTap(store, createKeyring(store, SECRET), { url, source: 'phone', now: 5 })).toMatchObject({ uid: U1, counter: 3 })
  })

  test('re-importing updates profiles in place; keys, mode and layout left out keep what is stored', async () => {
    await run({ teams: [team()] }, 1_000)
    const before = await store.chipProfiles.list()
    const counts = await countRows()
    const edited = team()
    edited.chipProfiles = [
      { name: 'shop', keyScheme: 'static', metaKey: FILE, fileKey: META },
      { name: 'own', keyScheme: 'per_chip' },
    ]
    edited.chips = [{ uid: U1 }, { uid: U2, randomUid: false }, { uid: U3, profile: null }]
    const summary = await run({ teams: [edited] }, 2_000)
    expect(summary.chipProfiles).toBe(2)
    expect(await countRows()).toEqual(counts)

    const [shop, own, bolt] = await store.chipProfiles.list()
    expect(shop).toMatchObject({ id: before[0]!.id, createdAt: 1_000, updatedAt: 2_000, layout: before[0]!.layout })
    expect(openKey(SECRET, shop!.metaKey!, profileKeyContext(shop!.id, 'meta')).toString('hex').toUpperCase()).toBe(FILE)
    expect(own).toMatchObject({ id: before[1]!.id, mode: 'lrp', metaKey: before[1]!.metaKey })
    expect(bolt).toEqual(before[2])
    // Chips: no verification field leaves them as they were; randomUid alone keeps the profile and the key.
    expect((await store.chips.get(U1))!.profileId).toBe(shop!.id)
    expect(await store.chips.get(U2)).toMatchObject({ profileId: own!.id, randomUid: 0 })
    expect(openKey(SECRET, (await store.chips.get(U2))!.fileKey!, chipKeyContext(U2)).toString('hex').toUpperCase()).toBe(CHIP_KEY)
    // profile: null takes a chip off its profile.
    expect((await store.chips.get(U3))!.profileId).toBeNull()
  })

  test('a profile stored before (not in this file) can be named by a chip; a profile of another team cannot', async () => {
    await run({ teams: [team()] })
    await run({ teams: [{ name: 'Acme', chips: [{ uid: '04C1C1C1C1C1FF', profile: 'shop' }] }] })
    expect((await store.chips.get('04C1C1C1C1C1FF'))!.profileId).toBe((await store.chips.get(U1))!.profileId)
    const error = await rejects(run({ teams: [{ name: 'Other', chips: [{ uid: '04D1D1D1D1D101', profile: 'shop' }] }] }))
    expect(error.errors).toEqual({ 'teams.0.chips.0.profile': 'No chip profile named "shop" in this team' })
    expect(await store.teams.getByName('Other')).toBeUndefined()
  })

  const conflicts: { what: string; team: Row; errors: Record<string, string> }[] = [
    {
      what: 'a scheme without its keys, and with a key it does not use',
      team: { name: 'B', chipProfiles: [{ name: 'p', keyScheme: 'an10922', metaKey: META, fileKey: FILE }] },
      errors: {
        'teams.0.chipProfiles.0.fileKey': 'Key scheme an10922 does not use a fileKey (it needs metaKey and masterKey)',
        'teams.0.chipProfiles.0.masterKey': 'Key scheme an10922 needs a masterKey',
      },
    },
    {
      what: 'an offset layout whose mode contradicts the profile',
      team: { name: 'B', chipProfiles: [{ name: 'p', keyScheme: 'sdm_backend', masterKey: MASTER, mode: 'aes', layout: { piccOffset: 30, macInputOffset: 70, macOffset: 70, mode: 'lrp' } }] },
      errors: { 'teams.0.chipProfiles.0.layout.mode': "The layout says LRP but the profile's mode is AES" },
    },
    {
      what: 'a chip naming a profile that does not exist',
      team: { name: 'B', chips: [{ uid: '04D1D1D1D1D101', profile: 'nope' }] },
      errors: { 'teams.0.chips.0.profile': 'No chip profile named "nope" in this team' },
    },
    {
      what: 'a per-chip profile chip without its key',
      team: { name: 'B', chipProfiles: [{ name: 'own', keyScheme: 'per_chip', metaKey: META }], chips: [{ uid: '04D1D1D1D1D101', profile: 'own' }] },
      errors: { 'teams.0.chips.0.fileKey': "Profile own keeps keys per chip: give the chip's fileKey" },
    },
    {
      what: 'a chip key on a profile with shared keys, or with no profile',
      team: {
        name: 'B',
        chipProfiles: [{ name: 'shop', keyScheme: 'static', metaKey: META, fileKey: FILE }],
        chips: [{ uid: '04D1D1D1D1D101', profile: 'shop', fileKey: CHIP_KEY }],
      },
      errors: { 'teams.0.chips.0.fileKey': 'Profile shop (key scheme static) does not keep keys per chip' },
    },
    {
      what: 'an NTAG 21x chip under a profile',
      team: {
        name: 'B',
        chipProfiles: [{ name: 'shop', keyScheme: 'static', metaKey: META, fileKey: FILE }],
        chips: [{ uid: '04D1D1D1D1D101', kind: 'ntag21x', profile: 'shop' }],
      },
      errors: { 'teams.0.chips.0.profile': 'Chip 04D1D1D1D1D101 is an NTAG 21x: its mirrors carry no MAC, so no keys apply' },
    },
  ]

  test.each(conflicts)('$what: the error names the path, nothing is written, no key is echoed', async ({ team: doc, errors }) => {
    await run({ teams: [{ name: 'A', chips: [{ uid: '04E1E1E1E1E101' }] }] })
    const before = await countRows()
    const error = await rejects(run({ teams: [{ name: 'A', chipProfiles: [{ name: 'first', keyScheme: 'sdm_backend', masterKey: MASTER }] }, doc] }))
    expect(error).toMatchObject({ statusCode: 400, code: 'validation_failed', message: 'The import file conflicts with stored data' })
    expect(error.errors).toEqual(Object.fromEntries(Object.entries(errors).map(([k, v]) => [k.replace('teams.0', 'teams.1'), v])))
    expectNoKeys(JSON.stringify(error.errors))
    expect(await countRows()).toEqual(before)
    expect(await store.chipProfiles.list()).toEqual([])
  })

  test('schema errors: key format, scheme, layout and duplicate names, by path, without the key', () => {
    const error = thrown(() =>
      parseImportFile({
        teams: [
          {
            name: 'A',
            chipProfiles: [
              { name: 'p', keyScheme: 'static', metaKey: `${META}0`, fileKey: FILE.toLowerCase().replace('a', 'g') },
              { name: 'q', keyScheme: 'diversified', masterKey: 1234 },
              { name: 'r', keyScheme: 'static', layout: { piccParam: 'e', piccOffset: 3 } },
              { name: 'p', keyScheme: 'boltcard', mode: 'des' },
            ],
            chips: [{ uid: '04E1E1E1E1E101', fileKey: 'xyz', keyVersion: -1, randomUid: 'yes' }],
          },
        ],
      }),
    )
    expect(error.errors).toEqual({
      'teams.0.chipProfiles.0.metaKey': 'Must be 32 hex characters (an AES-128 key)',
      'teams.0.chipProfiles.0.fileKey': 'Must be 32 hex characters (an AES-128 key)',
      'teams.0.chipProfiles.1.keyScheme': expect.stringContaining('static'),
      'teams.0.chipProfiles.1.masterKey': expect.stringContaining('expected string'),
      'teams.0.chipProfiles.2.layout': 'give parameter names or SDM offsets, not both: with offsets the names play no part',
      'teams.0.chipProfiles.3.mode': expect.stringContaining('aes'),
      'teams.0.chips.0.fileKey': 'Must be 32 hex characters (an AES-128 key)',
      'teams.0.chips.0.keyVersion': expect.any(String),
      'teams.0.chips.0.randomUid': expect.any(String),
    })
    expectNoKeys(JSON.stringify(error.errors))
    // Duplicates are found once the entries themselves are valid.
    const twice = thrown(() =>
      parseImportFile({ teams: [{ name: 'A', chipProfiles: [1, 2].map(() => ({ name: 'p', keyScheme: 'sdm_backend', masterKey: MASTER })) }] }),
    )
    expect(twice.errors).toEqual({ 'teams.0.chipProfiles.1.name': 'Profile "p" is listed twice' })
  })

  test('keys stored under another secret: the import refuses to mix secrets, unless it re-lists every profile with its keys', async () => {
    await run({ teams: [team()] })
    const other = Buffer.alloc(32, 9)
    const runWith = (doc: unknown) => importData(store, parseImportFile(doc), { config, now: 5_000, secret: other })
    // Adding a profile under another secret would leave the stored ones unopenable for whoever has that secret.
    const extra = { name: 'Acme', chipProfiles: [{ name: 'new', keyScheme: 'sdm_backend', masterKey: MASTER }] }
    expect(await rejected(runWith({ teams: [extra] }), SealedKeyError)).toMatchObject({ code: 'chip_keys_unavailable', reason: 'other_secret' })
    // A file without keys changes nothing about sealing and is imported.
    expect((await runWith({ teams: [{ name: 'Acme', chips: [{ uid: U1, redirectUrl: 'https://acme.example/x' }] }] })).chips).toBe(1)
    // Re-listing a profile without its keys cannot keep keys it cannot open.
    const keyless = await rejects(runWith({ teams: [{ name: 'Acme', chipProfiles: team().chipProfiles.map((p) => ({ name: p.name, keyScheme: p.keyScheme })) }] }))
    expect(keyless.errors).toMatchObject({
      'teams.0.chipProfiles.0.metaKey': 'The stored metaKey does not open under this gateway secret (it was sealed under another one): give the key again',
    })
    // The recovery for a lost secret: every profile with every key, in one file, and the per-chip keys.
    const all = team()
    await runWith({ teams: [all] })
    await expect(createKeyring(store, other).profiles()).resolves.toBeDefined()
    expect(openKey(other, (await store.chips.get(U2))!.fileKey!, chipKeyContext(U2)).toString('hex').toUpperCase()).toBe(CHIP_KEY)
  })
})

describe('the demo fixture', () => {
  test("its first chip verifies NXP's published AN12196 tap URL with the all-zero keys, and keeps its token", async () => {
    const demo = JSON.parse(fs.readFileSync(new URL('../fixtures/demo.json', import.meta.url), 'utf8'))
    await run(demo)
    const keyring = createKeyring(store, SECRET)
    const url = 'http://127.0.0.1:8787/tap?e=EF963FF7828658A599F3041510671E88&c=94EED9EE65337086'
    const tap = await verifyTap(store, keyring, { url, source: 'phone', now: 10 })
    expect(tap).toMatchObject({ uid: '04DE5F1EACC040', counter: 61, mode: 'aes', authenticated: true })
    expect(await store.tokens.findByChip('04DE5F1EACC040')).toMatchObject({ tokenId: '1' })
    // The published URL works once; the counter check refuses it after that.
    await expect(verifyTap(store, keyring, { url, source: 'phone', now: 11 })).rejects.toThrow(/counter 61 is not above the last accepted counter 61/)
  })
})

