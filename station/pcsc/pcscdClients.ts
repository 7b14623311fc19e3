import { execFileSync } from 'node:child_process'

/**
 * The processes connected to pcscd's socket, other than `except`, from
 * `ss -xpn` (pcscd's side of each connection names the client's socket
 * inode); null when `ss` is not installed. Another client's APDUs to a card
 * interleave with ours, and a pcscd stopped under a client breaks it: tests
 * and the bench check this before they start or stop a pcscd.
 */
export function pcscdClients(except: number[], socket = '/run/pcscd/pcscd.comm'): number[] | null {
  let out: string
  try {
    out = execFileSync('ss', ['-xpn'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
  } catch {
    return null
  }
  const owner = new Map<string, number>()
  const peers: string[] = []
  for (const line of out.split('\n')) {
    const m = /^\S+\s+\S+\s+\d+\s+\d+\s+(\S+)\s+(\d+)\s+\S+\s+(\d+)(?:.*pid=(\d+))?/.exec(line)
    if (!m) continue
    if (m[4]) owner.set(m[2]!, Number(m[4]))
    if (m[1] === socket) peers.push(m[3]!)
  }
  return [...new Set(peers.map((inode) => owner.get(inode)).filter((pid): pid is number => pid !== undefined && !except.includes(pid)))]
}
