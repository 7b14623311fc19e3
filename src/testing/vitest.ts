import { test as base } from 'vitest'
import { startGateway, type StartGatewayOptions, type TestGateway } from './startGateway.js'

/**
 * vitest's `test` with a `gateway` fixture: one gateway per worker (started at its first use, stopped
 * when the worker ends), reset before each test that uses it, so every test starts from the seed and
 * passes alone or in any order. `gatewayOptions` sets what startGateway is given; override it with
 * `test.override({ gatewayOptions: … })` at the top of a file.
 *
 * @example
 * import { test, expect } from 'tapgate/testing/vitest'
 * test('a first tap is valid', async ({ gateway }) => {
 *   const chip = await gateway.chip()
 *   expect((await chip.tap()).verdict.accepted).toBe(true)
 * })
 */
export const test = base.extend<{ $test: { gateway: TestGateway }; $worker: { gatewayOptions: StartGatewayOptions; workerGateway: TestGateway } }>({
  // An empty pattern: vitest reads what a fixture depends on from its first parameter.
  gatewayOptions: [async ({}, use) => use({}), { scope: 'worker' }],
  workerGateway: [
    async ({ gatewayOptions }, use) => {
      const gateway = await startGateway(gatewayOptions)
      try {
        await use(gateway)
      } finally {
        await gateway.stop()
      }
    },
    { scope: 'worker' },
  ],
  gateway: async ({ workerGateway }, use) => {
    await workerGateway.reset()
    await use(workerGateway)
  },
})

export { expect, describe } from 'vitest'
export type { TestGateway, StartGatewayOptions }
