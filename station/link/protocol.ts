/*
 * The station ↔ gateway WebSocket protocol (GET /station/ws, header x-station-token).
 * Text frames, one JSON object each. The station sends `{ id, tap }`; the gateway
 * answers every such message with `{ id, verdict }`, in the order received.
 * A message the gateway cannot read at all is answered `{ error, message }`.
 *
 * Reader status (issue 10): `{ status }` on every (re)connect and on every change, and
 * `{ pulled }` for a card that left mid-read. Neither is answered (so they never stand in for a
 * tap's answer), and the station sends them only to a gateway whose 101 response carries
 * STATUS_HEADER: an older gateway would answer them `{ error }`, which the station would take for
 * the answer to the tap in flight.
 */
import type { ReaderStatus, StationTap, TapVerdict } from '../tap.js'

export const STATION_SOCKET_PATH = '/station/ws'

/** Close code the gateway uses when the station token stopped being valid (revoked) on an open socket. */
export const CLOSE_UNAUTHORIZED = 4401

export type TapMessage = { id: string; tap: StationTap }
export type VerdictMessage = { id: string; verdict: TapVerdict }
export type ProtocolErrorMessage = { error: string; message: string }

/** Header of the gateway's 101 response: it takes `{ status }` and `{ pulled }` messages. */
export const STATUS_HEADER = 'x-tapgate-reader-status'

/** The station's readers now (state, not an event: only the latest matters, never queued on disk). */
export type StatusMessage = { status: ReaderStatus }
/** A card left the reader before it was read: the kiosk says "hold it a little longer". Not queued. */
export type PulledMessage = { pulled: { readerName: string; at: string } }
