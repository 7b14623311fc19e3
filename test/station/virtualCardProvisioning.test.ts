import { describe, expect, test } from 'vitest'
import {
  authenticateEv2First,
  authenticateEv2NonFirst,
  authenticateLrpFirst,
  changeFileSettings,
  changeKey,
  decodeFileSettings,
  FACTORY_NDEF_SETTINGS,
  getCardUid,
  getFileSettings,
  getKeyVersion,
  ndefWritePlan,
  NtagStatusError,
  planNdefUrl,
  readSig,
  sdmFileSettings,
  selectNdefApplication,
  setConfiguration,
  verifyOriginality,
  writeData,
  type Exchange,
  type SecureSession,
} from '../../src/provisioning/index.js'
import { virtualCardSettings } from '../../src/cli/commands/virtualCard.js'
import { UsageError } from '../../src/cli/usage.js'
import { extractSunFields, verifySunMessage, type SunMode } from '../../src/sun/index.js'
import { VirtualNtag424, VIRTUAL_CARD_ORIGINALITY_PUBLIC_KEY, type VirtualNtag424Options } from '../../station/virtual-card/ntag424.js'
import { hex, toHexU, vector } from '../provisioning/provisioningVectors.js'

const UID = '04DE5F1EACC040'
const ZERO = Buffer.alloc(16)
const NEW_KEYS = [0, 1, 2, 3, 4].map((k) => Buffer.alloc(16, 0x10 + k))
type AuthInputs = { rndA: string; piccPart1: string; piccPart2: string }
type AuthExpected = { capduPart1: string; capduPart2: string; rndB: string; ti: string }
const TEMPLATE = 'https://tap.example.com/tap?e={picc}&c={mac}'

function blank(options: Partial<VirtualNtag424Options> = {}): VirtualNtag424 {
  return new VirtualNtag424({ uid: UID, blank: true, ...options } as VirtualNtag424Options)
}

/** The card as a reader sees it: bytes in, bytes out. */
function reader(card: VirtualNtag424) {
  const t = (apdu: Uint8Array) => card.transmit(apdu)
  const run = <T>(x: Exchange<T>): T => x.parse(t(x.apdu))
  const authenticate = (keyNo: number, key: Uint8Array, mode: SunMode = 'aes'): SecureSession => {
    const auth = mode === 'lrp' ? authenticateLrpFirst({ keyNo, key }) : authenticateEv2First({ keyNo, key })
    return auth.finish(t(auth.part2(t(auth.command))))
  }
  return { t, run, authenticate }
}

/** A phone's read: select, read the whole NDEF file; the URL the card served. */
function phoneRead(card: VirtualNtag424): string {
  card.enterField()
  const t = (h: string) => toHexU(card.transmit(hex(h))).slice(-4)
  expect(t('00A4040007D276000085010100')).toBe('9000')
  expect(t('00A4000C02E104')).toBe('9000')
  expect(t('00B0000000')).toBe('9000')
  return card.lastUrl!.url
}

/** The provisioning sequence of research notes §11.3 on a blank card, with the reader side of src/provisioning. */
function provision(card: VirtualNtag424, mode: SunMode, template = TEMPLATE) {
  const { t, run, authenticate } = reader(card)
  expect(toHexU(t(selectNdefApplication()))).toBe('9000')
  let session = authenticate(0, ZERO)
  if (mode === 'lrp') {
    run(setConfiguration(session, { option: 'lrp', irreversible: true }))
    session = authenticate(0, ZERO, 'lrp')
  }
  const plan = planNdefUrl(template, { mode })
  for (const step of ndefWritePlan(plan.ndefFile)) run(writeData({ fileNo: 2, offset: step.offset, data: step.data, commMode: 'plain' }, session))
  const settings = sdmFileSettings(plan, { metaRead: '1', fileRead: '2' })
  run(changeFileSettings(session, { fileNo: 2, settings }))
  for (const keyNo of [1, 2, 3, 4]) expect(run(changeKey(session, { keyNo, newKey: NEW_KEYS[keyNo]!, oldKey: ZERO, keyVersion: 1 }))).toEqual({ sessionEnded: false })
  expect(run(changeKey(session, { keyNo: 0, newKey: NEW_KEYS[0]!, keyVersion: 1 }))).toEqual({ sessionEnded: true })
  return { plan, settings }
}

function verifyUrl(url: string, plan: ReturnType<typeof planNdefUrl>, mode: SunMode) {
  const fields = extractSunFields(url, plan.sunLayout!)
  if (!fields.ok || fields.kind !== 'sun') throw new Error(`not a SUN URL: ${url}`)
  return verifySunMessage({ ...fields, metaKey: NEW_KEYS[1]!, fileKey: NEW_KEYS[2]!, mode })
}

describe('a blank virtual NTAG 424 DNA', () => {
  test('factory state: NDEF settings 0000E0EE000100, key versions 00, an empty NDEF file, AES', () => {
    const card = blank()
    const { t, run } = reader(card)
    t(selectNdefApplication())
    expect(toHexU(t(getFileSettings(2).apdu))).toBe('0000E0EE0001009100')
    expect(decodeFileSettings(hex('0000E0EE000100')).settings).toEqual(FACTORY_NDEF_SETTINGS)
    for (const keyNo of [0, 1, 2, 3, 4]) expect(run(getKeyVersion(keyNo))).toBe(0)
    expect(toHexU(t(hex('00A4000C02E104')))).toBe('9000')
    expect(toHexU(t(hex('00B0000002')))).toBe('00009000')
    expect(card.mode).toBe('aes')
    expect(card.counter).toBe(0)
  })

  test('AN12196 Tables 14 and 24 replay byte for byte from the card side (injected RndB and TI)', () => {
    const t14 = vector<AuthInputs, AuthExpected>('an12196-t14-authenticate-ev2-first-key0')
    const t24 = vector<AuthInputs, AuthExpected>('an12196-t24-authenticate-ev2-nonfirst-key0')
    const random = [t14.expected.rndB, t14.expected.ti, t24.expected.rndB].map(hex)
    const card = blank({ authRandom: (length, what) => {
      const next = random.shift()!
      expect(next.length, what).toBe(length)
      return next
    } })
    const t = (h: string) => toHexU(card.transmit(hex(h)))
    expect(t(t14.expected.capduPart1)).toBe(t14.inputs.piccPart1)
    expect(t(t14.expected.capduPart2)).toBe(t14.inputs.piccPart2)
    expect(card.sessionState).toEqual({ keyNo: 0, cmdCtr: 0, ti: t14.expected.ti })
    expect(t(t24.expected.capduPart1)).toBe(t24.inputs.piccPart1)
    expect(t(t24.expected.capduPart2)).toBe(t24.inputs.piccPart2)
    expect(card.sessionState).toEqual({ keyNo: 0, cmdCtr: 0, ti: t14.expected.ti })
  })

  test('AN12321 Table 2 (AuthenticateLRPFirst, key 3) replays from the card after SetConfiguration enabled LRP', () => {
    const v = vector<AuthInputs, { rndB: string; piccDataPlain: string; capduPart2: string }>('an12321-t2-authenticate-lrp-first')
    const queue: Buffer[] = []
    const card = blank({ authRandom: (length) => queue.shift() ?? Buffer.alloc(length, 0x5a) })
    const { t, run, authenticate } = reader(card)
    t(selectNdefApplication())
    const session = authenticate(0, ZERO)
    run(setConfiguration(session, { option: 'lrp', irreversible: true }))
    expect(card.mode).toBe('lrp')
    queue.push(hex(v.expected.rndB), hex(v.expected.piccDataPlain.slice(0, 8)))
    const auth = authenticateLrpFirst({ keyNo: 3, key: ZERO, rndA: hex(v.inputs.rndA) })
    expect(toHexU(t(auth.command))).toBe(v.inputs.piccPart1)
    const part2 = auth.part2(hex(v.inputs.piccPart1))
    expect(toHexU(part2)).toBe(v.expected.capduPart2)
    expect(toHexU(t(part2))).toBe(v.inputs.piccPart2)
    // An AES request to an LRP card: 91 9D.
    expect(toHexU(t(authenticateEv2First({ keyNo: 0, key: ZERO }).command))).toBe('919D')
  })

  test.each(['aes', 'lrp'] as const)('%s: provisioned with the reader side, then a phone read verifies at the gateway with counter 1', (mode) => {
    const card = blank()
    const { plan } = provision(card, mode)
    const { run, authenticate } = reader(card)
    for (const keyNo of [0, 1, 2, 3, 4]) expect(run(getKeyVersion(keyNo))).toBe(1)
    for (const keyNo of [0, 1, 2, 3, 4]) expect(card.hasKey(keyNo, NEW_KEYS[keyNo]!)).toBe(true)
    const url = phoneRead(card)
    expect(url.startsWith('https://tap.example.com/tap?e=')).toBe(true)
    expect(verifyUrl(url, plan, mode)).toMatchObject({ valid: true, mode, uid: UID, counter: 1 })
    expect(verifyUrl(phoneRead(card), plan, mode)).toMatchObject({ valid: true, counter: 2 })
    // The settings read back are the ones written; the new key 0 opens a session, GetCardUID answers the UID.
    const session = authenticate(0, NEW_KEYS[0]!, mode)
    expect(run(getFileSettings(2, session)).settings).toEqual(sdmFileSettings(plan, { metaRead: '1', fileRead: '2' }))
    expect(toHexU(run(getCardUid(session)))).toBe(UID)
    expect(run(getKeyVersion(3, session))).toBe(1)
  })

  test('{enc} without {macin}: the MAC input starts at the encrypted data, as planNdefUrl plans it (a chip answers 91 9E otherwise)', () => {
    const template = 'https://tap.example.com/tap?e={picc}&d={enc}&c={mac}'
    const plan = planNdefUrl(template)
    const configured = new VirtualNtag424({ uid: UID, metaKey: NEW_KEYS[1]!, fileKey: NEW_KEYS[2]!, url: template, fileData: Buffer.alloc(16, 0x41) })
    expect(configured.settings.macInputOffset).toBe(plan.offsets.macInput)
    expect(configured.settings.macInputOffset).toBe(configured.settings.encOffset)
    expect(verifyUrl(phoneRead(configured), plan, 'aes')).toMatchObject({ valid: true, counter: 1, fileData: '41'.repeat(16) })
    // And a blank card provisioned with the same template mirrors the same layout.
    const card = blank()
    provision(card, 'aes', template)
    expect(verifyUrl(phoneRead(card), plan, 'aes')).toMatchObject({ valid: true, counter: 1, uid: UID })
  })

  test('a wrong key: 91 AE, the failed-authentication counter counts, and at the limit 91 AD', () => {
    const card = blank({ failedAuth: { limit: 3, decrement: 1 } })
    const { t, authenticate } = reader(card)
    t(selectNdefApplication())
    const wrong = Buffer.alloc(16, 0xee)
    const attempt = () => {
      const auth = authenticateEv2First({ keyNo: 0, key: wrong })
      return toHexU(t(auth.part2(t(auth.command))))
    }
    expect(attempt()).toBe('91AE')
    expect(card.failedAuthentications(0)).toBe(1)
    expect(() => authenticate(0, wrong)).toThrow(NtagStatusError)
    expect(card.failedAuthentications(0)).toBe(2)
    authenticate(0, ZERO)
    expect(card.failedAuthentications(0)).toBe(1)
    expect(attempt()).toBe('91AE')
    expect(attempt()).toBe('91AE')
    expect(card.failedAuthentications(0)).toBe(3)
    // Blocked: even the right key is refused at part 1, across taps.
    card.enterField()
    expect(toHexU(t(authenticateEv2First({ keyNo: 0, key: ZERO }).command))).toBe('91AD')
    expect(card.failedAuthentications(1)).toBe(0)
  })

  test('secure-messaging errors: a plain ChangeFileSettings in a session is 91 7E, a bad MAC 91 1E, ChangeKey without a session 91 AE, with key 1 91 9D', () => {
    const card = blank()
    const { t, run, authenticate } = reader(card)
    t(selectNdefApplication())
    authenticate(0, ZERO)
    expect(toHexU(t(hex('905F0000040200E0EE00')))).toBe('917E')
    expect(card.sessionState).toBeNull()
    const session = authenticate(0, ZERO)
    const apdu = Buffer.from(getKeyVersion(1, session).apdu)
    apdu[apdu.length - 2]! ^= 1
    expect(toHexU(t(apdu))).toBe('911E')
    card.enterField()
    t(selectNdefApplication())
    expect(toHexU(t(hex('90C40000010100')))).toBe('91AE')
    const key1 = authenticate(1, ZERO)
    const keyData = Buffer.alloc(21)
    expect(toHexU(t(key1.command(0xc4, { header: Buffer.from([2]), data: keyData, commMode: 'full' })))).toBe('919D')
    // A wrong old key (the CRC over new ⊕ data fails): 91 1E and the key stays.
    const s0 = authenticate(0, ZERO)
    const x = changeKey(s0, { keyNo: 2, newKey: NEW_KEYS[2]!, oldKey: Buffer.alloc(16, 0x99), keyVersion: 1 })
    expect(toHexU(t(x.apdu))).toBe('911E')
    expect(card.hasKey(2, ZERO)).toBe(true)
    expect(run(getKeyVersion(2))).toBe(0)
  })

  test.each([
    { slot: 'key 1', keyNo: 1, processLast: false },
    { slot: 'key 1', keyNo: 1, processLast: true },
    { slot: 'key 0', keyNo: 0, processLast: false },
    { slot: 'key 0', keyNo: 0, processLast: true },
  ])('pulled at ChangeKey of $slot (command carried out: $processLast): the slot holds the old or the new key, never a mix', ({ keyNo, processLast }) => {
    const card = blank()
    const { t, run, authenticate } = reader(card)
    t(selectNdefApplication())
    const session = authenticate(0, ZERO)
    const newKey = NEW_KEYS[keyNo]!
    const x = changeKey(session, { keyNo, newKey, oldKey: ZERO, keyVersion: 7 })
    card.removeAfterCommands(0, { processLast })
    expect(card.exchange(x.apdu)).toEqual({ response: null, leaves: true })
    card.enterField()
    expect(card.sessionState).toBeNull()
    t(selectNdefApplication())
    // The key version tells the two states apart without authenticating (research notes §11.3 step 5).
    expect(run(getKeyVersion(keyNo))).toBe(processLast ? 7 : 0)
    expect(card.hasKey(keyNo, processLast ? newKey : ZERO)).toBe(true)
    // The run resumes with the key the version names, and finishes.
    const key0 = keyNo === 0 && processLast ? newKey : ZERO
    const again = authenticate(0, key0)
    if (!(keyNo === 0 && processLast)) run(changeKey(again, { keyNo, newKey, oldKey: processLast ? newKey : ZERO, keyVersion: 7 }))
    expect(card.hasKey(keyNo, newKey)).toBe(true)
    expect(card.keyVersion(keyNo)).toBe(7)
  })

  test('removeAfterCommands(n) counts every command: n answers, the last one flagged leaves', () => {
    const card = blank()
    card.removeAfterCommands(2)
    expect(card.exchange(selectNdefApplication())).toMatchObject({ leaves: false })
    const second = card.exchange(getKeyVersion(0).apdu)
    expect(toHexU(second.response!)).toBe('009100')
    expect(second.leaves).toBe(true)
    card.enterField()
    expect(card.exchange(selectNdefApplication()).leaves).toBe(false)
  })

  test('Read_Sig signs the UID with the exported test key (not NXP\'s); random ID makes it need a session', () => {
    const card = blank()
    const { t, run, authenticate } = reader(card)
    t(selectNdefApplication())
    const signature = run(readSig())
    expect(verifyOriginality({ uid: hex(UID), signature, publicKey: VIRTUAL_CARD_ORIGINALITY_PUBLIC_KEY })).toBe(true)
    expect(verifyOriginality({ uid: hex(UID), signature })).toBe(false)
    const session = authenticate(0, ZERO)
    run(setConfiguration(session, { option: 'randomId', irreversible: true }))
    card.enterField()
    expect(card.rfUidHex).toMatch(/^08[0-9A-F]{6}$/)
    t(selectNdefApplication())
    expect(toHexU(t(readSig().apdu))).toBe('91AE')
    const s = authenticate(0, ZERO)
    expect(verifyOriginality({ uid: hex(UID), signature: run(readSig(s)), publicKey: VIRTUAL_CARD_ORIGINALITY_PUBLIC_KEY })).toBe(true)
    expect(toHexU(run(getCardUid(s)))).toBe(UID)
  })

  test('the transcript hook sees every command and answer, including a pulled card\'s null', () => {
    const card = blank()
    const seen: string[] = []
    card.onExchange(({ command, response }) => seen.push(`${toHexU(command)}>${response ? toHexU(response) : 'gone'}`))
    card.transmit(selectNdefApplication())
    card.removeAfterCommands(0)
    card.exchange(getKeyVersion(0).apdu)
    expect(seen).toEqual(['00A4040007D276000085010100>9000', '90640000010000>gone'])
  })

  test('ChangeFileSettings turning SDM on rewinds SDMReadCtr; a configured card then serves its file as the settings say', () => {
    const configured = new VirtualNtag424({ uid: UID, metaKey: NEW_KEYS[1]!, fileKey: NEW_KEYS[2]!, url: TEMPLATE, counter: 41 })
    const plan = planNdefUrl(TEMPLATE)
    expect(verifyUrl(phoneRead(configured), plan, 'aes')).toMatchObject({ valid: true, counter: 42 })
    const { t, run, authenticate } = reader(configured)
    t(selectNdefApplication())
    const session = authenticate(0, ZERO)
    expect(run(getFileSettings(2, session)).settings).toEqual(sdmFileSettings(plan, { metaRead: '1', fileRead: '2' }))
    run(changeFileSettings(session, { fileNo: 2, settings: sdmFileSettings(plan, { metaRead: '1', fileRead: '2' }) }))
    expect(configured.counter).toBe(0)
    expect(verifyUrl(phoneRead(configured), plan, 'aes')).toMatchObject({ valid: true, counter: 1, uid: UID })
  })

  test('tapgate virtual-card --blank: a factory card; keys, URL or counter with it are a usage error', () => {
    expect(virtualCardSettings({ uid: '04:de:5f:1e:ac:c0:40', blank: true })).toEqual({ card: { uid: UID, blank: true }, host: '127.0.0.1', port: 35963 })
    expect(() => virtualCardSettings({ uid: UID, blank: true, 'meta-key': '00'.repeat(16), url: 'https://x/{picc}{mac}' })).toThrow(UsageError)
    expect(() => virtualCardSettings({ uid: UID, blank: true, counter: '3' })).toThrow('drop --counter')
    expect(new VirtualNtag424(virtualCardSettings({ uid: UID, blank: true }).card).fileSettings).toEqual(FACTORY_NDEF_SETTINGS)
  })
})
