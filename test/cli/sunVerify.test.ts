import { spawn } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, test } from 'vitest'
import { sunVerify, type SunVerifyReport } from '../../src/cli/commands/sunVerify.js'
import { UsageError, type Flags } from '../../src/cli/usage.js'
import { generateSunMessage, type SunMode } from '../../src/sun/index.js'

const repoRoot = fileURLToPath(new URL('../..', import.meta.url))
const cliPath = path.join(repoRoot, 'src', 'cli', 'tapgate.js')

const ZERO = '00000000000000000000000000000000'
const META = '0C3B25D92B38AE443229DD59AD34B85D'
const FILE = 'B45775776CB224C75BCDE7CA3704E933'
const UID = '04996C6A926980'
const KEYS = { 'meta-key': META, 'file-key': FILE }

/** AN12196 §4.4.3 (Table 4): encrypted file data, zero keys. */
const AN12196_ENC =
  'https://my424dna.com/?picc_data=FDE4AFA99B5C820A2C1BB0F1C792D0EB&enc=94592FDE69FA06E8E3B6CA686A22842B&cmac=C48B89C17A233B2C'
/** The Bolt Card test vector (counter 3): parameters p and c. */
const BOLT = 'lnurlw://card.example.com/ln?p=4E2E289D945A66BB13377A728884E867&c=E19CCB1FED8892CE'
const BOLT_PARAMS = ['--picc-param', 'p', '--mac-param', 'c']
/** The NTAG 424 DNA LRP vector (ntag424-java), zero keys. */
const LRP = 'https://example.com/?e=B3373525DC0343DEDB5F8E89F5387402EDFB8C22186FC129&c=A3773D237775F892'

/** A chip's message for UID / counter 42, with fixed randomness. */
function message(mode: SunMode, opts: { fileData?: string; macInput?: (m: { piccData: string; encFileData: string | null }) => string } = {}) {
  return generateSunMessage({ metaKey: META, fileKey: FILE, mode, uid: UID, counter: 42, random: Buffer.alloc(mode === 'aes' ? 5 : 13, 0x5a), ...opts })
}

function rejected(fields: Partial<SunVerifyReport>): SunVerifyReport {
  return { valid: false, authenticated: false, uid: null, counter: null, fileData: null, fileDataEncoding: null, mode: null, reason: null, detail: null, ...fields }
}

const verify = (url: string, flags: Flags = {}) => sunVerify(['verify', url], { ...KEYS, ...flags })

describe('sunVerify (in process)', () => {
  test('a valid message: fileData as text when printable ASCII, else hex', () => {
    expect(sunVerify(['verify', AN12196_ENC], { 'meta-key': ZERO, 'file-key': ZERO })).toEqual({
      exitCode: 0,
      report: {
        valid: true,
        authenticated: true,
        uid: '04958CAA5C5E80',
        counter: 1,
        fileData: 'xxxxxxxxxxxxxxxx',
        fileDataEncoding: 'ascii',
        mode: 'aes',
        reason: null,
        detail: null,
      },
    })
    const binary = '00FF'.repeat(8)
    const m = message('aes', { fileData: binary, macInput: ({ encFileData }) => `${encFileData}&cmac=` })
    const url = `https://example.com/?picc_data=${m.piccData}&enc=${m.encFileData}&cmac=${m.sdmmac}`
    expect(verify(url).report).toMatchObject({ valid: true, fileData: binary, fileDataEncoding: 'hex' })
  })

  test('keys swapped: SUN message and plain mirror', () => {
    const m = message('aes')
    expect(verify(`https://example.com/?e=${m.piccData}&c=${m.sdmmac}`, { 'meta-key': FILE, 'file-key': META })).toEqual({
      exitCode: 1,
      report: rejected({
        mode: 'aes',
        reason: 'not_sun_message',
        detail:
          'wrong SDM meta read key, or meta/file keys swapped: the SDM file read key decrypts this PICCData, so the two keys look swapped',
      }),
    })
    // A plain mirror's MAC only involves the file key; the session keys are the same as for the SUN message.
    const plain = `https://example.com/?uid=${UID}&ctr=00002A&cmac=${m.sdmmac}`
    expect(verify(plain).report).toMatchObject({ valid: true, uid: UID, counter: 42 })
    expect(verify(plain, { 'meta-key': FILE, 'file-key': META }).report).toEqual(
      rejected({
        uid: UID,
        counter: 42,
        mode: 'aes',
        reason: 'mac_mismatch',
        detail: 'the MAC verifies under the --meta-key: the SDM meta read key and file read key are swapped',
      }),
    )
  })

  test('a plain SDM mirror (uid, ctr, cmac) needs only --file-key, AES and LRP; a SUN message still needs both keys', () => {
    const fileOnly = { 'file-key': FILE }
    const aesPlain = `https://example.com/?uid=${UID}&ctr=00002A&cmac=${message('aes').sdmmac}`
    expect(sunVerify(['verify', aesPlain], fileOnly)).toMatchObject({ exitCode: 0, report: { valid: true, authenticated: true, uid: UID, counter: 42, mode: 'aes' } })
    const lrpPlain = `https://example.com/?uid=${UID}&ctr=00002A&cmac=${message('lrp').sdmmac}`
    expect(sunVerify(['verify', lrpPlain], { ...fileOnly, mode: 'lrp' }).report).toMatchObject({ valid: true, mode: 'lrp', counter: 42 })
    // Without the meta key there is no swapped-key hint to give, but the other-mode hint still works.
    expect(sunVerify(['verify', lrpPlain], fileOnly).report).toMatchObject({ valid: false, reason: 'mac_mismatch', detail: expect.stringContaining('pass --mode lrp') })
    expect(() => sunVerify(['verify', aesPlain], {})).toThrow('this URL is a plain SDM mirror (uid, ctr, cmac): give --file-key')
    const m = message('aes')
    expect(() => sunVerify(['verify', `https://example.com/?e=${m.piccData}&c=${m.sdmmac}`], fileOnly)).toThrow('--meta-key is required')
    // A URL whose fields cannot be found needs no key to say so.
    expect(sunVerify(['verify', 'https://example.com/?hello=world'], {})).toMatchObject({ exitCode: 1, report: { reason: 'malformed' } })
  })

  test('wrong mode: pinned against the PICCData length, by offsets, and for a plain mirror', () => {
    expect(sunVerify(['verify', LRP], { 'meta-key': ZERO, 'file-key': ZERO, mode: 'lrp' }).report).toMatchObject({ valid: true, counter: 30, mode: 'lrp' })
    expect(sunVerify(['verify', LRP], { 'meta-key': ZERO, 'file-key': ZERO, mode: 'aes' }).report).toMatchObject({
      valid: false,
      mode: 'aes',
      reason: 'mode_mismatch',
    })
    // "example.com/?e=" follows the abbreviated https://, so PICCData sits at 7 + 15; the MAC 48 + 3 later.
    const offsets = { 'picc-offset': '22', 'mac-input-offset': '73', 'mac-offset': '73' }
    expect(sunVerify(['verify', LRP], { 'meta-key': ZERO, 'file-key': ZERO, ...offsets }).report).toMatchObject({ valid: true, mode: 'lrp' })
    expect(sunVerify(['verify', LRP], { 'meta-key': ZERO, 'file-key': ZERO, ...offsets, mode: 'aes' }).report).toMatchObject({
      reason: 'mode_mismatch',
      detail: expect.stringContaining('runs 48 characters, the LRP PICCData length'),
    })

    const lrpPlain = `https://example.com/?uid=${UID}&ctr=00002A&cmac=${message('lrp').sdmmac}`
    expect(verify(lrpPlain, { mode: 'lrp' }).report).toMatchObject({ valid: true, mode: 'lrp', counter: 42 })
    expect(verify(lrpPlain).report).toMatchObject({
      valid: false,
      reason: 'mac_mismatch',
      detail: 'the MAC verifies in LRP mode: the chip uses LRP, pass --mode lrp',
    })
    expect(verify(lrpPlain, { mode: 'aes' }).report).toMatchObject({ valid: false, mode: 'aes', reason: 'mode_mismatch' })
  })

  test('a lower-cased URL, truncated PICCData, wrong offsets', () => {
    const m = message('aes')
    const url = `https://example.com/?e=${m.piccData}&c=${m.sdmmac}`
    expect(verify(url.toLowerCase()).report).toMatchObject({ reason: 'malformed', detail: expect.stringContaining('lower-cased') })
    expect(verify(url.replace(`e=${m.piccData}`, `e=${m.piccData.slice(0, 28)}`)).report).toMatchObject({
      reason: 'malformed',
      detail: 'PICCData (parameter e) is 28 hex characters, not 32 (AES) or 48 (LRP): a truncated URL or the wrong parameter',
    })
    const right = { 'picc-offset': '22', 'mac-input-offset': '57', 'mac-offset': '57' }
    expect(verify(url, right).report).toMatchObject({ valid: true })
    expect(verify(url, { ...right, 'picc-offset': '0x18' }).report).toMatchObject({
      reason: 'malformed',
      detail: expect.stringContaining('a run of 32 hex characters starts at offset 22 (2 before PICCDataOffset 24)'),
    })
    // The MAC checked over the wrong input: the PICCData decrypted, so the chip is named, but nothing is proven.
    expect(verify(url, { ...right, 'mac-input-offset': '22' }).report).toEqual(
      rejected({
        uid: UID,
        counter: 42,
        mode: 'aes',
        reason: 'mac_mismatch',
        detail: 'the SDMMAC matches an empty MAC input: this chip has SDMMACInputOffset = SDMMACOffset, so pass an empty MAC input',
      }),
    )
    expect(verify(url, { ...right, 'mac-offset': '40', 'mac-input-offset': '40' }).report).toMatchObject({
      reason: 'malformed',
      detail: expect.stringContaining('overlap'),
    })
  })

  test('NTAG 21x mirrors: no MAC to verify unless --ntag21x, which needs no keys', () => {
    const url = 'https://example.com/?uid=04E141124C2880x003F31'
    expect(verify(url)).toEqual({
      exitCode: 1,
      report: rejected({
        uid: '04E141124C2880',
        counter: 16177,
        reason: 'no_mac',
        detail: 'an NTAG 21x mirror (uid/ctr without cmac) has no MAC to verify: pass --ntag21x to accept it as unauthenticated',
      }),
    })
    expect(sunVerify(['verify', url], { ntag21x: true })).toEqual({
      exitCode: 0,
      report: {
        valid: true,
        authenticated: false,
        uid: '04E141124C2880',
        counter: 16177,
        fileData: null,
        fileDataEncoding: null,
        mode: null,
        reason: null,
        detail: 'an NTAG 21x mirror carries no MAC: anyone can forge it, so treat the tap as unauthenticated',
      },
    })
    expect(() => sunVerify(['verify', BOLT], { ntag21x: true, ...Object.fromEntries([['picc-param', 'p'], ['mac-param', 'c']]) })).toThrow(
      '--meta-key is required (32 hex characters)',
    )
  })

  test.each<[string, string[], Flags]>([
    ['no action', [], KEYS],
    ['another action', ['check', BOLT], KEYS],
    ['no URL', ['verify'], KEYS],
    ['a stray argument', ['verify', BOLT, META], KEYS],
    ['a missing --file-key', ['verify', BOLT], { 'meta-key': META, 'picc-param': 'p', 'mac-param': 'c' }],
    ['a short key', ['verify', BOLT], { 'meta-key': META.slice(1), 'file-key': FILE }],
    ['a bad mode', ['verify', BOLT], { ...KEYS, mode: 'des' }],
    ['--picc-param without --mac-param', ['verify', BOLT], { ...KEYS, 'picc-param': 'p' }],
    ['names with offsets', ['verify', BOLT], { ...KEYS, 'picc-param': 'p', 'mac-param': 'c', 'picc-offset': '38' }],
    ['a missing --mac-offset', ['verify', BOLT], { ...KEYS, 'picc-offset': '38', 'mac-input-offset': '73' }],
    ['--enc-offset without --enc-length', ['verify', BOLT], { ...KEYS, 'picc-offset': '38', 'mac-input-offset': '73', 'mac-offset': '73', 'enc-offset': '40' }],
    ['an --enc-length not whole blocks', ['verify', BOLT], { ...KEYS, 'picc-offset': '38', 'mac-input-offset': '73', 'mac-offset': '73', 'enc-offset': '40', 'enc-length': '30' }],
    ['a non-numeric offset', ['verify', BOLT], { ...KEYS, 'picc-offset': 'x', 'mac-input-offset': '73', 'mac-offset': '73' }],
    ['--uri-prefix-code without offsets', ['verify', BOLT], { ...KEYS, 'uri-prefix-code': '04' }],
    ['an unknown --uri-prefix-code', ['verify', BOLT], { ...KEYS, 'picc-offset': '38', 'mac-input-offset': '73', 'mac-offset': '73', 'uri-prefix-code': '7f' }],
  ])('usage error: %s', (_, positionals, flags) => {
    let error: unknown
    try {
      sunVerify(positionals, flags)
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(UsageError)
    for (const key of [META, FILE, META.slice(1)]) expect((error as Error).message).not.toContain(key)
  })
})

type Run = { code: number | null; stdout: string; stderr: string }

/** Runs the CLI as users do, and checks that no key given on the command line comes back out. */
async function tapgate(args: string[]): Promise<Run> {
  const child = spawn(process.execPath, [cliPath, ...args], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
  const keys = args.filter((a) => /^[0-9A-Fa-f]{20,}$/.test(a) && !/^0+$/.test(a))
  // Thrown rather than asserted: the concurrent tests each have their own expect.
  for (const key of keys) if (`${stdout}\n${stderr}`.toUpperCase().includes(key.toUpperCase())) throw new Error(`the CLI echoed a key given as ${args[args.indexOf(key) - 1]}`)
  return { code, stdout, stderr }
}

describe.concurrent('tapgate sun verify (spawned)', () => {
  test('a published vector: exit 0 and exactly this JSON', async ({ expect }) => {
    const r = await tapgate(['sun', 'verify', AN12196_ENC, '--meta-key', ZERO, '--file-key', ZERO])
    expect(r).toEqual({
      code: 0,
      stderr: '',
      stdout: `${JSON.stringify(
        {
          valid: true,
          authenticated: true,
          uid: '04958CAA5C5E80',
          counter: 1,
          fileData: 'xxxxxxxxxxxxxxxx',
          fileDataEncoding: 'ascii',
          mode: 'aes',
          reason: null,
          detail: null,
        },
        null,
        2,
      )}\n`,
    })
  })

  test('the Bolt Card vector by parameter names: exit 0', async ({ expect }) => {
    const r = await tapgate(['sun', 'verify', BOLT, '--meta-key', META, '--file-key', FILE, ...BOLT_PARAMS])
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout)).toEqual({
      valid: true,
      authenticated: true,
      uid: '04996C6A926980',
      counter: 3,
      fileData: null,
      fileDataEncoding: null,
      mode: 'aes',
      reason: null,
      detail: null,
    })
  })

  test('a bad MAC: exit 1 with the reason', async ({ expect }) => {
    const r = await tapgate(['sun', 'verify', BOLT.replace(/CE$/, 'CF'), '--meta-key', META, '--file-key', FILE, ...BOLT_PARAMS])
    expect(r.code).toBe(1)
    expect(JSON.parse(r.stdout)).toMatchObject({ valid: false, authenticated: false, uid: '04996C6A926980', counter: 3, reason: 'mac_mismatch' })
  })

  test('keys swapped: exit 1, the hint names the mistake, not the keys', async ({ expect }) => {
    const r = await tapgate(['sun', 'verify', BOLT, '--meta-key', FILE, '--file-key', META, ...BOLT_PARAMS])
    expect(r.code).toBe(1)
    expect(JSON.parse(r.stdout)).toMatchObject({ valid: false, reason: 'not_sun_message', detail: expect.stringContaining('swapped') })
  })

  test('SDM offsets for a path layout: exit 0', async ({ expect }) => {
    // https://example.com/t/PICC/ENC/MAC, MAC input from the file data to the MAC.
    const m = message('aes', { fileData: Buffer.from('tapgate:chip-042').toString('hex'), macInput: ({ encFileData }) => `${encFileData}/` })
    const url = `https://example.com/t/${m.piccData}/${m.encFileData}/${m.sdmmac}`
    const at = (field: string) => String(url.indexOf(field) - 'https://'.length + 7)
    const offsets = ['--picc-offset', at(m.piccData), '--enc-offset', at(m.encFileData!), '--enc-length', '32']
    const r = await tapgate(['sun', 'verify', url, '--meta-key', META, '--file-key', FILE, ...offsets, '--mac-input-offset', at(m.encFileData!), '--mac-offset', at(m.sdmmac)])
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({ valid: true, uid: UID, counter: 42, fileData: 'tapgate:chip-042', fileDataEncoding: 'ascii' })
  })

  test('an NTAG 21x mirror with --ntag21x: valid, not authenticated', async ({ expect }) => {
    const r = await tapgate(['sun', 'verify', 'https://example.com/?uid=04E141124C2880x003F31', '--ntag21x'])
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({ valid: true, authenticated: false, uid: '04E141124C2880', counter: 16177 })
  })

  test('usage errors exit 2 and print nothing on stdout', async ({ expect }) => {
    const runs = await Promise.all([
      tapgate(['sun', 'verify', BOLT, '--file-key', FILE, ...BOLT_PARAMS]),
      tapgate(['sun', 'verify', BOLT, '--meta-key', META, '--file-key', FILE, '--picc-offset', '38', '--mac-offset', '73']),
      tapgate(['sun', 'verify', BOLT, '--meta-key', META, '--file-key', FILE, ...BOLT_PARAMS, '--mac-input-offset', '73']),
      tapgate(['sun', 'verify', BOLT, '--meta-key', `${META}0`, '--file-key', FILE]),
    ])
    expect(runs.map((r) => [r.code, r.stdout])).toEqual(Array(4).fill([2, '']))
    expect(runs.map((r) => r.stderr.trim())).toEqual([
      'tapgate: --meta-key is required (32 hex characters) (see tapgate --help)',
      'tapgate: with SDM offsets give --picc-offset, --mac-input-offset and --mac-offset (missing --mac-input-offset) (see tapgate --help)',
      'tapgate: give parameter names (--picc-param …) or the SDM offsets (--picc-offset …), not both (see tapgate --help)',
      'tapgate: --meta-key must be 32 hex characters (an AES-128 key), got 33 characters (see tapgate --help)',
    ])
  })
})
