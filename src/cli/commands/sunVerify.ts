import {
  createSunVerifier,
  extractSunFields,
  type ExtractedPlainMirror,
  type ExtractedSunMessage,
  type SunMode,
  type SunReason,
} from '../../sun/index.js'
import { UsageError, type Flags } from '../usage.js'
import { printJson, text } from './context.js'
import { layoutFrom, modeFlag } from './layoutFlags.js'

/** What `tapgate sun verify` prints: one JSON object, the same keys every time. */
export type SunVerifyReport = {
  valid: boolean
  /** True only when a MAC proved the fields; an accepted NTAG 21x mirror is valid but not authenticated. */
  authenticated: boolean
  /** Null when unknown. Shown for a MAC mismatch too when the PICCData decrypted: then it is read, not proven. */
  uid: string | null
  counter: number | null
  /** Decrypted file data: text when every byte is printable ASCII (0x20–0x7E), else uppercase hex; see fileDataEncoding. */
  fileData: string | null
  fileDataEncoding: 'ascii' | 'hex' | null
  /** The mode verified, or for a rejection the mode tried (null when the fields could not be found). */
  mode: SunMode | null
  /** The stable reason code; `no_mac` for an NTAG 21x mirror without --ntag21x. Null when valid. */
  reason: SunReason | 'no_mac' | null
  /** The hint for the operator. Never contains key material. */
  detail: string | null
}

export type SunVerifyOutcome = { report: SunVerifyReport; exitCode: 0 | 1 }


function report(fields: Partial<SunVerifyReport> & { valid: boolean }): SunVerifyReport {
  return {
    valid: fields.valid,
    authenticated: fields.authenticated ?? false,
    uid: fields.uid ?? null,
    counter: fields.counter ?? null,
    fileData: fields.fileData ?? null,
    fileDataEncoding: fields.fileDataEncoding ?? null,
    mode: fields.mode ?? null,
    reason: fields.reason ?? null,
    detail: fields.detail ?? null,
  }
}

/** A key flag, checked without ever echoing it; whether the URL needs it is decided once its fields are found. */
function keyFlag(flags: Flags, name: string): string | undefined {
  const raw = text(flags, name)
  if (raw === undefined || raw === '') return undefined
  if (!/^[0-9A-Fa-f]{32}$/.test(raw)) throw new UsageError(`--${name} must be 32 hex characters (an AES-128 key), got ${raw.length} characters`)
  return raw
}

function decodeFileData(hex: string | null): Pick<SunVerifyReport, 'fileData' | 'fileDataEncoding'> {
  if (hex === null) return { fileData: null, fileDataEncoding: null }
  const bytes = Buffer.from(hex, 'hex')
  return bytes.every((b) => b >= 0x20 && b <= 0x7e) ? { fileData: bytes.toString('latin1'), fileDataEncoding: 'ascii' } : { fileData: hex, fileDataEncoding: 'hex' }
}

function verifySun(f: ExtractedSunMessage, keys: { metaKey: string; fileKey: string }, pinned: SunMode | undefined): SunVerifyOutcome {
  const verifier = createSunVerifier({ ...keys, mode: pinned ?? 'auto' })
  const r = verifier.verify(f)
  if (r.valid) return { report: report({ ...r, authenticated: true, ...decodeFileData(r.fileData) }), exitCode: 0 }
  let read: { uid: string | null; counter: number | null } = { uid: null, counter: null }
  if (r.reason === 'mac_mismatch') {
    // The PICCData decrypted, so the meta key is right: showing which chip this is narrows the search.
    const p = verifier.readPiccData(f.piccData)
    if (p.ok) read = { uid: p.uid, counter: p.counter }
  }
  const mode = pinned ?? (f.piccData.length === 48 ? 'lrp' : 'aes')
  return { report: report({ valid: false, ...read, mode, reason: r.reason, detail: r.detail }), exitCode: 1 }
}

function verifyPlain(f: ExtractedPlainMirror, keys: { metaKey: string | undefined; fileKey: string }, pinned: SunMode | undefined): SunVerifyOutcome {
  const mode: SunMode = pinned ?? 'aes'
  const verifies = (fileKey: string, m: SunMode) => createSunVerifier({ fileKey, mode: m }).verifyPlainMirror(f).valid
  const r = createSunVerifier({ fileKey: keys.fileKey, mode }).verifyPlainMirror(f)
  if (r.valid) return { report: report({ ...r, authenticated: true }), exitCode: 0 }
  const read = { uid: f.uid, counter: Number.parseInt(f.ctr, 16) }
  let { reason, detail }: { reason: SunReason; detail: string } = r
  if (reason === 'mac_mismatch') {
    // Failure path only: a plain mirror has no PICCData to tell a swapped key or the other mode apart, so try them.
    const other: SunMode = mode === 'aes' ? 'lrp' : 'aes'
    if (keys.metaKey !== undefined && keys.metaKey !== keys.fileKey && verifies(keys.metaKey, mode))
      detail = 'the MAC verifies under the --meta-key: the SDM meta read key and file read key are swapped'
    else if (verifies(keys.fileKey, other)) {
      detail = `the MAC verifies in ${other.toUpperCase()} mode: the chip uses ${other.toUpperCase()}, pass --mode ${other}`
      if (pinned) reason = 'mode_mismatch'
    }
  }
  return { report: report({ valid: false, ...read, mode, reason, detail }), exitCode: 1 }
}

/**
 * Checks one tap URL against SUN keys without touching the database: the operator's
 * tool when a newly provisioned chip does not verify.
 *
 * @throws UsageError for a malformed command line (the CLI exits 2)
 * @example
 * sunVerify(['verify', 'https://ntag.nxp.com/424?e=EF96…&c=94EE…'], { 'meta-key': K1, 'file-key': K2 })
 * // { report: { valid: true, authenticated: true, uid: '04DE5F1EACC040', counter: 61, … }, exitCode: 0 }
 */
export function sunVerify(positionals: string[], flags: Flags): SunVerifyOutcome {
  // Positionals are never echoed: a key pasted in the wrong place must not end up in the terminal log.
  if (positionals[0] !== 'verify') throw new UsageError('expected `sun verify URL`')
  if (positionals.length !== 2) throw new UsageError(`expected one URL after \`sun verify\`, got ${positionals.length - 1} arguments`)
  const url = positionals[1]!
  const acceptMirror = flags.ntag21x === true
  const metaKey = keyFlag(flags, 'meta-key')
  const fileKey = keyFlag(flags, 'file-key')
  const pinned = modeFlag(flags)
  const layout = layoutFrom(flags, pinned)

  const f = extractSunFields(url, layout)
  if (!f.ok) return { report: report({ valid: false, mode: pinned, reason: f.reason, detail: f.detail }), exitCode: 1 }
  if (f.kind === 'ntag21x') {
    const read = { uid: f.uid, counter: f.counter }
    if (acceptMirror)
      return {
        report: report({ valid: true, ...read, detail: 'an NTAG 21x mirror carries no MAC: anyone can forge it, so treat the tap as unauthenticated' }),
        exitCode: 0,
      }
    return {
      report: report({
        valid: false,
        ...read,
        reason: 'no_mac',
        detail: 'an NTAG 21x mirror (uid/ctr without cmac) has no MAC to verify: pass --ntag21x to accept it as unauthenticated',
      }),
      exitCode: 1,
    }
  }
  // Only the keys this URL needs: a plain mirror's MAC involves the file key alone (it has no PICCData to decrypt).
  if (f.kind === 'plain_mirror') {
    if (fileKey === undefined) throw new UsageError('this URL is a plain SDM mirror (uid, ctr, cmac): give --file-key (32 hex characters)')
    return verifyPlain(f, { metaKey, fileKey }, pinned)
  }
  if (metaKey === undefined) throw new UsageError('--meta-key is required (32 hex characters)')
  if (fileKey === undefined) throw new UsageError('--file-key is required (32 hex characters)')
  return verifySun(f, { metaKey, fileKey }, pinned)
}

export async function run(positionals: string[], flags: Flags) {
  const { report: result, exitCode } = sunVerify(positionals, flags)
  printJson(result)
  if (exitCode !== 0) process.exitCode = exitCode
}
