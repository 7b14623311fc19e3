import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { createConsoleProvisioning } from '../console/consoleProvisioning.js'
import { ConsoleProvisioningResponse, ConsoleProvisioningRunResponse, ConsoleStartProvisioningBody } from '../schemas/consoleProvisioning.js'

// Console-only: hidden from the OpenAPI document (docs/decisions.md, issue 28), as the console's other routes.
const hide = true

/**
 * The console's provisioning run on this gateway's own readers (issue 28, part 3): registered inside
 * routes/console.ts's plugin, so its session guard and Origin check run first and the session names
 * the team. One run per gateway (this app's), ended when the app closes.
 */
const consoleProvisioning: FastifyPluginAsyncZod = async (app) => {
  const { store, secret, localReaders, now } = app.services
  const desk = createConsoleProvisioning({
    store,
    secret,
    localReaders,
    now,
    log: { info: (line) => app.log.info({ console: 'provisioning' }, line), error: (line) => app.log.error({ console: 'provisioning' }, line) },
  })
  // The card being written finishes before the station closes its readers (server.ts closes the station first; it waits for it too).
  app.addHook('onClose', () => desk.close())

  app.get('/console/api/provisioning', { schema: { hide, response: { 200: ConsoleProvisioningResponse } } }, async (request) => ({
    success: true as const,
    ...desk.get({ teamId: request.consoleSession!.team.id }),
  }))

  app.post('/console/api/provisioning', { schema: { hide, body: ConsoleStartProvisioningBody, response: { 201: ConsoleProvisioningRunResponse } } }, async (request, reply) =>
    reply.code(201).send({ success: true as const, run: await desk.start({ teamId: request.consoleSession!.team.id, ...request.body }) }),
  )

  app.delete('/console/api/provisioning', { schema: { hide, response: { 200: ConsoleProvisioningRunResponse } } }, async (request) => ({
    success: true as const,
    run: await desk.stop({ teamId: request.consoleSession!.team.id }),
  }))
}

export default consoleProvisioning
