/*
 * The kiosk's contract: what the per-station feed stores (station_events), what the kiosk page and
 * the staff view receive over GET /kiosk/ws, and the states the page shows. The gateway decides
 * every state (a check-in, a duplicate, a replay); the page only renders what it is sent.
 *
 * Public vs staff: the attendee-facing page receives `publicView(event)`: no UID, no address, no
 * reason codes beyond the state, no ref ids ever. A staff session receives the whole event.
 */

/**
 * What a station is for. null: no mode set yet (taps verify and mint refs; the kiosk says so).
 * checkin: an entry door of its event; bind: an entry door where staff tie a wristband to a guest
 * from the guest list; exit: a door that records guests leaving.
 */
export type StationMode = 'checkin' | 'bind' | 'exit' | 'claim' | 'closed'

/** The result states of the kiosk page (`data-state` of the result element). */
export type KioskState =
  | 'idle'
  | 'reading'
  | 'accepted'
  | 'already'
  | 'replay'
  | 'unknown'
  | 'retry'
  | 'no-reader'
  | 'offline'
  | 'closed'
  // ---- a claim (claim mode, or a check-in whose token waits for a wallet) ----
  /** The product card (or the event's card) is shown, with the ways to give an address. */
  | 'product'
  /** The one-time link's QR code is shown (element carries data-claim-url). */
  | 'handoff'
  /** The link was opened on a phone: the customer finishes there; the kiosk goes back to idle. */
  | 'opened'
  /** A 2-tap token: the address is registered; tap again after allowedAt (countdown). */
  | 'registered'
  /** The transfer (or mint) was accepted and queued. */
  | 'claimed'
  /** Its transaction is confirmed on chain. */
  | 'confirmed'
  /** The token moved after this tap (another claim or path took it first): nothing was sent. */
  | 'moved'
  // ---- doors with a guest list (issue 19) ----
  /** Checked in, but the guest list flags the guest: amber, staff are alerted. */
  | 'attention'
  /** A guest who went out came back in (the event allows re-entry). */
  | 'reentry'
  /** A guest who went out may not come back in (the event allows no re-entry). */
  | 'no_reentry'
  /** The guest's ticket type is not admitted at this door (red; counted apart, never a check-in). */
  | 'not_allowed'
  /** A chip on nobody's ticket at an event with a guest list. */
  | 'not_on_list'
  /** The guest's order is not paid (issue 25): amber, staff are alerted; no check-in, no mint. */
  | 'not_paid'
  /** An exit door recorded the guest leaving. */
  | 'exit'
  /** An exit door's tap of a guest who is not inside (not checked in, or out already). */
  | 'not_inside'
  /** A bind door tied the wristband to the guest staff chose, and checked them in. */
  | 'bound'
  /** A bind door's tap of a wristband that belongs to another guest (staff see whose). */
  | 'bind_taken'
  /** A bind door's tap with no guest chosen: staff scan a ticket (or search) first. */
  | 'bind_waiting'

/** The steps of a transaction as the relayer takes it (chain_txs), for the kiosk's strip. */
export type TxStatus = 'queued' | 'sent' | 'replaced' | 'confirmed' | 'failed'

/** A tap's outcome at a station, as stored in the feed. */
export type TapEventData = {
  /**
   * accepted: a new check-in (or, with no mode / test, a verified tap);
   * already: this chip is checked in to this event already (no new mint);
   * replay: counter_replay, uid_mismatch or mac_mismatch (a copy or a clone: staff alert);
   * unknown: unknown_chip; retry: the card left mid-read (no ref, no count);
   * refused: any other refusal (malformed, not_sun_message, …); closed: the station is closed;
   * product: a claim station's tap opened a claim (`claim`); nothing: a claim station's tap on a
   * chip that is linked to no token (nothing to claim).
   */
  state:
    | 'accepted'
    | 'already'
    | 'replay'
    | 'unknown'
    | 'retry'
    | 'refused'
    | 'closed'
    | 'product'
    | 'nothing'
    // At a door with a guest list (issue 19): see KioskState.
    | 'reentry'
    | 'no_reentry'
    | 'not_allowed'
    | 'not_on_list'
    | 'not_paid'
    | 'exit'
    | 'not_inside'
    | 'bound'
    | 'bind_taken'
    | 'bind_waiting'
  /** A "test chip" tap: shown and logged, never counted. */
  test?: boolean
  // ---- staff only ----
  uid: string | null
  reason?: string
  detail?: string
  counter?: number | null
  readerName?: string
  /** bind_taken: the guest the wristband belongs to (full name). */
  boundTo?: string
  // ---- public ----
  /** The guest of this tap (their chip's attendee, or the one a bind door bound). */
  attendee?: AttendeeView
  /** The check-in this tap made (accepted) or found (already). */
  checkIn?: CheckInSummary
  /** The claim this tap opened: a product (claim mode), or a check-in's token waiting for a wallet. */
  claim?: ClaimSummary
}

/** What the kiosk and the phone show of a token or an event, from its metadata. */
export type ProductCard = {
  name: string
  description: string | null
  /** A gateway path (`/media/<key>`, cached in the data dir), or null: the page shows its placeholder. */
  image: string | null
  attributes: { trait: string; value: string }[]
}

/**
 * Where a claim stands. open: waiting for an address; opened: its link was opened on a phone
 * (the phone finishes it); registered: a 2-tap token's address is registered, the second tap
 * claims from allowedAt; early: a second tap came before allowedAt (nothing spent); claimed: the
 * transfer or mint was accepted (its tx follows); expired: the tap's OTP ran out first; moved: the
 * token moved after the tap (claimed meanwhile, by another claim or path), so this one takes no address.
 */
export type ClaimStep = 'open' | 'opened' | 'registered' | 'early' | 'claimed' | 'expired' | 'moved'

export type ClaimSummary = {
  id: number
  /** token: the chip's phygital token (claim mode); guestbook: the event's token of a check-in. */
  kind: 'token' | 'guestbook'
  product: ProductCard
  step: ClaimStep
  /** ISO: the link and the kiosk's address entry stop working then (the tap's OTP expires). */
  expiresAt: string
  /** A 2-tap token: the first tap registers an address, a second tap from allowedAt claims. */
  twoTap: boolean
  /** ISO: when a 2-tap token's registered address may claim (registered, early). */
  allowedAt: string | null
  /** How the address came (claimed): the gateway knew it, a phone, the kiosk. */
  via: 'known' | 'phone' | 'kiosk' | null
  tx: { id: number; status: TxStatus; hash: string | null } | null
  // ---- staff only ----
  recipient?: string | null
}

/**
 * A guest as a screen shows them. The public page gets `displayName` (the first name, or the whole
 * name when the event says so), the ticket type and the attention flag; staff get the rest.
 */
export type AttendeeView = {
  id: number
  displayName: string
  ticketType: string
  needsAttention: boolean
  // ---- staff only ----
  name?: string
  email?: string | null
  ticketCode?: string
  note?: string | null
}

export type CheckInSummary = {
  id: number
  eventId: number
  eventName: string
  /** ISO 8601. */
  at: string
  stationId: number
  stationName: string
  manual: boolean
  /** The guest checked in (events with a guest list); null for a chip on no list. */
  attendee?: AttendeeView | null
  /** ISO: the guest went out then (an exit door), null while inside. */
  leftAt?: string | null
  /** The mint it started; null while the token waits for a wallet. */
  tx: { id: number; status: TxStatus; hash: string | null } | null
}

/** The readers a station has, as it reports them over its link (or the in-process station). */
export type ReaderEventData = {
  /** Reader names; empty: no reader. */
  readers: string[]
  /** A card on a reader right now (the page shows `reading`). */
  cardPresent: boolean
  /** pcscd reachable (false: lost; the station retries). */
  pcscd: boolean
}

/** A transaction step for a check-in's mint (or any tx the station's flow started). */
export type TxEventData = {
  txId: number
  checkInId: number | null
  /** The claim whose transfer or mint this is. */
  claimId?: number | null
  status: TxStatus
  hash: string | null
  // ---- staff only ----
  error?: string
}

export type ModeEventData = { mode: StationMode | null; eventId: number | null; eventName: string | null }

/** A staff action, logged with the station and time (the feed row's created_at). */
export type StaffEventData = {
  action: 'login' | 'login_failed' | 'locked' | 'mode' | 'manual_check_in' | 'undo' | 'retry' | 'test_chip' | 'dismiss' | 'bind' | 'rebind'
  /** What the action did, for the staff feed ("undid check-in 12; its token was already minted"). */
  summary: string
  checkInId?: number
  txId?: number
}

/** A claim moved on (opened on a phone, registered, claimed, expired): the kiosk follows it. */
export type ClaimEventData = { claim: ClaimSummary }

/** A check-in undone by staff: the count drops; a mined token stays (`tokenStays`). */
export type UndoEventData = { checkInId: number; tokenStays: boolean }

export type StationEventData = {
  tap: TapEventData
  reader: ReaderEventData
  tx: TxEventData
  mode: ModeEventData
  staff: StaffEventData
  undo: UndoEventData
  claim: ClaimEventData
}
export type StationEventKind = keyof StationEventData

/** One feed row. */
export type StationEvent = {
  [K in StationEventKind]: { id: number; stationId: number; kind: K; at: string; data: StationEventData[K] }
}[StationEventKind]

/** Counts from the database, sent with every message so every kiosk shows the same numbers. */
export type KioskCounts = {
  /** Unique chips checked in to the station's event (every station), undone ones excepted. */
  event: number
  /** Check-ins made at this station for its event. */
  station: number
  /** Check-ins at this station in the last 5 minutes. */
  last5Minutes: number
  /** Claims accepted at this station (claim mode's count). */
  claimed: number
  /** Guests on the event's list (null: the event has no guest list). */
  expected?: number | null
  /** Checked in and not gone out: the event's, every door. */
  inside?: number
  /** Taps the event's doors turned away (wrong ticket type, no re-entry, not on the list). */
  refused?: number
}

/** How a station's kiosk behaves beyond its mode (config `kiosk`), sent in `welcome`. */
export type KioskSettings = {
  /** A customer flow (product card, QR, address entry) with no touch for this long warns… */
  customerIdleMs: number
  /** …and resets the screen this long after the warning, unless someone touches it. */
  customerWarnMs: number
  /** The venue's Wi-Fi name, shown under the phone QR code (the phone must reach the gateway). */
  wifiName: string | null
}

export type KioskStation = {
  id: number
  name: string
  mode: StationMode | null
  event: { id: number; name: string } | null
}

// ---- GET /kiosk/ws ----

/**
 * Client → gateway. The first message must be `hello` within 5 s (the page reads its kiosk token
 * from the URL fragment, which never reaches a server log). `since`: the last event id the page
 * saw; the gateway sends every later event, then live ones. `staffSession`: a staff view's session
 * token (POST /kiosk/staff/session); with it the events are not projected. One hello per socket:
 * any later one, even sent before the first was answered, gets the error `hello_already_sent` and
 * changes nothing (one subscription, one token recheck per socket).
 */
export type KioskClientMessage =
  | { type: 'hello'; token: string; since?: number; staffSession?: string }
  | { type: 'ping' }

/** Gateway → client. */
export type KioskServerMessage =
  | { type: 'welcome'; station: KioskStation; counts: KioskCounts; reader: ReaderEventData | null; lastEventId: number; staff: boolean; settings: KioskSettings }
  | { type: 'event'; event: StationEvent; counts: KioskCounts }
  | { type: 'pong' }
  | { type: 'error'; error: string; message: string }

/** Close codes of the kiosk socket (4xxx: application). */
export const KIOSK_CLOSE = { unauthorized: 4401, staffSessionEnded: 4403, helloTimeout: 4408 } as const

/** The kiosk token's URL-fragment key: `/kiosk#token=tgk_…`. */
export const KIOSK_TOKEN_FRAGMENT = 'token'

/**
 * The attendee-facing projection: the state and the public fields only. Nothing that names a chip,
 * a wallet or a reason code is kept. Staff actions are not sent (null): the public page learns
 * their effects (a mode change, an undo) from those events; only a dismissed alert is passed on,
 * without its summary, since that is the one action whose effect is the screen itself.
 */
export function publicView(event: StationEvent): StationEvent | null {
  switch (event.kind) {
    case 'tap': {
      const { state, test, checkIn, claim, attendee } = event.data
      return {
        ...event,
        data: {
          state,
          test,
          uid: null,
          checkIn: checkIn && { ...checkIn, attendee: checkIn.attendee && publicAttendee(checkIn.attendee) },
          claim: claim && publicClaim(claim),
          ...(attendee ? { attendee: publicAttendee(attendee) } : {}),
        },
      }
    }
    case 'tx': {
      const { txId, checkInId, claimId, status, hash } = event.data
      return { ...event, data: { txId, checkInId, claimId, status, hash } }
    }
    case 'claim':
      return { ...event, data: { claim: publicClaim(event.data.claim) } }
    case 'staff':
      return event.data.action === 'dismiss' ? { ...event, data: { action: 'dismiss', summary: '' } } : null
    default:
      return event
  }
}

/** A guest as the public screen may show them: no full name unless displayName is it, no email, code or note. */
export function publicAttendee(attendee: AttendeeView): AttendeeView {
  const { id, displayName, ticketType, needsAttention } = attendee
  return { id, displayName, ticketType, needsAttention }
}

/** A claim without its recipient (staff only). */
export function publicClaim(claim: ClaimSummary): ClaimSummary {
  const { recipient: _recipient, ...rest } = claim
  return rest
}
