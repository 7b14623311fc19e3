/**
 * `tapgate/testing`: a tapgate gateway for an app's tests, in the test's own process: chips that
 * write valid (and, on purpose, replayed or forged) tap URLs, a clock, reset and snapshots of the
 * store and the chain together, and a reaper so nothing outlives the test runner. See README
 * "Testing your app against tapgate".
 */
export { startGateway, type GatewaySnapshot, type StartGatewayOptions, type TestGateway } from './startGateway.js'
export type { ChipScheme, TapResult, TapVerdict, TestChip, TokenRef } from './testChip.js'
export type { TestClock } from './testClock.js'
export { BLOCK_SECONDS } from './testClock.js'
export type { TapRecord } from './tapRecords.js'
export type { ReplayedTap } from './replayFixture.js'
export { sweepTempDirs } from './tempDirs.js'
