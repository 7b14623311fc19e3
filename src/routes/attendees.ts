import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { attendeesDownload } from '../attendees/exportAttendees.js'
import { attendeeEvent } from '../attendees/importAttendees.js'
import { attendeePage } from '../attendees/listAttendees.js'
import { setEventDoorSettings } from '../door/eventDoorSettings.js'
import { teamOf } from '../plugins/auth.js'
import {
  AttendeeExport,
  AttendeeList,
  EventDoorSettingsBody,
  EventDoorSettingsResponse,
  EventIdParams,
  ExportAttendeesQuery,
  ImportAttendeesQuery,
  CsvUpload,
  ImportAttendeesReport,
  ListAttendeesQuery,
} from '../schemas/attendees.js'
import { errorResponses, security } from '../schemas/common.js'
import { acceptGuestListFiles, GUEST_FILE_TYPES, importGuestListUpload, sendAttendeesDownload } from './guestListFiles.js'

const tags = ['tapgate extension']

/**
 * An event's guest list with the API key (issue 19): list and search, import a CSV, export. The
 * import's body is the file itself (text/csv, up to 50 MB: the parser's own limit; a JSON body keeps
 * the app's 1 MiB), decoded strictly so a file that is not UTF-8 is refused rather than mangled.
 */
const attendees: FastifyPluginAsyncZod = async (app) => {
  const { store, now } = app.services
  app.addHook('onRequest', app.requireApiKey)
  acceptGuestListFiles(app)

  app.patch('/events/:eventId/door', {
    schema: {
      tags,
      summary: "An event's door settings (as tapgate event set): re-entry, names on the public screen, unpaid guests let in; an absent one stays",
      params: EventIdParams,
      body: EventDoorSettingsBody,
      security: security.apiKey,
      response: { 200: EventDoorSettingsResponse, ...errorResponses(400, 401, 404, 413, 414, 415) },
    },
    handler: async (request) => {
      // The team's own event first: another team's is a 404 whatever the body says.
      const event = await attendeeEvent(store, request.params.eventId, teamOf(request).id)
      return { success: true as const, ...(await setEventDoorSettings(store, { eventId: event.id, ...request.body, now: now() })) }
    },
  })

  app.get('/events/:eventId/attendees', {
    schema: {
      tags,
      summary: "An event's guest list, a page at a time, by name; q searches name, email and ticket code",
      params: EventIdParams,
      querystring: ListAttendeesQuery,
      security: security.apiKey,
      response: { 200: AttendeeList, ...errorResponses(400, 401, 404, 414) },
    },
    handler: async (request) => {
      const { q, limit, offset } = request.query
      return { success: true as const, ...(await attendeePage(store, { eventId: request.params.eventId, teamId: teamOf(request).id, q, limit, offset })) }
    },
  })

  app.post('/events/:eventId/attendees/import', {
    schema: {
      tags,
      summary: 'Import a guest list CSV or .xlsx (pretix, Eventbrite, Luma, Hi.Events, Tito, or any with ?map=): upserts by ticket code; a bad row imports nothing',
      description:
        'The body is the file (content-type text/csv: UTF-8 with or without BOM, or Windows-1252, "," or ";"; or an .xlsx workbook; at most 50 MB). Guests already on the list and not in the file stay, ' +
        'with their check-ins. A bad row is 400 csv_rows_invalid with `errors` naming each line and column.',
      params: EventIdParams,
      querystring: ImportAttendeesQuery,
      consumes: GUEST_FILE_TYPES,
      body: CsvUpload,
      security: security.apiKey,
      response: { 200: ImportAttendeesReport, ...errorResponses(400, 401, 404, 413, 414, 415) },
    },
    handler: async (request) => {
      const report = await importGuestListUpload(store, {
        eventId: request.params.eventId,
        teamId: teamOf(request).id,
        body: request.body,
        contentType: request.headers['content-type'],
        map: request.query.map,
        now: now(),
      })
      return { success: true as const, ...report }
    },
  })

  app.get('/events/:eventId/attendees/export', {
    schema: {
      tags,
      summary: "An event's guest list with what happened at the door: chips, check-in time and door, manual or tapped, exits, mint state",
      params: EventIdParams,
      querystring: ExportAttendeesQuery,
      security: security.apiKey,
      response: {
        200: {
          description: 'The export: text/csv (format=csv, the default) or application/json (format=json), as a download',
          content: { 'text/csv': { schema: z.string() }, 'application/json': { schema: AttendeeExport } },
        },
        ...errorResponses(400, 401, 404, 414),
      },
    },
    handler: async (request, reply) => {
      const download = await attendeesDownload(store, { eventId: request.params.eventId, teamId: teamOf(request).id, now: now() }, request.query.format ?? 'csv')
      return sendAttendeesDownload(reply, download)
    },
  })
}

export default attendees
