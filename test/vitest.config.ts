import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    root: fileURLToPath(new URL('..', import.meta.url)),
    include: ['test/**/*.test.ts'],
    // Forks, not threads: better-sqlite3 and spawned servers are per-process resources.
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
})
