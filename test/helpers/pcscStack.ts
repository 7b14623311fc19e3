/**
 * Which parts of the PC/SC stack this machine has. A newcomer's machine may lack all of it
 * (nfc-pcsc is optional and builds only against libpcsclite-dev); CI installs it, and there a
 * missing part must fail the run rather than skip (CI=true).
 */

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
