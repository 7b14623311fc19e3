/**
 * Which parts of the PC/SC stack this machine has. A newcomer's machine may lack all of it
 * (nfc-pcsc is optional and builds only against libpcsclite-dev); CI installs it, and there a
 * missing part must fail the run rather than skip (CI=true).
 */
import fs from 'node:fs'
import { expect, test } from 'vitest'
import { PCSCD_BINARY, PCSCD_SOCKET } from '../../station/pcsc/pcscdProcess.js'
import { pcscdReachable } from '../../station/pcscdReachable.js'

/** Under CI the PC/SC tests must run: a missing part fails them instead of skipping them. */
export const CI = process.env.CI === 'true'

/** Whether nfc-pcsc (and with it libpcsclite) loads here: null, or why not, with what to install. */
export async function nfcPcscProblem(): Promise<string | null> {
  // A variable specifier: nfc-pcsc is optional and untyped.
  const specifier = 'nfc-pcsc'
  try {
    await import(specifier)
    return null
  } catch (error) {
    return `nfc-pcsc (${(error as Error).message.split('\n')[0]}): apt-get install pcscd libpcsclite-dev, then npm install`
  }
}

/**
 * What the files that provision virtual cards through pcscd (vsmartcard-vpcd) lack here: nothing, or
 * each missing part with what to install. pcscd need not run yet when we are root: the file starts it.
 */
export async function missingForVirtualCards(): Promise<string[]> {
  const running = (await pcscdReachable({ PCSCLITE_CSOCK_NAME: PCSCD_SOCKET })).ok
  const isRoot = process.getuid?.() === 0
  return [
    PCSCD_BINARY ? null : 'pcscd (apt-get install pcscd)',
    fs.existsSync('/etc/reader.conf.d/vpcd') ? null : 'vsmartcard-vpcd (apt-get install vsmartcard-vpcd)',
    await nfcPcscProblem(),
    running || isRoot ? null : 'a running pcscd (or root, to start one)',
  ].filter((m) => m !== null)
}

/** The file's first test: under CI=true a missing part fails the run; elsewhere it says what it skips. */
export function requireUnderCi(missing: readonly string[], what: string): void {
  test(`the PC/SC stack for ${what} is available (required under CI=true)`, () => {
    if (!CI && missing.length > 0) {
      console.warn(`skipping ${what}: missing ${missing.join('; ')}`)
      return
    }
    expect(missing).toEqual([])
  })
}
