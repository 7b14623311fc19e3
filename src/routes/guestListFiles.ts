import { Readable } from 'node:stream'
import type { FastifyInstance, FastifyReply } from 'fastify'
import type { AttendeesDownload } from '../attendees/exportAttendees.js'
import { attendeeEvent, importAttendees, type ImportAttendeesReport } from '../attendees/importAttendees.js'
import { CsvTooLargeError, MAX_CSV_BYTES } from '../attendees/readCsv.js'
import { csvFile } from '../attendees/readCsvStream.js'
import { spoolUpload } from '../attendees/spoolUpload.js'
import type { Store } from '../db/store.js'
import { BaseError } from '../errors.js'

/*
 * A guest list file in and out over HTTP, for the two routes that take one: the API's
 * POST /events/:eventId/attendees/import (API key) and the console's POST /console/api/events/:id/guests
 * (session). One reading of the body, one set of limits and errors for both.
 */

/** The content types a guest list file is sent as: a CSV, or an .xlsx workbook (told apart by the file's bytes). */
export const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'
export const GUEST_FILE_TYPES = ['text/csv', XLSX_TYPE]

const isStream = (body: unknown): body is AsyncIterable<Uint8Array> =>
  typeof body === 'object' && body !== null && Symbol.asyncIterator in body

/** 415: the import's body is not `text/csv` or xlsx (JSON or a form would be read as a CSV of nonsense). */
class NotCsvError extends BaseError {
  override name = 'NotCsvError'
  constructor() {
    super(415, 'unsupported_media_type', `Send the guest list file as the body, with content-type text/csv (or ${XLSX_TYPE} for an .xlsx)`)
  }
}

/**
 * Lets the routes of `app` (a plugin's scope) take a guest list file as their body. The body stays a
 * stream, written to a private file as it arrives (spoolUpload, bounded by MAX_CSV_BYTES) and imported
 * from there: a 50 MB upload is never a 50 MB buffer. A Content-Length past the bound is refused unread.
 */
export function acceptGuestListFiles(app: FastifyInstance): void {
  app.addContentTypeParser(GUEST_FILE_TYPES, (request, payload, done) => {
    const length = Number(request.headers['content-length'])
    if (Number.isFinite(length) && length > MAX_CSV_BYTES) done(new CsvTooLargeError(length))
    else done(null, payload)
  })
}

/**
 * Imports the guest list file a request carried (its body as acceptGuestListFiles left it) into the
 * team's event: the event first (a 404 costs no 50 MB, whatever the body is), then 415 for a body
 * that is no guest list file, then the upload spooled and imported (importAttendees: a bad row
 * imports nothing).
 *
 * @throws NotFoundError event_not_found; 415 unsupported_media_type; as importAttendees and spoolUpload
 */
export async function importGuestListUpload(
  store: Store,
  p: { eventId: number; teamId: number; body: unknown; contentType: string | undefined; map: string | undefined; now: number },
): Promise<ImportAttendeesReport> {
  await attendeeEvent(store, p.eventId, p.teamId)
  const type = String(p.contentType).toLowerCase()
  const body = p.body
  if (!isStream(body) || !GUEST_FILE_TYPES.some((fileType) => type.startsWith(fileType))) throw new NotCsvError()
  const upload = await spoolUpload(body)
  try {
    return await importAttendees(store, { eventId: p.eventId, teamId: p.teamId, input: csvFile(upload.file), map: p.map, now: p.now })
  } finally {
    upload.remove()
  }
}

/**
 * Sends an export (attendeesDownload) as a download: an attachment with its file name, streamed as it
 * is read, a page of guests at a time (Fastify serializes no stream: the CSV is no JSON, and the JSON
 * is written already).
 */
export function sendAttendeesDownload(reply: FastifyReply, download: AttendeesDownload): FastifyReply {
  return reply
    .type(download.contentType)
    .header('content-disposition', `attachment; filename="${download.filename}"`)
    .send(Readable.from(download.body))
}
