import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'

export const SECRET_FILE = 'secret.key'

/**
 * The 32-byte gateway secret that seals chip keys at rest. From config
 * (64 hex characters) when given, else `<dataDir>/secret.key`, created on first
 * use with mode 0600. Creation is atomic (a private file linked into place), so
 * two processes starting on a new data dir end up with the same secret.
 *
 * @example
 * const secret = loadGatewaySecret({ dataDir: './data' })
 */
export function loadGatewaySecret({ dataDir, secretHex }: { dataDir: string; secretHex?: string }): Buffer {
  if (secretHex !== undefined) return parseSecret(secretHex, 'the configured secret')
  const file = path.join(dataDir, SECRET_FILE)
  if (!fs.existsSync(file)) {
    // Written whole under a private name, then linked into place: link() fails with EEXIST when another
    // process got there first, and nobody ever reads a half-written secret.key.
    const text = `${crypto.randomBytes(32).toString('hex')}\n`
    const temp = path.join(dataDir, `.${SECRET_FILE}.${process.pid}.${crypto.randomBytes(6).toString('hex')}`)
    fs.writeFileSync(temp, text, { mode: 0o600, flag: 'wx' })
    try {
      fs.linkSync(temp, file)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      // A file system without hard links: exclusive create, the best it offers.
      if (code === 'EPERM' || code === 'ENOTSUP' || code === 'ENOSYS') createExclusive(file, text)
      else if (code !== 'EEXIST') throw error
    } finally {
      fs.unlinkSync(temp)
    }
  }
  return parseSecret(fs.readFileSync(file, 'utf8').trim(), file)
}

function createExclusive(file: string, text: string): void {
  try {
    fs.writeFileSync(file, text, { mode: 0o600, flag: 'wx' })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  }
}

function parseSecret(hex: string, where: string): Buffer {
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new Error(`${where} must be 64 hex characters (32 bytes)`)
  return Buffer.from(hex, 'hex')
}
