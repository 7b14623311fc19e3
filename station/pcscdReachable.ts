import fs from 'node:fs'
import net from 'node:net'

export const PCSC_INSTALL_HINT = 'install and start pcscd (`apt-get install pcscd libpcsclite-dev`, `systemctl start pcscd`), then `npm install` (it builds nfc-pcsc)'

/**
 * Whether pcscd answers on its socket, checked BEFORE nfc-pcsc is constructed:
 * @pokusew/pcsclite (under nfc-pcsc) loops on SCardEstablishContext while the
 * daemon is missing, which blocks the event loop for good (a gateway that never
 * finishes starting). Linux (pcsc-lite) only: elsewhere PC/SC is a system
 * service and this says yes.
 *
 * The socket is $PCSCLITE_CSOCK_NAME, else pcsc-lite's /run/pcscd/pcscd.comm.
 *
 * @example
 * const pcscd = await pcscdReachable()
 * if (!pcscd.ok) console.log(`station off: ${pcscd.why}`)
 */
export async function pcscdReachable(env: NodeJS.ProcessEnv = process.env, timeoutMs = 1000): Promise<{ ok: true } | { ok: false; why: string }> {
  if (process.platform === 'darwin' || process.platform === 'win32') return { ok: true }
  const candidates = env.PCSCLITE_CSOCK_NAME ? [env.PCSCLITE_CSOCK_NAME] : ['/run/pcscd/pcscd.comm', '/var/run/pcscd/pcscd.comm']
  const socketPath = candidates.find((p) => fs.existsSync(p))
  if (!socketPath) return { ok: false, why: `pcscd is not running (no ${candidates[0]}): ${PCSC_INSTALL_HINT}` }
  return new Promise((resolve) => {
    const socket = net.connect({ path: socketPath })
    const done = (result: { ok: true } | { ok: false; why: string }) => {
      clearTimeout(timer)
      socket.destroy()
      resolve(result)
    }
    const timer = setTimeout(() => done({ ok: false, why: `pcscd does not answer on ${socketPath}: ${PCSC_INSTALL_HINT}` }), timeoutMs)
    socket.once('connect', () => done({ ok: true }))
    socket.once('error', (error: NodeJS.ErrnoException) =>
      done({ ok: false, why: `pcscd is not running (${error.code ?? error.message} on ${socketPath}): ${PCSC_INSTALL_HINT}` }),
    )
  })
}
