import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    root: fileURLToPath(new URL('..', import.meta.url)),
    include: ['test/**/*.test.ts'],
    // Forks, not threads: better-sqlite3 and spawned servers are per-process resources.
    pool: 'forks',
    // One PostgreSQL server per run, started at the first test file that asks for a database.
    globalSetup: ['test/helpers/postgresGlobalSetup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // expect.poll waits for another process or page (a kiosk screen, a server's log): 1 s, the default,
    // was once not enough on a loaded 2-core CI machine (staffPage, a WebSocket hop between two pages).
    expect: { poll: { timeout: 5_000 } },
  },
})
