/*
 * The web console's calls to /console/api (notes/console-contract.md). The session is the
 * HttpOnly cookie the sign-in set, so this page never holds a credential; the gateway checks the
 * Origin a same-origin fetch sends on every non-GET (its CSRF wall). Refusals come back as values
 * (the page shows each where it belongs), except `console_signed_out`, which ends the page's work
 * wherever it happens: the caller's `onSignedOut` takes over the screen.
 */
import type { z } from 'zod'
import type {
  ConsoleApiKeysResponse,
  ConsoleCreateApiKeyResponse,
  ConsoleCreateStationResponse,
  ConsoleEvent as ConsoleEventSchema,
  ConsoleEventDoorBody,
  ConsoleEventNumbersResponse,
  ConsoleEventResponse,
  ConsoleEventsResponse,
  ConsoleGuestsResponse,
  ConsoleImportGuestsResponse,
  ConsoleKioskTokensResponse,
  ConsoleKioskUrlResponse,
  ConsoleOverviewResponse,
  ConsoleSessionResponse,
  ConsoleStation,
  ConsoleStationResponse,
  ConsoleStationsResponse,
  ConsoleTapsResponse,
  ConsoleUpdateStationBody,
} from '../../../schemas/console.js'
import type { ConsoleChipProfile, ConsoleChipProfilesResponse, ConsoleImportChipsResponse, ConsoleProduct, ConsoleProductResponse, ConsoleProductsResponse } from '../../../schemas/consoleProducts.js'
import type { ConsoleProvisioningResponse, ConsoleProvisioningRun, ConsoleProvisioningRunResponse, ConsoleStartProvisioningBody } from '../../../schemas/consoleProvisioning.js'

// The answers' shapes, inferred from the zod schemas the routes serialize with (src/schemas/console.ts),
// so the page and the routes cannot drift apart. Type-only imports: nothing of zod reaches the bundle.
export type Team = z.infer<typeof ConsoleSessionResponse>['team']
export type Station = z.infer<typeof ConsoleStation>
export type ReaderState = NonNullable<Station['reader']>
export type Overview = z.infer<typeof ConsoleOverviewResponse>
/** An event of the team with its guest list's counts and door settings. */
export type ConsoleEvent = z.infer<typeof ConsoleEventSchema>
export type KioskToken = z.infer<typeof ConsoleKioskTokensResponse>['tokens'][number]
export type KioskUrl = z.infer<typeof ConsoleKioskUrlResponse>
export type ApiKey = z.infer<typeof ConsoleApiKeysResponse>['keys'][number]
/** A tap of the log; `words` is a refusal's reason in the sentences a tapper reads. */
export type Tap = z.infer<typeof ConsoleTapsResponse>['taps'][number]
/** A guest as GET /console/api/events/:id/guests lists them (the same page as GET /events/:id/attendees). */
export type GuestPage = z.infer<typeof ConsoleGuestsResponse>
export type Guest = GuestPage['attendees'][number]
/** What a guest list upload that went in answers: the counts (notes/console-contract-2.md). */
export type ImportReport = z.infer<typeof ConsoleImportGuestsResponse>['report']
/** An event's numbers: the staff view's, for the event itself (GET /console/api/events/:id/numbers). */
export type EventStats = z.infer<typeof ConsoleEventNumbersResponse>['stats']
/** What PATCH /console/api/events/:id takes: the door settings, each one left out stays. */
export type EventPatch = z.input<typeof ConsoleEventDoorBody>
export type GuestQuery = { q: string; offset: number }

// ---- products, chips and provisioning (notes/console-contract-3.md) ----
/** A phygital token of the team with its chips and its owner on chain (GET /console/api/products). */
export type Product = z.infer<typeof ConsoleProduct>
export type ChipProfile = z.infer<typeof ConsoleChipProfile>
/** What a chip file that went in answers: the import's counts and the chips the file listed. */
export type ChipImport = z.infer<typeof ConsoleImportChipsResponse>
/** This gateway's readers (null: none it may use, `unavailable` says why) and the team's run. */
export type Provisioning = z.infer<typeof ConsoleProvisioningResponse>
export type ProvisioningRun = z.infer<typeof ConsoleProvisioningRun>
export type ProvisioningCard = ProvisioningRun['cards'][number]
export type ProvisioningStart = z.input<typeof ConsoleStartProvisioningBody>
export type TapFilter = { uid?: string; stationId?: number; verdict?: 'accepted' | 'refused' }
/** What PATCH /console/api/stations/:id takes (as sent: the schema's input). */
export type StationPatch = z.input<typeof ConsoleUpdateStationBody>

/** A refusal: `errors` holds a 400's message per body field (empty otherwise); status 0 is no answer at all. */
export type ApiFailure = { ok: false; status: number; error: string; message: string; errors: Record<string, string> }
export type ApiResult<T> = { ok: true; body: T } | ApiFailure

/** A page of the guest search. */
export const GUESTS_PER_PAGE = 50

const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'

/**
 * The content type a guest list file is sent with: the browser's own when it is one the gateway takes,
 * else told by the name. Windows with Excel installed calls a .csv `application/vnd.ms-excel`, and some
 * browsers give no type at all: the gateway reads CSV and .xlsx by their bytes once it takes the upload.
 *
 * @example guestListType(new File([''], 'tito.csv', { type: 'application/vnd.ms-excel' })) // 'text/csv'
 */
export function guestListType(file: { name: string; type: string }): string {
  if (file.type === 'text/csv' || file.type === XLSX_TYPE) return file.type
  return /\.xlsx$/i.test(file.name) ? XLSX_TYPE : 'text/csv'
}

/**
 * The content type a chip file is sent with: JSON (the `tapgate import` file) when the browser or the
 * name says so, else CSV (a chip list), which is what a spreadsheet's export is whatever type it got.
 *
 * @example chipFileType(new File([''], 'chips.json', { type: '' })) // 'application/json'
 */
export function chipFileType(file: { name: string; type: string }): string {
  return file.type === 'application/json' || /\.json$/i.test(file.name) ? 'application/json' : 'text/csv'
}

type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE'

export type ConsoleApi = ReturnType<typeof createConsoleApi>

/**
 * The console's API, one function per route. `onSignedOut` runs on any 401 `console_signed_out`
 * (expired, revoked or signed out elsewhere), after which the result is still returned as a failure.
 *
 * @example
 * const api = createConsoleApi({ onSignedOut: () => showSignedOut() })
 * const overview = await api.overview()
 * if (overview.ok) render(overview.body)
 */
export function createConsoleApi({ onSignedOut }: { onSignedOut: () => void }) {
  /** A JSON call, or with `raw` a file sent as the body itself with its content type (a guest list). */
  async function call<T>(method: Method, path: string, body?: object, raw?: { file: Blob; type: string }): Promise<ApiResult<T>> {
    let res: Response
    try {
      res = await fetch(path, {
        method,
        credentials: 'same-origin',
        headers: { 'content-type': raw ? raw.type : 'application/json' },
        // Fastify refuses an empty body declared as JSON (400), so a write without fields sends `{}`.
        body: method === 'GET' ? undefined : raw ? raw.file : JSON.stringify(body ?? {}),
      })
    } catch {
      return { ok: false, status: 0, error: 'network', message: 'The gateway did not answer. Check that it is running, then try again.', errors: {} }
    }
    if (res.status === 204) return { ok: true, body: undefined as T }
    const json = (await res.json().catch(() => null)) as Record<string, unknown> | null
    if (res.ok && json) return { ok: true, body: json as T }
    const failure: ApiFailure = {
      ok: false,
      status: res.status,
      error: typeof json?.error === 'string' ? json.error : 'bad_response',
      message: typeof json?.message === 'string' ? json.message : `The gateway answered ${res.status}`,
      errors: isFieldErrors(json?.errors) ? json.errors : {},
    }
    if (failure.status === 401 && failure.error === 'console_signed_out') onSignedOut()
    return failure
  }

  const station = (id: number) => `/console/api/stations/${id}`
  const event = (id: number) => `/console/api/events/${id}`
  return {
    session: () => call<z.infer<typeof ConsoleSessionResponse>>('GET', '/console/api/session'),
    signOut: () => call<void>('DELETE', '/console/api/session'),
    overview: () => call<Overview>('GET', '/console/api/overview'),
    stations: () => call<z.infer<typeof ConsoleStationsResponse>>('GET', '/console/api/stations'),
    createStation: (name: string) => call<z.infer<typeof ConsoleCreateStationResponse>>('POST', '/console/api/stations', { name }),
    patchStation: (id: number, patch: StationPatch) => call<z.infer<typeof ConsoleStationResponse>>('PATCH', station(id), patch),
    setStaffPin: (id: number, pin: string) => call<void>('PUT', `${station(id)}/staff-pin`, { pin }),
    kioskUrl: (id: number) => call<KioskUrl>('POST', `${station(id)}/kiosk-url`),
    kioskTokens: (id: number) => call<z.infer<typeof ConsoleKioskTokensResponse>>('GET', `${station(id)}/kiosk-tokens`),
    revokeKioskToken: (id: number, prefix: string) => call<void>('DELETE', `${station(id)}/kiosk-tokens/${encodeURIComponent(prefix)}`),
    revokeStation: (id: number) => call<void>('DELETE', station(id)),
    events: () => call<z.infer<typeof ConsoleEventsResponse>>('GET', '/console/api/events'),
    createEvent: (name: string) => call<z.infer<typeof ConsoleEventResponse>>('POST', '/console/api/events', { name }),
    patchEvent: (id: number, patch: EventPatch) => call<z.infer<typeof ConsoleEventResponse>>('PATCH', event(id), patch),
    /** The file as the request's body: `type` is text/csv or the .xlsx type (guestListType). */
    /** `map`: the columns of a file from a tool the import does not know (the API's ?map=); empty: detected. */
    uploadGuests: (id: number, file: Blob, type: string, map: string) =>
      call<z.infer<typeof ConsoleImportGuestsResponse>>('POST', `${event(id)}/guests${map === '' ? '' : `?${new URLSearchParams({ map })}`}`, undefined, { file, type }),
    guests: (id: number, query: GuestQuery) => {
      const search = new URLSearchParams({ q: query.q, limit: String(GUESTS_PER_PAGE), offset: String(query.offset) })
      return call<GuestPage>('GET', `${event(id)}/guests?${search}`)
    },
    /** A plain link's address (`<a download>`): the browser's own GET carries the cookie. */
    exportUrl: (id: number, format: 'csv' | 'json') => `${event(id)}/guests/export?format=${format}`,
    numbers: (id: number) => call<z.infer<typeof ConsoleEventNumbersResponse>>('GET', `${event(id)}/numbers`),
    apiKeys: () => call<z.infer<typeof ConsoleApiKeysResponse>>('GET', '/console/api/api-keys'),
    createApiKey: (label: string | undefined) => call<z.infer<typeof ConsoleCreateApiKeyResponse>>('POST', '/console/api/api-keys', label ? { label } : {}),
    revokeApiKey: (prefix: string) => call<void>('DELETE', `/console/api/api-keys/${encodeURIComponent(prefix)}`),
    products: () => call<z.infer<typeof ConsoleProductsResponse>>('GET', '/console/api/products'),
    /** The whole metadata object: the edited fields, and every other field as it was (the server keeps what it is sent). */
    patchMetadata: (id: number, metadata: Record<string, unknown>) => call<z.infer<typeof ConsoleProductResponse>>('PATCH', `/console/api/products/${id}/metadata`, { metadata }),
    chipProfiles: () => call<z.infer<typeof ConsoleChipProfilesResponse>>('GET', '/console/api/chip-profiles'),
    /** The file as the request's body: text/csv (a chip list) or application/json (the import file), chipFileType. */
    importChips: (file: Blob, type: string) => call<ChipImport>('POST', '/console/api/chips/import', undefined, { file, type }),
    provisioning: () => call<Provisioning>('GET', '/console/api/provisioning'),
    startProvisioning: (body: ProvisioningStart) => call<z.infer<typeof ConsoleProvisioningRunResponse>>('POST', '/console/api/provisioning', body),
    stopProvisioning: () => call<z.infer<typeof ConsoleProvisioningRunResponse>>('DELETE', '/console/api/provisioning'),
    taps: (filter: TapFilter) => {
      const query = new URLSearchParams({ limit: '100' })
      if (filter.uid) query.set('uid', filter.uid)
      if (filter.stationId !== undefined) query.set('stationId', String(filter.stationId))
      if (filter.verdict) query.set('verdict', filter.verdict)
      return call<z.infer<typeof ConsoleTapsResponse>>('GET', `/console/api/taps?${query}`)
    },
  }
}

function isFieldErrors(value: unknown): value is Record<string, string> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.values(value).every((v) => typeof v === 'string')
}
