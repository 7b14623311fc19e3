import { Readable } from 'node:stream'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { attendeesDownload } from '../attendees/exportAttendees.js'
import { attendeeEvent, importAttendees } from '../attendees/importAttendees.js'
import { CsvTooLargeError, MAX_CSV_BYTES } from '../attendees/readCsv.js'
import { csvFile } from '../attendees/readCsvStream.js'
import { spoolUpload } from '../attendees/spoolUpload.js'
import { setEventDoorSettings } from '../door/eventDoorSettings.js'
import { BaseError } from '../errors.js'
import { iso } from '../ids.js'
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

const tags = ['tapgate extension']

const isStream = (body: unknown): body is AsyncIterable<Uint8Array> =>
  typeof body === 'object' && body !== null && Symbol.asyncIterator in body

/** The content types a guest list file is sent as: a CSV, or an .xlsx workbook (told apart by the file's bytes). */
const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'
const FILE_TYPES = ['text/csv', XLSX_TYPE]

/** 415: the import's body is not `text/csv` or xlsx (JSON or a form would be read as a CSV of nonsense). */
class NotCsvError extends BaseError {
  override name = 'NotCsvError'
  constructor() {
    super(415, 'unsupported_media_type', `Send the guest list file as the body, with content-type text/csv (or ${XLSX_TYPE} for an .xlsx)`)
  }
}

/**
 * An event's guest list with the API key (issue 19): list and search, import a CSV, export. The
 * import's body is the file itself (text/csv, up to 50 MB: the parser's own limit; a JSON body keeps
 * the app's 1 MiB), decoded strictly so a file that is not UTF-8 is refused rather than mangled.
 */
const attendees: FastifyPluginAsyncZod = async (app) => {
  const { store, now } = app.services
  app.addHook('onRequest', app.requireApiKey)
  // The body stays a stream, written to a private file as it arrives (spoolUpload, bounded by MAX_CSV_BYTES) and
  // imported from there: a 50 MB upload is never a 50 MB buffer. A Content-Length past the bound is refused unread.
  app.addContentTypeParser(FILE_TYPES, (request, payload, done) => {
    const length = Number(request.headers['content-length'])
    if (Number.isFinite(length) && length > MAX_CSV_BYTES) done(new CsvTooLargeError(length))
    else done(null, payload)
  })

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
      const event = await attendeeEvent(store, request.params.eventId, teamOf(request).id)
      const { q, limit = 50, offset = 0 } = request.query
      const page = await store.attendees.list(event.id, { query: q, limit, offset })
      return {
        success: true as const,
        total: page.total,
        attendees: page.attendees.map((a) => ({
          id: a.id,
          name: a.name,
          email: a.email,
          ticketType: a.ticketType,
          ticketCode: a.ticketCode,
          wallet: a.wallet,
          note: a.note,
          needsAttention: a.needsAttention === 1,
          paid: a.paid === 1,
          createdAt: iso(a.createdAt),
          updatedAt: iso(a.updatedAt),
        })),
      }
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
      consumes: FILE_TYPES,
      body: CsvUpload,
      security: security.apiKey,
      response: { 200: ImportAttendeesReport, ...errorResponses(400, 401, 404, 413, 414, 415) },
    },
    handler: async (request) => {
      const team = teamOf(request)
      const body = request.body
      const type = String(request.headers['content-type']).toLowerCase()
      if (!isStream(body) || !FILE_TYPES.some((fileType) => type.startsWith(fileType))) {
        await attendeeEvent(store, request.params.eventId, team.id)
        throw new NotCsvError()
      }
      // The event before the upload is read: a 404 costs no 50 MB.
      await attendeeEvent(store, request.params.eventId, team.id)
      const upload = await spoolUpload(body)
      try {
        const input = csvFile(upload.file)
        const report = await importAttendees(store, { eventId: request.params.eventId, teamId: team.id, input, map: request.query.map, now: now() })
        return { success: true as const, ...report }
      } finally {
        upload.remove()
      }
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
      // A stream is sent as it is read, a page of guests at a time (Fastify serializes no stream): the CSV is no
      // JSON, and the JSON is written already. The type provider types send() by the JSON schema, which documents format=json.
      return reply
        .type(download.contentType)
        .header('content-disposition', `attachment; filename="${download.filename}"`)
        .send(Readable.from(download.body) as never)
    },
  })
}

export default attendees
