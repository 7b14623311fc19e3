/*
 * Issue 24, "the check-in tap's deps touches fewer rooms": what the station tap path (POST
 * /station/taps, the station socket and the in-process station all end in submitStationTap, whose
 * consequence at a station with a row is recordAcceptedTap) is handed, and which folders its two
 * modules reach into. Before the issue its deps also carried the feed hub and the relayer, to
 * announce its own commits, and its consequence lived in kiosk/ (the claims <-> kiosk <-> stations
 * cycle). Now the store announces commits (Store.listen), so neither comes back silently: growing
 * this list is a decision, made here.
 */
import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { expect, expectTypeOf, test } from 'vitest'
import type { recordAcceptedTap } from '../../src/stations/recordAcceptedTap.js'
import type { SubmitStationTapDeps } from '../../src/stations/submitStationTap.js'
import { repoRoot } from '../helpers/processes.js'

const TAP_PATH = ['src/stations/submitStationTap.ts', 'src/stations/recordAcceptedTap.ts']

test("the station tap's deps: the store, the keyring, the clock, the log, the signers and the media cache, nothing to announce with", () => {
  // Checked by tsc (npm test runs it first): a member added to either type fails the type check here.
  expectTypeOf<keyof SubmitStationTapDeps>().toEqualTypeOf<'store' | 'keyring' | 'now' | 'log' | 'chains' | 'config' | 'media'>()
  expectTypeOf<keyof Parameters<typeof recordAcceptedTap>[1]>().toEqualTypeOf<'chains' | 'config' | 'now'>()
})

type Cruise = { modules: Array<{ source: string; dependencies: Array<{ resolved: string }> }> }

test('the folders (and root modules) of src/ that the station tap path imports, its own left out', () => {
  const out = execFileSync(path.join(repoRoot, 'node_modules/.bin/depcruise'), [...TAP_PATH, '--config', '.dependency-cruiser.cjs', '--output-type', 'json', '--max-depth', '1'], {
    cwd: repoRoot,
    maxBuffer: 64 * 1024 * 1024,
  })
  const room = (file: string) => /^(src\/[^/]+\/)/.exec(file)?.[1] ?? file
  const rooms = new Set<string>()
  for (const m of (JSON.parse(out.toString()) as Cruise).modules)
    if (TAP_PATH.includes(m.source)) for (const d of m.dependencies) if (d.resolved.startsWith('src/') && room(d.resolved) !== 'src/stations/') rooms.add(room(d.resolved))
  // Before issue 24 also src/kiosk/ (the consequence's home) and src/relayer/ (to wake it); src/feed/
  // was there for the hub too, and stays for watchTx (a queued mint's watcher).
  expect([...rooms].sort()).toEqual([
    'src/chain/',
    'src/claims/',
    'src/config.ts',
    'src/db/',
    'src/door/',
    'src/errors.ts',
    'src/feed/',
    'src/media/',
    'src/taps/',
    'src/wire/',
  ])
})
