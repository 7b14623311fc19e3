import type { FastifyRequest } from 'fastify'
import { attendeesDownload } from '../attendees/exportAttendees.js'
import { attendeePage } from '../attendees/listAttendees.js'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { consoleApiKeys, createConsoleApiKey, revokeConsoleApiKey } from '../console/consoleApiKeys.js'
import { consoleOverview } from '../console/consoleOverview.js'
import { endConsoleSession, signInWithLink } from '../console/consoleSessions.js'
import { consoleEventNumbers, consoleEvents, createConsoleEvent, setConsoleEventDoor } from '../console/consoleEvents.js'
import {
  consoleKioskTokens,
  consoleStations,
  createConsoleKioskUrl,
  createConsoleStation,
  revokeConsoleKioskToken,
  revokeConsoleStation,
  setConsoleStaffPin,
  updateConsoleStation,
} from '../console/consoleStations.js'
import { consoleTaps } from '../console/consoleTaps.js'
import consoleSession, { setConsoleCookie } from '../plugins/consoleSession.js'
import {
  ConsoleApiKeyParams,
  ConsoleApiKeysResponse,
  ConsoleCreateApiKeyBody,
  ConsoleCreateApiKeyResponse,
  ConsoleCreateEventBody,
  ConsoleCreateStationBody,
  ConsoleCreateStationResponse,
  ConsoleEventDoorBody,
  ConsoleEventNumbersResponse,
  ConsoleEventParams,
  ConsoleEventResponse,
  ConsoleEventsResponse,
  ConsoleExportGuestsQuery,
  ConsoleGuestFile,
  ConsoleGuestsQuery,
  ConsoleGuestsResponse,
  ConsoleImportGuestsQuery,
  ConsoleImportGuestsResponse,
  ConsoleKioskTokenParams,
  ConsoleKioskTokensResponse,
  ConsoleKioskUrlResponse,
  ConsoleOverviewResponse,
  ConsoleSessionResponse,
  ConsoleSignInBody,
  ConsoleStaffPinBody,
  ConsoleStationParams,
  ConsoleStationResponse,
  ConsoleStationsResponse,
  ConsoleTapsQuery,
  ConsoleTapsResponse,
  ConsoleUpdateStationBody,
} from '../schemas/console.js'
import { acceptGuestListFiles, GUEST_FILE_TYPES, importGuestListUpload, sendAttendeesDownload } from './guestListFiles.js'
import consoleProvisioning from './consoleProvisioning.js'
import consoleProductsApi from './consoleProducts.js'
import { publicRateLimit } from './rateLimit.js'

// Console-only: hidden from the OpenAPI document (docs/decisions.md, issue 28), as the kiosk's pages are.
const hide = true
const TAPS_DEFAULT_LIMIT = 100

/**
 * The web console's JSON API (/console/api/*, the contract in docs/decisions.md, issue 28): a team's
 * stations, kiosks, API keys, tap log, events and guest lists for the operator signed in with a
 * one-time link. Each route calls the domain function the CLI's command or the API's route calls; the
 * session (plugins/consoleSession.ts) names the team, and another team's station, key, token or
 * event is 404.
 */
const consoleApi: FastifyPluginAsyncZod = async (app) => {
  const deps = app.services
  const { store, now, config } = deps
  await app.register(consoleSession)
  // A guest list upload is the file itself, as on POST /events/:eventId/attendees/import.
  acceptGuestListFiles(app)
  // Every answer is this operator's, some hold a token shown once: no cache keeps one.
  app.addHook('onSend', async (_request, reply) => {
    reply.header('cache-control', 'no-store')
  })
  // Provisioning on this gateway's readers (routes/consoleProvisioning.ts): after the hooks above, so its routes get them.
  await app.register(consoleProvisioning)
  // Products, chip profiles and the chip import (routes/consoleProducts.ts): after the hooks above, so its routes get them.
  await app.register(consoleProductsApi)
  // Set by the plugin's onRequest hook on every route but sign-in, which answers 401 without it.
  const teamOf = (request: FastifyRequest) => request.consoleSession!.team
  const teamIdOf = (request: FastifyRequest) => request.consoleSession!.team.id

  app.post('/console/api/session', { config: { consoleSignIn: true, ...publicRateLimit(app) }, schema: { hide, body: ConsoleSignInBody, response: { 200: ConsoleSessionResponse } } }, async (request, reply) => {
    const session = await signInWithLink(store, { link: request.body.link, now: now() })
    setConsoleCookie(request, reply, session.token)
    return { success: true as const, team: session.team, expiresAt: new Date(session.expiresAt).toISOString() }
  })

  app.get('/console/api/session', { schema: { hide, response: { 200: ConsoleSessionResponse } } }, async (request) => ({
    success: true as const,
    team: teamOf(request),
    expiresAt: new Date(request.consoleSession!.expiresAt).toISOString(),
  }))

  app.delete('/console/api/session', { schema: { hide } }, async (request, reply) => {
    await endConsoleSession(store, { sessionId: request.consoleSession!.id, now: now() })
    setConsoleCookie(request, reply, null)
    return reply.code(204).send()
  })

  app.get('/console/api/overview', { schema: { hide, response: { 200: ConsoleOverviewResponse } } }, async (request) => ({
    success: true as const,
    ...await consoleOverview(deps, { team: teamOf(request) }),
  }))

  app.get('/console/api/stations', { schema: { hide, response: { 200: ConsoleStationsResponse } } }, async (request) => ({
    success: true as const,
    stations: await consoleStations(deps, { teamId: teamIdOf(request) }),
  }))

  app.post('/console/api/stations', { schema: { hide, body: ConsoleCreateStationBody, response: { 201: ConsoleCreateStationResponse } } }, async (request, reply) =>
    reply.code(201).send({ success: true as const, ...await createConsoleStation(deps, { teamId: teamIdOf(request), name: request.body.name }) }),
  )

  app.patch('/console/api/stations/:id', { schema: { hide, params: ConsoleStationParams, body: ConsoleUpdateStationBody, response: { 200: ConsoleStationResponse } } }, async (request) => ({
    success: true as const,
    station: await updateConsoleStation(deps, { teamId: teamIdOf(request), stationId: request.params.id, changes: request.body }),
  }))

  app.put('/console/api/stations/:id/staff-pin', { schema: { hide, params: ConsoleStationParams, body: ConsoleStaffPinBody } }, async (request, reply) => {
    await setConsoleStaffPin(deps, { teamId: teamIdOf(request), stationId: request.params.id, pin: request.body.pin })
    return reply.code(204).send()
  })

  app.post('/console/api/stations/:id/kiosk-url', { schema: { hide, params: ConsoleStationParams, response: { 201: ConsoleKioskUrlResponse } } }, async (request, reply) => {
    // As `station kiosk-url`: publicBaseUrl, else the address this browser reached the gateway at.
    const base = config.publicBaseUrl ?? `${request.protocol}://${request.host}`
    return reply.code(201).send({ success: true as const, ...await createConsoleKioskUrl(deps, { teamId: teamIdOf(request), stationId: request.params.id, base }) })
  })

  app.get('/console/api/stations/:id/kiosk-tokens', { schema: { hide, params: ConsoleStationParams, response: { 200: ConsoleKioskTokensResponse } } }, async (request) => ({
    success: true as const,
    tokens: await consoleKioskTokens(deps, { teamId: teamIdOf(request), stationId: request.params.id }),
  }))

  app.delete('/console/api/stations/:id/kiosk-tokens/:prefix', { schema: { hide, params: ConsoleKioskTokenParams } }, async (request, reply) => {
    await revokeConsoleKioskToken(deps, { teamId: teamIdOf(request), stationId: request.params.id, prefix: request.params.prefix })
    return reply.code(204).send()
  })

  app.delete('/console/api/stations/:id', { schema: { hide, params: ConsoleStationParams } }, async (request, reply) => {
    await revokeConsoleStation(deps, { teamId: teamIdOf(request), stationId: request.params.id })
    return reply.code(204).send()
  })

  app.get('/console/api/events', { schema: { hide, response: { 200: ConsoleEventsResponse } } }, async (request) => ({
    success: true as const,
    events: await consoleEvents(store, { teamId: teamIdOf(request) }),
  }))

  app.post('/console/api/events', { schema: { hide, body: ConsoleCreateEventBody, response: { 201: ConsoleEventResponse } } }, async (request, reply) =>
    reply.code(201).send({ success: true as const, event: await createConsoleEvent(deps, { team: teamOf(request), name: request.body.name }) }),
  )

  app.patch('/console/api/events/:id', { schema: { hide, params: ConsoleEventParams, body: ConsoleEventDoorBody, response: { 200: ConsoleEventResponse } } }, async (request) => ({
    success: true as const,
    event: await setConsoleEventDoor(deps, { teamId: teamIdOf(request), eventId: request.params.id, ...request.body }),
  }))

  app.post(
    '/console/api/events/:id/guests',
    { schema: { hide, params: ConsoleEventParams, querystring: ConsoleImportGuestsQuery, consumes: GUEST_FILE_TYPES, body: ConsoleGuestFile, response: { 200: ConsoleImportGuestsResponse } } },
    async (request) => {
      const report = await importGuestListUpload(store, {
        eventId: request.params.id,
        teamId: teamIdOf(request),
        body: request.body,
        contentType: request.headers['content-type'],
        map: request.query.map,
        now: now(),
      })
      return { success: true as const, report: { success: true as const, ...report } }
    },
  )

  app.get('/console/api/events/:id/guests', { schema: { hide, params: ConsoleEventParams, querystring: ConsoleGuestsQuery, response: { 200: ConsoleGuestsResponse } } }, async (request) => {
    const { q, limit, offset } = request.query
    return { success: true as const, ...(await attendeePage(store, { eventId: request.params.id, teamId: teamIdOf(request), q, limit, offset })) }
  })

  // A download the page offers as a plain link (`<a href download>`): the GET carries the session cookie.
  app.get('/console/api/events/:id/guests/export', { schema: { hide, params: ConsoleEventParams, querystring: ConsoleExportGuestsQuery } }, async (request, reply) => {
    const download = await attendeesDownload(store, { eventId: request.params.id, teamId: teamIdOf(request), now: now() }, request.query.format ?? 'csv')
    return sendAttendeesDownload(reply, download)
  })

  app.get('/console/api/events/:id/numbers', { schema: { hide, params: ConsoleEventParams, response: { 200: ConsoleEventNumbersResponse } } }, async (request) => ({
    success: true as const,
    stats: await consoleEventNumbers(deps, { teamId: teamIdOf(request), eventId: request.params.id }),
  }))

  app.get('/console/api/api-keys', { schema: { hide, response: { 200: ConsoleApiKeysResponse } } }, async (request) => ({
    success: true as const,
    keys: await consoleApiKeys(store, { teamId: teamIdOf(request) }),
  }))

  app.post('/console/api/api-keys', { schema: { hide, body: ConsoleCreateApiKeyBody, response: { 201: ConsoleCreateApiKeyResponse } } }, async (request, reply) =>
    reply.code(201).send({ success: true as const, ...await createConsoleApiKey(store, { teamId: teamIdOf(request), label: request.body.label ?? null, now: now() }) }),
  )

  app.delete('/console/api/api-keys/:prefix', { schema: { hide, params: ConsoleApiKeyParams } }, async (request, reply) => {
    await revokeConsoleApiKey(store, { teamId: teamIdOf(request), prefix: request.params.prefix, now: now() })
    return reply.code(204).send()
  })

  app.get('/console/api/taps', { schema: { hide, querystring: ConsoleTapsQuery, response: { 200: ConsoleTapsResponse } } }, async (request) => {
    const { uid, stationId, verdict, limit } = request.query
    return {
      success: true as const,
      taps: await consoleTaps(store, {
        teamId: teamIdOf(request),
        filter: { ...(uid === undefined ? {} : { uid }), ...(stationId === undefined ? {} : { stationId }), ...(verdict === undefined ? {} : { verdict }), limit: limit ?? TAPS_DEFAULT_LIMIT },
      }),
    }
  })
}

export default consoleApi
