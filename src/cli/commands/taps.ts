import { NotFoundError } from '../../errors.js'
import type { TapLogRow } from '../../db/tapLog.js'
import { COUNTER_LIMIT } from '../../taps/recordTap.js'
import { ChipUid } from '../../schemas/common.js'
import { UsageError, type Flags } from '../usage.js'
import { noPositionals, onePositional, printJson, required, teamIdOf, text, withStore } from './context.js'

/** One tap log row as staff see it: no ref id (a ref is a bearer credential until it is used). */
export type TapListEntry = {
  id: number
  at: string
  source: string
  uid: string | null
  accepted: boolean
  authenticated: boolean
  reason: string
  counter: number | null
  detail: string | null
}

const entry = (r: TapLogRow): TapListEntry => ({
  id: r.id,
  at: new Date(r.at).toISOString(),
  source: r.source,
  uid: r.chipUid,
  accepted: r.accepted === 1,
  authenticated: r.authenticated === 1,
  reason: r.reason,
  counter: r.counter,
  detail: r.detail,
})

function line(e: TapListEntry): string {
  const verdict = e.accepted ? 'accepted' : `refused ${e.reason}`
  const counter = e.counter === null ? '' : `ctr ${e.counter}`
  return [e.at, e.source.padEnd(8), (e.uid ?? '-').padEnd(14), verdict.padEnd(24), counter.padEnd(12), e.accepted ? '' : (e.detail ?? '')].join('  ').trimEnd()
}

function limitFlag(flags: Flags): number {
  const raw = text(flags, 'limit')
  if (raw === undefined) return 50
  if (!/^\d{1,5}$/.test(raw) || Number(raw) < 1 || Number(raw) > 10_000) throw new UsageError('--limit takes a number 1…10000')
  return Number(raw)
}

function counterFlag(flags: Flags): number {
  const raw = required(flags, 'counter')
  // COUNTER_LIMIT itself is what a chip can never go past: a chip set there could never tap again.
  if (!/^\d{1,8}$/.test(raw) || Number(raw) >= COUNTER_LIMIT) throw new UsageError(`--counter takes the last accepted counter, 0…${COUNTER_LIMIT - 1}`)
  return Number(raw)
}

/**
 * `tapgate taps list`: the tap log, read-only, newest first, so staff can see
 * why taps were refused (the public tap page does not say). `tapgate taps
 * set-counter`: moves a chip's last accepted counter, e.g. past a refused
 * counter_jump once staff have checked the chip is genuine.
 */
export async function run(positionals: string[], flags: Flags) {
  const action = positionals[0]
  if (action === 'list') {
    noPositionals(positionals.slice(1))
    const teamId = text(flags, 'team') === undefined ? null : teamIdOf(flags)
    const limit = limitFlag(flags)
    await withStore(flags, async (store) => {
      const rows = (await store.tapLog.list({ teamId, refusedOnly: flags.refused === true, limit })).map(entry)
      if (flags.json) printJson(rows)
      else for (const row of rows) console.log(line(row))
    })
    return
  }
  if (action === 'set-counter') {
    onePositional(positionals, 'action')
    const parsed = ChipUid.safeParse(required(flags, 'uid'))
    if (!parsed.success) throw new UsageError(`--uid: ${parsed.error.issues[0]!.message}`)
    const teamId = teamIdOf(flags)
    const counter = counterFlag(flags)
    await withStore(flags, async (store) => {
      const result = await store.tx(async (tx) => {
        const chip = await tx.chips.get(parsed.data)
        // Another team's chip answers like a missing one.
        if (!chip || chip.teamId !== teamId) throw new NotFoundError('chip_not_found', `No chip ${parsed.data} in team ${teamId}`)
        await tx.chips.setLastCounter(chip.uid, counter)
        return { uid: chip.uid, previousCounter: chip.lastCounter, counter }
      })
      printJson(result)
    })
    return
  }
  throw new UsageError(action === undefined ? 'expected an action (list, set-counter)' : `unknown action "taps ${action}" (list, set-counter)`)
}
