import type { KioskState } from '../../../wire/feedProtocol.js'

/** The sounds of the page (WebAudio tones: no files to serve). */
export type SoundName = 'tick' | 'chime' | 'twoTones' | 'threeLow' | 'oneLow' | 'none'

export type StateLook = {
  /** Distinct shape per state, so nothing relies on colour alone. */
  icon: IconName
  /** The big word; already/offline get their details filled in by the page. */
  word: string
  /** The smaller line under it. */
  detail: string
  sound: SoundName
  /** Staff are needed: the result goes to the role=alert region. */
  alert: boolean
  /** Back to the resting state after this many ms; null: stays until something else happens. */
  holdMs: number | null
  /** A code staff can look up (pretixKIOSK-style), shown on the screen. */
  code?: string
}

export type IconName =
  | 'waves'
  | 'hourglass'
  | 'check'
  | 'clockArrow'
  | 'octagon'
  | 'question'
  | 'holdDown'
  | 'unplugged'
  | 'brokenLink'
  | 'padlock'
  | 'tag'
  | 'phoneQr'
  | 'phoneOut'
  | 'stopwatch'
  | 'plane'
  | 'wallet'
  | 'triangle'
  | 'doorIn'
  | 'doorOut'
  | 'noEntry'
  | 'list'
  | 'wristband'
  | 'scanFirst'

/** How long a result stays before the screen is ready for the next person (a visible bar counts it down). */
export const RESULT_MS = 4000

/** "On its way" waits this long for the block; the strip (and a brief "In your wallet") follow it after. */
export const CLAIMED_MS = 15_000
/** "Opened on a phone": long enough to read, then the next customer. */
export const OPENED_MS = 3000
/** "Registered, tap again after HH:MM": long enough to note the time. */
export const REGISTERED_MS = 10_000

/** The state table of docs/kiosk (design notes §2): icon shape, word, colour (CSS, by data-state) and sound. */
export const STATES: Record<KioskState, StateLook> = {
  idle: { icon: 'waves', word: 'Tap your badge', detail: 'Hold it flat on the reader', sound: 'none', alert: false, holdMs: null },
  reading: { icon: 'hourglass', word: 'Hold still…', detail: 'Reading your badge', sound: 'tick', alert: false, holdMs: null },
  accepted: { icon: 'check', word: "Welcome, you're checked in", detail: '', sound: 'chime', alert: false, holdMs: RESULT_MS },
  already: { icon: 'clockArrow', word: 'Already checked in', detail: '', sound: 'twoTones', alert: false, holdMs: RESULT_MS },
  replay: {
    icon: 'octagon',
    word: "This tap can't be used",
    detail: 'Please ask staff',
    sound: 'threeLow',
    alert: true,
    // A copied or cloned badge: it stays until staff have seen it.
    holdMs: null,
  },
  unknown: { icon: 'question', word: 'Badge not registered here', detail: 'Please ask staff', sound: 'threeLow', alert: true, holdMs: RESULT_MS * 2 },
  retry: { icon: 'holdDown', word: 'Hold it on the reader a little longer', detail: 'Then tap again', sound: 'oneLow', alert: false, holdMs: RESULT_MS },
  'no-reader': { icon: 'unplugged', word: 'Reader disconnected', detail: 'Staff have been told', sound: 'none', alert: false, holdMs: null, code: 'TG-READER' },
  offline: { icon: 'brokenLink', word: 'Not connected', detail: 'This screen cannot show results right now: please ask staff', sound: 'none', alert: false, holdMs: null, code: 'TG-LINK' },
  closed: { icon: 'padlock', word: 'This station is closed', detail: 'Please use another entrance', sound: 'none', alert: false, holdMs: null },
  // ---- a claim (claim mode, or a check-in's token waiting for a wallet); the customer-flow
  // states (product, handoff) stay until the customer acts or the customer timeout resets them ----
  product: { icon: 'tag', word: 'Get your digital twin', detail: 'Choose how to give your wallet address', sound: 'tick', alert: false, holdMs: null },
  handoff: { icon: 'phoneQr', word: 'Finish on your phone', detail: 'No app needed: the camera opens the page', sound: 'none', alert: false, holdMs: null },
  opened: { icon: 'phoneOut', word: 'Opened on a phone — finish there', detail: 'Next customer, please', sound: 'twoTones', alert: false, holdMs: OPENED_MS },
  registered: { icon: 'stopwatch', word: 'Registered', detail: 'Your address is noted: nothing is sent before then', sound: 'twoTones', alert: false, holdMs: REGISTERED_MS },
  claimed: { icon: 'plane', word: 'On its way to your wallet', detail: 'Sending…', sound: 'tick', alert: false, holdMs: CLAIMED_MS },
  confirmed: { icon: 'wallet', word: 'In your wallet ✓', detail: 'It is yours now', sound: 'chime', alert: false, holdMs: RESULT_MS },
  // Another claim (or the shop) took the token after this tap: nothing was sent; staff sort it out.
  moved: { icon: 'tag', word: 'This product was claimed meanwhile', detail: 'Nothing was sent from this tap: please ask staff', sound: 'twoTones', alert: true, holdMs: RESULT_MS * 2 },
  // ---- doors with a guest list (issue 19): the guest's first name and ticket type are shown large
  // above the word on the states that name a guest ----
  attention: { icon: 'triangle', word: "You're checked in", detail: 'Please wait a moment: staff will be with you', sound: 'twoTones', alert: true, holdMs: RESULT_MS * 2 },
  reentry: { icon: 'doorIn', word: 'Welcome back', detail: 'Your return is noted', sound: 'chime', alert: false, holdMs: RESULT_MS },
  no_reentry: { icon: 'noEntry', word: 'No re-entry at this event', detail: 'Please ask staff', sound: 'threeLow', alert: true, holdMs: RESULT_MS * 2 },
  not_allowed: { icon: 'noEntry', word: 'Not allowed at this door', detail: 'Please ask staff which entrance is yours', sound: 'threeLow', alert: true, holdMs: RESULT_MS * 2 },
  not_on_list: { icon: 'list', word: 'Not on the guest list', detail: 'Please ask staff', sound: 'threeLow', alert: true, holdMs: RESULT_MS * 2 },
  // Amber, not red: the ticket is real, only its payment is missing, which staff can often settle on the spot.
  not_paid: { icon: 'triangle', word: 'Not paid — see staff', detail: 'Your order is not paid yet: staff will help you', sound: 'twoTones', alert: true, holdMs: RESULT_MS * 2 },
  exit: { icon: 'doorOut', word: 'See you later', detail: 'Your exit is noted', sound: 'chime', alert: false, holdMs: RESULT_MS },
  not_inside: { icon: 'question', word: 'Not checked in', detail: 'This badge is not inside: please ask staff', sound: 'twoTones', alert: false, holdMs: RESULT_MS },
  bound: { icon: 'wristband', word: 'Wristband ready: you\'re checked in', detail: 'Tap it at every door', sound: 'chime', alert: false, holdMs: RESULT_MS },
  bind_taken: { icon: 'octagon', word: 'This wristband is taken — see staff', detail: 'It belongs to another guest', sound: 'threeLow', alert: true, holdMs: RESULT_MS * 2 },
  bind_waiting: { icon: 'scanFirst', word: 'Staff: scan the ticket first', detail: 'Then tap the wristband again', sound: 'oneLow', alert: false, holdMs: RESULT_MS },
}

const PATHS: Record<IconName, string> = {
  waves: '<path d="M14 34a14 14 0 0 1 0-20M20 29a7 7 0 0 1 0-10M26 24h0"/><path d="M30 12a18 18 0 0 1 0 24M36 8a24 24 0 0 1 0 32"/>',
  hourglass: '<path d="M14 6h20M14 42h20M16 6c0 10 16 12 16 18s-16 8-16 18M32 6c0 10-16 12-16 18s16 8 16 18"/>',
  check: '<circle cx="24" cy="24" r="19"/><path d="M14 25l7 7 13-15"/>',
  clockArrow: '<path d="M9 24a15 15 0 1 0 5-11"/><path d="M8 8v8h8"/><path d="M24 15v10l6 4"/>',
  octagon: '<path d="M16 4h16l12 12v16L32 44H16L4 32V16z"/><path d="M24 13v14M24 33v2"/>',
  question: '<rect x="5" y="5" width="38" height="38" rx="4"/><path d="M17 18a7 7 0 1 1 10 6c-2 1-3 3-3 5v1M24 36v2"/>',
  holdDown: '<path d="M24 4v22M15 17l9 9 9-9"/><rect x="8" y="32" width="32" height="10" rx="2"/>',
  unplugged: '<rect x="9" y="8" width="30" height="22" rx="3"/><path d="M24 30v5M24 35c0 5-6 4-6 9"/><path d="M5 43L43 5"/>',
  brokenLink: '<path d="M20 14l3-3a8 8 0 0 1 11 11l-3 3M28 34l-3 3a8 8 0 0 1-11-11l3-3"/><path d="M6 6l6 6M42 42l-6-6M16 4v5M32 44v-5"/>',
  padlock: '<rect x="9" y="21" width="30" height="22" rx="3"/><path d="M15 21v-6a9 9 0 0 1 18 0v6M24 30v5"/>',
  tag: '<path d="M6 9v13l20 20 16-16L22 6H9a3 3 0 0 0-3 3z"/><circle cx="15" cy="15" r="3"/>',
  phoneQr: '<rect x="12" y="3" width="24" height="42" rx="4"/><path d="M21 39h6"/><path d="M18 10h5v5h-5zM25 10h5v5h-5zM18 17h5v5h-5zM27 19v3h3"/>',
  phoneOut: '<rect x="4" y="5" width="22" height="38" rx="4"/><path d="M12 37h6"/><path d="M30 24h14M38 17l7 7-7 7"/>',
  stopwatch: '<circle cx="24" cy="27" r="16"/><path d="M24 27v-9M19 4h10M24 4v7M38 11l3 3"/>',
  plane: '<path d="M4 22L44 5 35 43 22 29z"/><path d="M22 29L44 5M22 29v12l6-7"/>',
  wallet: '<path d="M8 13V10a4 4 0 0 1 4-4h24"/><rect x="4" y="13" width="40" height="29" rx="4"/><path d="M15 28l6 6 11-12"/>',
  triangle: '<path d="M24 5L45 42H3z"/><path d="M24 18v12M24 36v1"/>',
  doorIn: '<path d="M28 5h12v38H28"/><path d="M4 24h20M16 16l8 8-8 8"/>',
  doorOut: '<path d="M20 5H8v38h12"/><path d="M22 24h22M36 16l8 8-8 8"/>',
  noEntry: '<circle cx="24" cy="24" r="19"/><path d="M12 24h24"/>',
  list: '<rect x="8" y="5" width="32" height="38" rx="3"/><path d="M15 15h18M15 23h18M15 31h10"/><path d="M33 33l8 8M41 33l-8 8"/>',
  wristband: '<ellipse cx="24" cy="24" rx="18" ry="11"/><rect x="17" y="18" width="14" height="12" rx="2"/><path d="M14 36l3 6M34 36l-3 6"/>',
  scanFirst: '<path d="M6 14V6h8M34 6h8v8M42 34v8h-8M14 42H6v-8"/><path d="M14 16v16M19 16v16M24 16v16M30 16v16M34 16v16"/>',
}

/** The icon as inline SVG (drawn in currentColor, so it takes the state's text colour). */
export function iconSvg(name: IconName, label = ''): string {
  const a11y = label ? `role="img" aria-label="${label}"` : 'aria-hidden="true"'
  return `<svg class="icon" data-icon="${name}" viewBox="0 0 48 48" ${a11y} fill="none" stroke="currentColor" stroke-width="3.5" stroke-linecap="round" stroke-linejoin="round">${PATHS[name]}</svg>`
}

/** HH:MM in the kiosk's own time zone (the venue's). */
export function clockTime(iso: string, seconds = false): string {
  return new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', ...(seconds ? { second: '2-digit' } : {}), hourCycle: 'h23' }).format(new Date(iso))
}
