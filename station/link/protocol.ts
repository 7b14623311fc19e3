/*
 * The station ↔ gateway WebSocket protocol (GET /station/ws, header x-station-token).
 * Text frames, one JSON object each. The station sends `{ id, tap }`; the gateway
 * answers every such message with `{ id, verdict }`, in the order received.
 * A message the gateway cannot read at all is answered `{ error, message }`.
 */
import type { StationTap, TapVerdict } from '../tap.js'

export const STATION_SOCKET_PATH = '/station/ws'

/** Close code the gateway uses when the station token stopped being valid (revoked) on an open socket. */
export const CLOSE_UNAUTHORIZED = 4401

export type TapMessage = { id: string; tap: StationTap }
export type VerdictMessage = { id: string; verdict: TapVerdict }
export type ProtocolErrorMessage = { error: string; message: string }
