import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

/**
 * Test files run once more on PostgreSQL (the `postgres` project, TAPGATE_TEST_BACKEND=postgres): their
 * gateways come from createBackendGateway (test/helpers/gateway.ts). One body for both engines, so a
 * test only PostgreSQL fails is a bug of its repositories, not of the test.
 */
const bothEngines = [
  'test/routes/refs.test.ts',
  'test/routes/otps.test.ts',
  'test/routes/phygitals.test.ts',
  'test/routes/events.test.ts',
  'test/routes/crossTeam.test.ts',
  'test/routes/tap.test.ts',
  'test/routes/chipGroups.test.ts',
  'test/routes/stationTaps.test.ts',
  'test/taps/counterRules.test.ts',
  'test/stations/revokeStation.test.ts',
  'test/taps/fuzz.test.ts',
  'test/routes/exactInputs.test.ts',
  'test/routes/queryOrBody.test.ts',
  'test/routes/metadataDepth.test.ts',
  'test/routes/meta.test.ts',
  'test/routes/errorStatuses.test.ts',
  'test/routes/contract.test.ts',
  'test/concurrency.test.ts',
  'test/kiosk-gateway/checkIn.test.ts',
  'test/kiosk-gateway/checkInChain.test.ts',
  'test/kiosk-gateway/kioskStaff.test.ts',
  'test/kiosk-gateway/kioskSocket.test.ts',
  'test/kiosk-gateway/kioskTokens.test.ts',
  'test/kiosk-gateway/pinLock.test.ts',
  'test/claims/claimResign.test.ts',
  'test/claims/staleClaim.test.ts',
  'test/tokens/tokenMoves.test.ts',
  'test/claims/claimStation.test.ts',
  'test/otps/tokenOtp.test.ts',
  'test/taps/replay.test.ts',
  'test/profiles/chipProfiles.test.ts',
  'test/routes/claimLinksRateLimit.test.ts',
  'test/importer.test.ts',
  'test/attendees/importAttendees.test.ts',
  'test/attendees/exportAttendees.test.ts',
  'test/attendees/attendeesCli.test.ts',
  'test/routes/attendees.test.ts',
  'test/door/doorTaps.test.ts',
  'test/door/bindDoor.test.ts',
  'test/door/unpaidGuests.test.ts',
  'test/door/scannedTickets.test.ts',
  'test/attendees/unpaidCli.test.ts',
  'test/attendees/translatedHeaders.test.ts',
  'test/attendees/guestFileTypes.test.ts',
  'test/attendees/namelessGuests.test.ts',
  'test/attendees/guestFormatsCli.test.ts',
]

export default defineConfig({
  test: {
    root: fileURLToPath(new URL('..', import.meta.url)),
    // Forks, not threads: better-sqlite3 and spawned servers are per-process resources.
    pool: 'forks',
    // One PostgreSQL server per run, started at the first test file that asks for a database.
    globalSetup: ['test/helpers/postgresGlobalSetup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // expect.poll waits for another process or page (a kiosk screen, a server's log): 1 s, the default,
    // was once not enough on a loaded 2-core CI machine (staffPage, a WebSocket hop between two pages).
    expect: { poll: { timeout: 5_000 } },
    projects: [
      { extends: true, test: { name: 'sqlite', include: ['test/**/*.test.ts'] } },
      { extends: true, test: { name: 'postgres', include: bothEngines, env: { TAPGATE_TEST_BACKEND: 'postgres' } } },
    ],
  },
})
