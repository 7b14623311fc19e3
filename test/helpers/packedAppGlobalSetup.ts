/* vitest globalSetup: the run's folder for test/helpers/packedApp.ts (made empty, removed at the end). */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { TestProject } from 'vitest/node'

export function setup(project: TestProject): () => void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tapgate-packed-'))
  project.provide('packedAppDir', dir)
  return () => fs.rmSync(dir, { recursive: true, force: true })
}
