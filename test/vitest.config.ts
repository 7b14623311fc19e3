import os from 'node:os'
import { fileURLToPath } from 'node:url'
import { configDefaults, defineConfig } from 'vitest/config'

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
  'test/routes/hostedEndpoints.test.ts',
  'test/routes/hostedCompat.test.ts',
  'test/routes/poapMint.test.ts',
  'test/routes/contractCompat.test.ts',
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
  'test/console/consoleApi.test.ts',
  'test/console/consoleEvents.test.ts',
  'test/console/consoleProducts.test.ts',
]

/**
 * Files that run alone, after the others: the PC/SC files (one pcscd, two vpcd slots; a station that
 * opens every reader reads the other file's slot, and a CLI's exit after Ctrl-C is bounded in time: the
 * provisioning file's once missed its 10 s beside another file) and those that measure time (a p99, a
 * takeover or a close within a bound, a screen within a second), which another file's load on the same
 * cores would turn into flakes.
 */
const alone = [
  'test/station/pcscE2e.test.ts',
  'test/station/inProcessStation.test.ts',
  'test/station/vpcd.test.ts',
  'test/provisioning/pcscProvision.test.ts',
  'test/console/consoleProvisioning.test.ts',
  'test/kiosk/consoleProvisioningPage.test.ts',
  'test/attendees/bigGuestList.test.ts',
  'test/postgres/twoGateways.test.ts',
  'test/postgres/nginx.test.ts',
  'test/postgres/outage.test.ts',
  'test/kiosk/kioskPage.test.ts',
  'test/kiosk/kioskStation.test.ts',
  'test/kiosk/claimKiosk.test.ts',
  'test/chain/leaseTakeover.test.ts',
  'test/chain/relayerLease.test.ts',
  'test/chain/idleBlocks.test.ts',
  'test/routes/slowClients.test.ts',
  'test/tokens/tokenMoves.test.ts',
  'test/media/mediaRoute.test.ts',
]

/**
 * The rest run two at a time even on two cores (vitest's default there is one): most of their time is
 * spent waiting on a spawned gateway, the chain, a browser or npm, and side by side the run takes
 * about three quarters of the time (docs/decisions.md, "Test run time").
 */
const together = Math.max(2, os.availableParallelism() - 1)
const postgres = { TAPGATE_TEST_BACKEND: 'postgres' }

export default defineConfig({
  test: {
    root: fileURLToPath(new URL('..', import.meta.url)),
    // Forks, not threads: better-sqlite3 and spawned servers are per-process resources.
    pool: 'forks',
    // One PostgreSQL server per run, started at the first test file that asks for a database.
    globalSetup: ['test/helpers/postgresGlobalSetup.ts', 'test/helpers/packedAppGlobalSetup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // expect.poll waits for another process or page (a kiosk screen, a server's log): 1 s, the default,
    // was once not enough on a loaded 2-core CI machine (staffPage, a WebSocket hop between two pages).
    expect: { poll: { timeout: 5_000 } },
    // maxWorkers 1 puts a project's files in vitest's sequential group, which runs after the others.
    projects: [
      { extends: true, test: { name: 'sqlite', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, ...alone], maxWorkers: together } },
      { extends: true, test: { name: 'postgres', include: bothEngines.filter((f) => !alone.includes(f)), env: postgres, maxWorkers: together } },
      { extends: true, test: { name: 'sqlite-alone', include: alone, maxWorkers: 1 } },
      { extends: true, test: { name: 'postgres-alone', include: bothEngines.filter((f) => alone.includes(f)), env: postgres, maxWorkers: 1 } },
    ],
  },
})
