import { AttendeeList, EventDoorSettingsBody, EventDoorSettingsResponse, EventIdParams, ListAttendeesQuery } from '../schemas/attendees.js'
import {
  ClaimIdParams,
  HandoffResponse,
  KioskClaimResponse,
  KioskRecipientBody,
  LinkParams,
  PhoneClaimResponse,
  PhoneOpenBody,
  PhoneOpenResponse,
  PhoneRecipientBody,
  PhoneResolveBody,
  PhoneResolveResponse,
  PhoneSessionBody,
} from '../schemas/claims.js'
import { Success } from '../schemas/common.js'
import {
  AssignEventBody,
  ChipGroupList,
  CreateEventBody,
  CreateEventResponse,
  DeployContractBody,
  DeployContractResponse,
  EventMetadataBody,
  GuestbookContractList,
  GuestbookEventList,
  ListEventsQuery,
  MintEventBody,
  TogglePauseBody,
  TxnResponse,
} from '../schemas/events.js'
import { Health } from '../schemas/health.js'
import { ChipFindQuery, ChipFindResponse, Item, ItemChipList, ItemList, ItemParams, PatchChipsBody, PatchChipsResponse, PoapMintBody } from '../schemas/hosted.js'
import {
  AttendeeCheckInBody,
  AttendeeCheckInResponse,
  AttendeeSearchQuery,
  AttendeeSearchResponse,
  BindBody,
  BindResponse,
  DoorStatsResponse,
  ManualCheckInBody,
  ManualCheckInResponse,
  RetryBody,
  RetryResponse,
  StaffModeBody,
  StaffModeResponse,
  StaffSessionBody,
  StaffSessionResponse,
  StaffStateResponse,
  TestChipBody,
  TestChipResponse,
  UndoResponse,
} from '../schemas/kiosk.js'
import { OtpParams, OtpResponse } from '../schemas/otps.js'
import {
  ChipResponse,
  ClaimRegistration,
  ClaimRegistrationBody,
  ClaimRegistrationQuery,
  ClaimRegistrationStatus,
  MetadataBody,
  RecipientBody,
  TokenKeyQuery,
} from '../schemas/phygitals.js'
import { RefParams, RefQuery, RefResponse } from '../schemas/refs.js'
import { StationTapBody, StationTapResponse } from '../schemas/taps.js'
import { MetadataParams, TokenMetadataResponse } from '../schemas/tokenMetadata.js'
import {
  SelfServiceEditBody,
  SelfServiceEditResponse,
  SelfServiceTransferBody,
  SelfServiceTransferResponse,
  TransferBody,
  TransferPullableBody,
  TransferResponse,
  TransferSignaturePullableQuery,
  TransferSignatureQuery,
  TransferSignatureResponse,
} from '../schemas/transfers.js'
import type { OperationTable } from './operationShape.js'

/*
 * The HTTP API as the typed client sees it: each operation's key (`METHOD /path`, the path as the
 * OpenAPI document writes it, `{name}` for a path parameter) and the very zod schemas its route
 * validates and serializes with, imported from src/schemas/ as the route imports them. The client's
 * types are inferred from here (src/client/types.ts); nothing is written twice, so a schema changed
 * for the route changes the client's types with it. test/client/operations.test.ts holds this table
 * to the app's OpenAPI document: every operation there is here or in `excludedOperations`, and each
 * entry here exists with the same path, query and body fields.
 *
 * At run time the client needs none of this (method and path are in the key): src/client/ imports
 * this file as types only, so a program using the client loads neither zod nor the schemas.
 *
 * Left out, as they are not JSON over HTTP:
 * - the operations of `excludedOperations` below (in the OpenAPI document, each with its reason);
 * - the routes the document hides: GET /c/:token (the claim page a phone's camera opens), the kiosk
 *   pages and their assets (GET /kiosk, /kiosk/staff, /kiosk/assets/:name), GET /media/:key (product
 *   images), the WebSockets (GET /station/ws, /kiosk/ws), and GET /docs, /docs/*, /openapi.json
 *   (the API's own documentation).
 */

/** Operations of the OpenAPI document the client does not offer, and why. */
export const excludedOperations = {
  'GET /tap':
    "A phone's tap: the chip's URL, answered with an HTML page or a redirect for the person holding the phone (path: config.tapPath). A program verifies a chip URL with GET /chips/find.",
  'POST /events/{eventId}/attendees/import': 'Its body is a guest list file (text/csv or .xlsx), not JSON: send it with fetch.',
  'GET /events/{eventId}/attendees/export': 'A download, text/csv unless format=json: fetch it as a file.',
  'GET /kiosk/staff/attendees/export': 'A download, text/csv unless format=json: fetch it as a file.',
} as const

/**
 * Every operation the client offers, keyed as the OpenAPI document names it. The keys are the type
 * `OperationKey` (a typo is a type error), the schemas the types of what is sent and answered.
 */
export const operations = {
  // ---- meta ----
  'GET /health': { response: Health },

  // ---- refs and OTPs ----
  'GET /refs/{id}': { params: RefParams, query: RefQuery, response: RefResponse },
  'GET /otps/{id}': { params: OtpParams, response: OtpResponse },
  'DELETE /otps/{id}': { params: OtpParams, response: Success },

  // ---- phygitals ----
  'GET /phygitals/chip': { query: TokenKeyQuery, response: ChipResponse },
  'GET /phygitals/claim-registration': { query: ClaimRegistrationQuery, response: ClaimRegistrationStatus },
  'POST /phygitals/claim-registration': { body: ClaimRegistrationBody, response: ClaimRegistration },
  'DELETE /phygitals/claim-registration': { body: ClaimRegistrationBody, response: Success },
  'POST /phygitals/claim-registration/pullable': { body: RecipientBody, response: ClaimRegistration },
  'PATCH /phygitals/metadata': { body: MetadataBody, response: Success },

  // ---- transfers ----
  'POST /phygitals/transfer': { body: TransferBody, response: TransferResponse },
  'POST /phygitals/transfer/pullable': { body: TransferPullableBody, response: TransferResponse },
  'POST /phygitals/transfer/self-service': { body: SelfServiceTransferBody, response: SelfServiceTransferResponse },
  // The route also takes these parameters as a GET body (the spec's way); fetch cannot send one, so the query.
  'GET /phygitals/transfer-signature': { query: TransferSignatureQuery, response: TransferSignatureResponse },
  'GET /phygitals/transfer-signature/pullable': { query: TransferSignaturePullableQuery, response: TransferSignatureResponse },
  'PATCH /chips/self-service': { body: SelfServiceEditBody, response: SelfServiceEditResponse },

  // ---- metadata, chips ----
  'GET /metadata/{chainId}/{contract}/{tokenId}': { params: MetadataParams, response: TokenMetadataResponse },
  'GET /chip-groups': { response: ChipGroupList },

  // ---- guestbook ----
  'POST /events/contracts': { body: DeployContractBody, response: DeployContractResponse },
  'GET /events/contracts': { response: GuestbookContractList },
  'POST /events/mint': { body: MintEventBody, response: TxnResponse },
  'POST /events/toggle-pause-state': { body: TogglePauseBody, response: TxnResponse },
  'POST /events': { body: CreateEventBody, response: CreateEventResponse },
  'GET /events': { query: ListEventsQuery, response: GuestbookEventList },
  'PATCH /events/metadata': { body: EventMetadataBody, response: Success },
  'POST /events/assign/legacy': { body: AssignEventBody, response: Success },
  'POST /events/mint/self': { body: RecipientBody, response: TxnResponse },

  // ---- guest lists ----
  'PATCH /events/{eventId}/door': { params: EventIdParams, body: EventDoorSettingsBody, response: EventDoorSettingsResponse },
  'GET /events/{eventId}/attendees': { params: EventIdParams, query: ListAttendeesQuery, response: AttendeeList },

  // ---- hosted API compatibility ----
  'GET /chips/find': { query: ChipFindQuery, response: ChipFindResponse },
  'PATCH /chips': { body: PatchChipsBody, response: PatchChipsResponse },
  'POST /poap-events/mint': { body: PoapMintBody, response: TxnResponse },
  'GET /items': { response: ItemList },
  'GET /items/{id}': { params: ItemParams, response: Item },
  'GET /items/{id}/chips': { params: ItemParams, response: ItemChipList },

  // ---- stations (x-station-token) ----
  'POST /station/taps': { body: StationTapBody, response: StationTapResponse },

  // ---- kiosk staff (x-kiosk-token; all but the session's also x-staff-session) ----
  'POST /kiosk/staff/session': { body: StaffSessionBody, response: StaffSessionResponse },
  'GET /kiosk/staff/state': { response: StaffStateResponse },
  'POST /kiosk/staff/mode': { body: StaffModeBody, response: StaffModeResponse },
  'POST /kiosk/staff/check-in': { body: ManualCheckInBody, response: ManualCheckInResponse },
  'POST /kiosk/staff/undo': { response: UndoResponse },
  'POST /kiosk/staff/retry': { body: RetryBody, response: RetryResponse },
  'POST /kiosk/staff/test-chip': { body: TestChipBody, response: TestChipResponse },
  'POST /kiosk/staff/dismiss': { response: Success },
  'GET /kiosk/staff/attendees': { query: AttendeeSearchQuery, response: AttendeeSearchResponse },
  'POST /kiosk/staff/attendees/check-in': { body: AttendeeCheckInBody, response: AttendeeCheckInResponse },
  'POST /kiosk/staff/bind': { body: BindBody, response: BindResponse },
  'POST /kiosk/staff/bind/cancel': { response: Success },
  'GET /kiosk/staff/stats': { response: DoorStatsResponse },
  'POST /kiosk/staff/end': { response: Success },

  // ---- claims at the kiosk (x-kiosk-token) and on the phone (the link's token) ----
  'POST /kiosk/claims/{id}/handoff': { params: ClaimIdParams, response: HandoffResponse },
  'POST /kiosk/claims/{id}/recipient': { params: ClaimIdParams, body: KioskRecipientBody, response: KioskClaimResponse },
  'POST /c/{token}/open': { params: LinkParams, body: PhoneOpenBody, response: PhoneOpenResponse },
  'POST /c/{token}/status': { params: LinkParams, body: PhoneSessionBody, response: PhoneClaimResponse },
  'POST /c/{token}/resolve': { params: LinkParams, body: PhoneResolveBody, response: PhoneResolveResponse },
  'POST /c/{token}/recipient': { params: LinkParams, body: PhoneRecipientBody, response: PhoneClaimResponse },
} satisfies OperationTable

/** The table's type: `satisfies` keeps each entry's own schemas, which the client's types are computed from. */
export type Operations = typeof operations
