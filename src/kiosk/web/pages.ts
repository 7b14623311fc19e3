/*
 * The HTML of the two kiosk pages. Static: everything that changes comes over /kiosk/ws, so the
 * pages themselves carry no data and can be cached by the browser like any asset.
 */

/**
 * Self only: scripts, styles, the socket and every image come from the gateway, and nothing can be
 * framed, posted elsewhere or injected inline. This is also what proves the no-other-origin rule in
 * the browser tests: a request elsewhere would be blocked and reported.
 */
export const KIOSK_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

/** A page's head: its title, and its one style sheet and one script from `assets` (the gateway's own). */
export const pageHead = (p: { title: string; assets: string; stylesheet: string; script: string }) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${p.title}</title>
<link rel="icon" href="/kiosk/assets/icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="${p.assets}/${p.stylesheet}">
<script type="module" src="${p.assets}/${p.script}"></script>
</head>`

const head = (title: string, script: string) => pageHead({ title, assets: '/kiosk/assets', stylesheet: 'kiosk.css', script })

export const ATTENDEE_HTML = `${head('Check-in', 'kiosk.js')}
<body class="attendee">
<div id="banner" class="banner" role="alert" hidden><span id="banner-text"></span><span class="code">Code TG-LINK</span></div>
<header class="top">
  <div class="event" id="event-name">Connecting…</div>
  <div class="reader" id="reader" data-reader="unknown">Reader: waiting</div>
  <div class="count"><span id="count" data-count="0">0</span> <span id="count-label">checked in</span></div>
</header>
<main id="result" class="result" data-state="offline">
  <div id="result-icon"></div>
  <div id="result-status" role="status"></div>
  <div id="result-alert" role="alert"></div>
  <section id="claim" class="claim" aria-label="Your claim" hidden>
    <div class="claim-main">
      <article id="product" class="product">
        <div class="product-image">
          <img id="product-img" alt="" hidden>
          <div id="product-placeholder" class="placeholder">
            <svg viewBox="0 0 48 48" aria-hidden="true" fill="none" stroke="currentColor" stroke-width="3" stroke-linecap="round" stroke-linejoin="round"><rect x="5" y="9" width="38" height="30" rx="3"/><path d="M5 33l11-11 9 9 6-6 12 12"/><circle cx="33" cy="18" r="3"/><path d="M4 44L44 4"/></svg>
            <span>No picture</span>
          </div>
        </div>
        <div class="product-text">
          <h2 id="product-name"></h2>
          <p id="product-description"></p>
          <ul id="product-attributes" class="attributes" aria-label="Details"></ul>
        </div>
      </article>
      <figure id="handoff" class="handoff" hidden>
        <div id="qr" class="qr" role="img" aria-label="QR code of your claim link"></div>
        <figcaption>
          <p class="scan">Scan with your phone’s camera</p>
          <p id="wifi" class="wifi" hidden>Wi-Fi: <b id="wifi-name"></b></p>
        </figcaption>
      </figure>
      <div id="keyboard" class="keyboard" role="group" aria-label="Keyboard" hidden></div>
    </div>
    <div class="ways">
      <button id="phone" type="button" class="primary">Finish on your phone</button>
      <p id="phone-error" class="error"></p>
      <label id="address-label" for="recipient">Or scan your wallet’s QR, or type your address</label>
      <div class="field">
        <input id="recipient" name="recipient" inputmode="none" autocomplete="off" autocapitalize="off" spellcheck="false" placeholder="0x…">
        <button id="send" type="button" disabled>Send</button>
      </div>
      <p id="address-hint" class="hint" aria-live="polite"></p>
      <p id="address-error" class="error"></p>
      <button id="type" type="button" aria-expanded="false" aria-controls="keyboard">Type your address</button>
    </div>
  </section>
  <div id="result-bar" class="bar" hidden><div></div></div>
</main>
<div id="still-there" class="still-there" role="alertdialog" aria-labelledby="still-there-word" hidden>
  <p id="still-there-word" class="word">Still there? Touch the screen to keep going</p>
  <p class="detail">Starting over in <b id="still-there-count">20</b> s</p>
  <button id="still-there-keep" type="button">Keep going</button>
</div>
<footer class="bottom">
  <ol id="strip" class="strip" aria-label="Last results"></ol>
  <div class="actions">
    <button id="sound" type="button" data-action="sound" aria-pressed="true">Sound on</button>
    <button id="staff" type="button" data-action="staff">Staff</button>
  </div>
</footer>
</body>
</html>
`

/**
 * An event's numbers, filled by staffNumbers.ts's renderStats (styled by numbers.css): the staff
 * view's and the console's Events tab. Hidden until the first numbers arrive.
 */
export const numbersSection = (title: string) => `<section id="numbers" class="card numbers" aria-labelledby="numbers-title" hidden>
      <h2 id="numbers-title">${title}</h2>
      <div class="big-counts">
        <div><b id="stat-checked">0</b><span id="stat-of">checked in</span></div>
        <div><b id="stat-inside">0</b>inside now</div>
        <div><b id="stat-refused">0</b>refused</div>
      </div>
      <div id="stat-progress" class="progress" role="progressbar" aria-label="Checked in of expected" aria-valuemin="0" aria-valuemax="100" aria-valuenow="0"><div></div></div>
      <ul id="per-type" class="per-type" aria-label="Per ticket type"></ul>
      <dl id="refused-detail"></dl>
      <figure id="chart" class="chart">
        <figcaption>Arrivals per 5 minutes</figcaption>
        <div id="chart-body"></div>
      </figure>
    </section>`

export const STAFF_HTML = `${head('Staff', 'staff.js')}
<body class="staff">
<header class="staff-top">
  <h1>Staff view<span id="station-name"></span> <span id="station-mode" class="muted"></span></h1>
  <a id="back" class="button" href="/kiosk">Kiosk screen</a>
</header>
<div id="banner" class="banner" role="alert" hidden><span id="banner-text"></span><span class="code">Code TG-LINK</span></div>
<section id="login" class="login" aria-labelledby="login-title">
  <h2 id="login-title">Enter the staff PIN</h2>
  <output id="pin-display" aria-live="polite" data-length="0">Enter PIN</output>
  <p id="pin-message" role="alert"></p>
  <div class="pinpad">
    <button type="button" data-key="1">1</button><button type="button" data-key="2">2</button><button type="button" data-key="3">3</button>
    <button type="button" data-key="4">4</button><button type="button" data-key="5">5</button><button type="button" data-key="6">6</button>
    <button type="button" data-key="7">7</button><button type="button" data-key="8">8</button><button type="button" data-key="9">9</button>
    <button type="button" data-key="back" aria-label="Delete last digit">⌫</button><button type="button" data-key="0">0</button><button type="button" data-key="enter">OK</button>
  </div>
</section>
<section id="panel" hidden>
  <div id="attention" class="attention" role="alert" hidden>
    <div><p class="attention-title">Needs attention</p><ul id="attention-list"></ul></div>
    <button id="attention-seen" type="button">Seen</button>
  </div>
  <div class="grid">
    <section id="door" class="card door" aria-labelledby="door-title" hidden>
      <h2 id="door-title">Guests</h2>
      <form id="ticket-form" class="stack">
        <label for="ticket" id="ticket-label">Ticket code</label>
        <div class="field-row">
          <input id="ticket" name="ticket" autocomplete="off" autocapitalize="off" spellcheck="false" enterkeyhint="go" placeholder="Scan or type the ticket code">
          <button id="ticket-go" type="submit" data-action="ticket">Find</button>
        </div>
      </form>
      <div id="armed" class="armed" role="status" hidden>
        <p><span id="armed-what">Ready to bind</span>: <b id="armed-name"></b> <span id="armed-type" class="pill"></span></p>
        <p class="muted">Tap the wristband on the reader now <span id="armed-left"></span></p>
        <button id="armed-cancel" type="button" data-action="bind-cancel">Cancel</button>
      </div>
      <form id="search-form" class="stack" role="search">
        <label for="search">Find a guest</label>
        <div class="field-row">
          <input id="search" name="search" enterkeyhint="search" autocomplete="off" autocapitalize="off" spellcheck="false" placeholder="Name, email or ticket code">
          <button type="submit" data-action="search">Search</button>
        </div>
      </form>
      <p id="door-message" role="status"></p>
      <ul id="results" class="results" aria-label="Guests found"></ul>
      <button id="export" type="button" data-action="export" class="quiet">Download the guest list (CSV)</button>
    </section>
    ${numbersSection('Numbers (every door)')}
    <section class="card" aria-labelledby="counts-title">
      <h2 id="counts-title">Counts</h2>
      <div class="big-counts">
        <div><b id="count-event">0</b>event</div>
        <div><b id="count-station">0</b>this station</div>
        <div><b id="count-5min">0</b>last 5 min</div>
        <div><b id="count-claimed">0</b>claimed here</div>
      </div>
      <dl id="counts-detail"></dl>
    </section>
    <section class="card" aria-labelledby="health-title">
      <h2 id="health-title">Health</h2>
      <dl id="health"></dl>
    </section>
    <section class="card" aria-labelledby="actions-title">
      <h2 id="actions-title">Station</h2>
      <form id="mode-form">
        <label for="mode">Mode</label>
        <select id="mode" data-action="mode"><option value="checkin">check-in</option><option value="bind">bind wristbands</option><option value="exit">exit</option><option value="claim">claim (products)</option><option value="closed">closed</option></select>
        <p>Event: <span id="mode-event"></span> <small>(the operator sets it)</small></p>
        <button type="submit" data-action="mode">Apply</button>
      </form>
      <form id="checkin-form">
        <label for="uid">UID</label>
        <input id="uid" autocomplete="off" spellcheck="false" placeholder="04AABBCCDDEE01">
        <button type="submit" data-action="check-in">Check in by hand</button>
      </form>
    </section>
  </div>
  <section class="card" aria-labelledby="claims-title">
    <h2 id="claims-title">Claims</h2>
    <table id="claims-table" class="cards">
      <thead><tr><th>Product</th><th>Taps</th><th>Claimed</th><th>2-tap registered</th><th>Links shown</th><th>Opened</th><th>Used</th><th>Links expired</th><th>Expired</th></tr></thead>
      <tbody id="claims"></tbody>
    </table>
  </section>
  <section class="card" aria-labelledby="feed-title">
    <h2 id="feed-title">Live feed</h2>
    <table id="feed-table" class="cards">
      <thead><tr><th>Time</th><th>Kind</th><th>Reader</th><th>Verdict</th><th>UID</th><th>Reason</th><th>Counter</th><th>Transaction</th></tr></thead>
      <tbody id="feed"></tbody>
    </table>
  </section>
  <nav class="thumb-bar" aria-label="Quick actions">
    <p id="action-result" role="status"></p>
    <div class="thumb-buttons">
      <button id="undo" type="button" data-action="undo">Undo last</button>
      <button id="dismiss" type="button" data-action="dismiss">Dismiss alert</button>
      <button id="test-chip" type="button" data-action="test-chip">Test chip 60 s</button>
      <button id="end" type="button" data-action="end">End session</button>
    </div>
  </nav>
</section>
</body>
</html>
`

/** The tab icon: the check-in screen's "tap" waves, so no request goes unanswered. */
export const ICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 48 48" fill="none" stroke="#0b1020" stroke-width="4" stroke-linecap="round"><rect width="48" height="48" rx="10" fill="#fde047" stroke="none"/><path d="M14 34a14 14 0 0 1 0-20M20 29a7 7 0 0 1 0-10M30 12a18 18 0 0 1 0 24M36 8a24 24 0 0 1 0 32"/></svg>`
