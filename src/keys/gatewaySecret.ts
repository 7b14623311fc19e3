import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'

export const SECRET_FILE = 'secret.key'

/**
 * The 32-byte gateway secret that seals chip keys at rest. From config
 * (64 hex characters) when given, else `<dataDir>/secret.key`, created on first
 * use with mode 0600. Creation uses O_EXCL, so two processes starting on a new
 * data dir end up with the same secret.
 *
 * @example
 * const secret = loadGatewaySecret({ dataDir: './data' })
 */
export function loadGatewaySecret({ dataDir, secretHex }: { dataDir: string; secretHex?: string }): Buffer {
  if (secretHex !== undefined) return parseSecret(secretHex, 'the configured secret')
  const file = path.join(dataDir, SECRET_FILE)
  try {
    fs.writeFileSync(file, `${crypto.randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  }
  return parseSecret(fs.readFileSync(file, 'utf8').trim(), file)
}

function parseSecret(hex: string, where: string): Buffer {
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new Error(`${where} must be 64 hex characters (32 bytes)`)
  return Buffer.from(hex, 'hex')
}
