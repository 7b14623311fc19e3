import { readFileSync } from 'node:fs'
import { describe, expect, test } from 'vitest'
import {
  aesCmac,
  aesCmacSubkeys,
  createLrp,
  createSunVerifier,
  decryptPiccData,
  deriveBoltCardKeys,
  deriveSdmBackendTagKey,
  diversifyAn10922,
  formatNtag21xMirror,
  lricbDecrypt,
  lricbEncrypt,
  lrpCmac,
  lrpCmacSubkeys,
  lrpEval,
  parseNtag21xMirror,
  sdmFileDataIv,
  sdmSessionKeys,
  toHex,
  verifyPlainMirror,
  verifySunMessage,
  type SunMode,
  type SunReason,
} from '../../src/sun/index.js'

/** One published vector; `input`/`expected` vary by `kind` and are narrowed per handler. */
type Vector = {
  id: string
  kind: string
  mode?: 'AES' | 'LRP'
  keys?: { sdmMetaReadKey?: string; sdmFileReadKey?: string }
  input: Record<string, unknown>
  expected: Record<string, unknown>
}

const file = JSON.parse(readFileSync(new URL('../vectors/sun-public.json', import.meta.url), 'utf8')) as { vectors: Vector[] }
const vectors = file.vectors

/**
 * The vectors say only `valid: false` for their negative cases; these are the
 * reason codes the library must give for them (a new negative vector fails until mapped).
 */
const REJECTION_REASON: Record<string, SunReason> = {
  'an12196-table6-lowercase-macinput-rejected': 'mac_mismatch',
  'an12196-table5-counter-plus-one-rejected': 'mac_mismatch',
  'an12196-table3-wrong-meta-key-rejected': 'not_sun_message',
}

const bytes = (hex: string): Buffer => Buffer.from(hex, 'hex')
const counterOf = (le: string): number => bytes(le).readUIntLE(0, 3)

type SunInput = { piccData?: string; encFileData?: string | null; sdmmac: string; macInput: string; uid?: string; ctr?: string }
type SunExpected = {
  valid: boolean
  piccDataTag?: string
  uid?: string
  readCtr?: number
  readCtrBytesLE?: string
  fileData?: string | null
  fileDataAscii?: string
  intermediate?: Record<string, string>
}

function checkSun(v: Vector): void {
  const input = v.input as SunInput
  const expected = v.expected as SunExpected
  const mode = v.mode?.toLowerCase() as SunMode
  const metaKey = v.keys?.sdmMetaReadKey
  const fileKey = v.keys?.sdmFileReadKey ?? ''

  if (input.piccData === undefined) {
    // Plain UID/counter mirror.
    const r = verifyPlainMirror({ fileKey, mode, uid: input.uid ?? '', ctr: input.ctr ?? '', cmac: input.sdmmac, macInput: input.macInput })
    if (!expected.valid) {
      expect(r).toMatchObject({ valid: false, reason: REJECTION_REASON[v.id] })
      return
    }
    expect(r).toEqual({ valid: true, mode, uid: expected.uid, counter: expected.readCtr })
    if (expected.readCtrBytesLE) expect(counterOf(expected.readCtrBytesLE)).toBe(expected.readCtr)
    return
  }

  const message = { piccData: input.piccData, encFileData: input.encFileData ?? null, sdmmac: input.sdmmac, macInput: input.macInput }
  const pinned = createSunVerifier({ metaKey: metaKey ?? '', fileKey, mode }).verify(message)
  const auto = verifySunMessage({ metaKey: metaKey ?? '', fileKey, ...message })
  expect(auto).toEqual(pinned)
  if (!expected.valid) {
    expect(REJECTION_REASON[v.id], `map ${v.id} to a reason code`).toBeDefined()
    expect(pinned).toMatchObject({ valid: false, reason: REJECTION_REASON[v.id] })
    return
  }
  expect(pinned).toEqual({
    valid: true,
    mode,
    uid: expected.uid,
    counter: expected.readCtr,
    fileData: expected.fileData ?? null,
    piccDataTag: expected.piccDataTag === undefined ? 0xc7 : Number.parseInt(expected.piccDataTag, 16),
  })
  if (expected.fileDataAscii !== undefined) expect(bytes(expected.fileData ?? '').toString('ascii')).toBe(expected.fileDataAscii)

  const picc = decryptPiccData({ metaKey: metaKey ?? '', piccData: input.piccData })
  if (expected.readCtrBytesLE) expect(toHex(picc.plaintext, 8, 11)).toBe(expected.readCtrBytesLE)
  const im = expected.intermediate
  if (!im) return
  if (im.decryptedPiccData) expect(toHex(picc.plaintext)).toBe(im.decryptedPiccData)
  const keys = sdmSessionKeys({ fileKey, uid: bytes(expected.uid ?? ''), counter: expected.readCtr ?? 0 })
  if (im.sv1) expect(toHex(keys.sv1)).toBe(im.sv1)
  if (im.sv2) expect(toHex(keys.sv2)).toBe(im.sv2)
  if (im.sesSdmFileReadEncKey) expect(toHex(keys.encKey)).toBe(im.sesSdmFileReadEncKey)
  if (im.sesSdmFileReadMacKey) expect(toHex(keys.macKey)).toBe(im.sesSdmFileReadMacKey)
  if (im.fullCmac) expect(toHex(aesCmac(keys.macKey, input.macInput))).toBe(im.fullCmac)
  if (im.ive) expect(toHex(sdmFileDataIv(keys.encKey, expected.readCtr ?? 0))).toBe(im.ive)
}

const handlers: Record<string, (v: Vector) => void> = {
  'aes-cmac-subkeys': (v) => {
    const { L, K1, K2 } = aesCmacSubkeys(v.input.key as string)
    expect({ L: toHex(L), K1: toHex(K1), K2: toHex(K2) }).toEqual(v.expected)
  },
  'aes-cmac': (v) => {
    expect(toHex(aesCmac(v.input.key as string, bytes(v.input.message as string)))).toBe(v.expected.cmac)
  },
  'sdm-session-keys-aes': (v) => {
    const i = v.input as { sdmFileReadKey: string; uid: string; readCtrBytesLE: string }
    const k = sdmSessionKeys({ fileKey: i.sdmFileReadKey, uid: bytes(i.uid), counter: counterOf(i.readCtrBytesLE) })
    expect({ sv1: toHex(k.sv1), sv2: toHex(k.sv2), sesSdmFileReadEncKey: toHex(k.encKey), sesSdmFileReadMacKey: toHex(k.macKey) }).toEqual(v.expected)
  },
  sun: checkSun,
  'lrp-keys': (v) => {
    const lrp = createLrp(v.input.key as string)
    const e = v.expected as { plaintexts: Record<string, string>; updatedKeys: Record<string, string> }
    for (const [i, hex] of Object.entries(e.plaintexts)) expect(toHex(lrp.plaintexts[Number(i)]!)).toBe(hex)
    for (const [i, hex] of Object.entries(e.updatedKeys)) expect(toHex(lrp.updatedKeys[Number(i)]!)).toBe(hex)
  },
  'lrp-eval': (v) => {
    const i = v.input as { key: string; x: string; updatedKey: number; final: boolean }
    const lrp = createLrp(i.key)
    expect(toHex(lrpEval(lrp.plaintexts, lrp.updatedKeys[i.updatedKey]!, bytes(i.x), i.final))).toBe(v.expected.result)
  },
  'lrp-lricb': (v) => {
    const i = v.input as { key: string; counter: string; plaintext: string; pad: boolean; updatedKey: number }
    const params = { key: i.key, counter: bytes(i.counter), pad: i.pad, updatedKey: i.updatedKey }
    const ciphertext = lricbEncrypt(params, bytes(i.plaintext))
    expect(toHex(ciphertext)).toBe(v.expected.ciphertext)
    expect(toHex(lricbDecrypt(params, ciphertext))).toBe(i.plaintext)
  },
  'lrp-cmac': (v) => {
    const i = v.input as { key: string; message: string }
    expect(toHex(lrpCmac(i.key, bytes(i.message)))).toBe(v.expected.cmac)
    if (v.expected.K2 !== undefined) expect(toHex(lrpCmacSubkeys(i.key).K2)).toBe(v.expected.K2)
  },
  'kdf-an10922-aes128': (v) => {
    const i = v.input as { masterKey: string; m: string }
    expect(toHex(diversifyAn10922({ masterKey: i.masterKey, m: i.m }))).toBe(v.expected.diversifiedKey)
  },
  'kdf-sdm-backend': (v) => {
    const i = v.input as { scheme: string; masterKey: string; uid: string; keyNo: number }
    expect(i.scheme).toBe('sdm-backend-standard')
    expect(toHex(deriveSdmBackendTagKey({ masterKey: i.masterKey, uid: i.uid, keyNo: i.keyNo }))).toBe(v.expected.key)
  },
  'kdf-boltcard': (v) => {
    const i = v.input as { issuerKey: string; uid: string; version: number }
    const keys = deriveBoltCardKeys(i)
    expect(Object.fromEntries(Object.entries(keys).map(([k, b]) => [k, toHex(b)]))).toEqual(v.expected)
  },
  'ascii-mirror': (v) => {
    const i = v.input as { uid?: string; counter?: number }
    const ascii = v.expected.ascii as string
    expect(formatNtag21xMirror(i)).toBe(ascii)
    expect(parseNtag21xMirror(ascii)).toEqual({ uid: i.uid ?? null, counter: i.counter ?? null, authenticated: false })
  },
}

describe('published vectors (test/vectors/sun-public.json)', () => {
  test('the file holds the 29 published vectors, each of a known kind', () => {
    expect(vectors).toHaveLength(29)
    expect(new Set(vectors.map((v) => v.id)).size).toBe(vectors.length)
    for (const v of vectors) expect(Object.keys(handlers), v.id).toContain(v.kind)
  })

  test.each(vectors)('$kind $id', (v) => {
    const handler = handlers[v.kind]
    if (!handler) throw new Error(`no handler for kind ${v.kind}`)
    handler(v)
  })
})
