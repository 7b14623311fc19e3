/*
 * The HTML of the web console (issue 28): the sign-in page and the console's shell. Static like the
 * kiosk pages: everything the operator sees comes from /console/api with the session cookie, so the
 * HTML holds no data and no secret, and can be cached like any asset.
 */
import { MAP_FIELDS } from '../../attendees/columnMap.js'
import { KIOSK_CSP, numbersSection, pageHead } from './pages.js'

/**
 * The kiosk pages' policy (self only, nothing inline, nothing framed), except that forms may post
 * to the gateway itself: the console's forms are sent by script, but a form submitted before its
 * script ran (a slow first load) must go nowhere else.
 */
export const CONSOLE_CSP = KIOSK_CSP.replace("form-action 'none'", "form-action 'self'")

const head = (title: string, script: string) => pageHead({ title, assets: '/console/assets', stylesheet: 'console.css', script })

export const SIGNIN_HTML = `${head('Sign in · tapgate console', 'signin.js')}
<body class="console signin">
<main class="signin-box" aria-labelledby="signin-title">
  <h1 id="signin-title"><span class="brand">tapgate</span> console</h1>
  <p id="signin-status" role="status">Signing in…</p>
  <div id="signin-problem" role="alert"></div>
  <p id="signin-command" class="command" hidden><code>tapgate console-link --team &lt;id&gt;</code></p>
  <button id="signin-retry" type="button" hidden>Try again</button>
</main>
</body>
</html>
`

/**
 * A labelled form control with its hint and its error slot (`<id>-error`), both named by its
 * aria-describedby: the console shows a 400's message for this body field there.
 */
const field = (p: { id: string; label: string; name: string; attrs?: string; options?: string; textarea?: boolean; hint?: string; describedBy?: string }) => {
  const described = `aria-describedby="${p.hint ? `${p.id}-hint ` : ''}${p.id}-error${p.describedBy ? ` ${p.describedBy}` : ''}"`
  const control =
    p.options !== undefined
      ? `<select id="${p.id}" name="${p.name}" ${p.attrs ?? ''} ${described}>${p.options}</select>`
      : p.textarea
        ? `<textarea id="${p.id}" name="${p.name}" ${p.attrs ?? ''} ${described}></textarea>`
        : `<input id="${p.id}" name="${p.name}" ${p.attrs ?? ''} ${described}>`
  return `<div class="field">
      <label for="${p.id}">${p.label}</label>
      ${control}
      ${p.hint ? `<p id="${p.id}-hint" class="hint">${p.hint}</p>` : ''}
      <p id="${p.id}-error" class="field-error" hidden></p>
    </div>`
}

/**
 * A file upload (the file, Upload) and the block its answer goes to (`result`): a report, or a bad
 * file's problems at their rows, which the file input names in its aria-describedby.
 */
const uploadForm = (p: { form: string; id: string; label: string; accept: string; hint: string; result: string; more?: string }) => `<form id="${p.form}" novalidate>
            <div class="row upload-row">
              ${field({ id: p.id, label: p.label, name: 'file', attrs: `type="file" accept="${p.accept}"`, hint: p.hint, describedBy: p.result })}
              <button type="submit" class="primary">Upload</button>
            </div>
            ${p.more ?? ''}
          </form>
          <div id="${p.result}" class="import-result" tabindex="-1" hidden></div>`

export const CONSOLE_HTML = `${head('tapgate console', 'console.js')}
<body class="console">
<header class="console-top">
  <p class="title"><span class="brand">tapgate</span> <span id="team-name" class="team">…</span></p>
  <button id="sign-out" type="button">Sign out</button>
</header>
<nav id="tabs" class="tabs" role="tablist" aria-label="Console sections">
  <button id="tab-overview" role="tab" type="button" data-tab="overview" aria-controls="panel-overview" aria-selected="true">Overview</button>
  <button id="tab-stations" role="tab" type="button" data-tab="stations" aria-controls="panel-stations" aria-selected="false" tabindex="-1">Stations</button>
  <button id="tab-events" role="tab" type="button" data-tab="events" aria-controls="panel-events" aria-selected="false" tabindex="-1">Events</button>
  <button id="tab-products" role="tab" type="button" data-tab="products" aria-controls="panel-products" aria-selected="false" tabindex="-1">Products</button>
  <button id="tab-keys" role="tab" type="button" data-tab="keys" aria-controls="panel-keys" aria-selected="false" tabindex="-1">API keys</button>
  <button id="tab-taps" role="tab" type="button" data-tab="taps" aria-controls="panel-taps" aria-selected="false" tabindex="-1">Taps</button>
</nav>
<main id="main">
<section id="panel-overview" class="panel" role="tabpanel" aria-labelledby="tab-overview">
  <div class="panel-head">
    <h1>Overview</h1>
    <p id="overview-updated" class="muted" aria-live="off"></p>
  </div>
  <div id="totals" class="totals">
    <div><b id="total-today">–</b> taps today</div>
    <div><b id="total-accepted">–</b> accepted</div>
    <div><b id="total-refused">–</b> refused</div>
  </div>
  <ul id="overview-stations" class="station-cards" aria-label="Stations"></ul>
  <p id="overview-empty" class="empty" hidden>No stations yet. Create one under <b>Stations</b>; a station is one reader at one door or counter.</p>
</section>

<section id="panel-stations" class="panel" role="tabpanel" aria-labelledby="tab-stations" hidden>
  <div class="panel-head"><h1>Stations</h1></div>
  <div class="columns">
    <div class="column">
      <form id="station-create-form" class="card" novalidate>
        <h2>New station</h2>
        ${field({ id: 'new-station-name', label: 'Name', name: 'name', attrs: 'autocomplete="off" maxlength="100" placeholder="e.g. Main entrance" enterkeyhint="done"' })}
        <button type="submit" class="primary">Create station</button>
      </form>
      <div id="station-secret" class="secret" tabindex="-1" hidden></div>
      <section class="card" aria-labelledby="station-list-title">
        <h2 id="station-list-title">Your stations</h2>
        <ul id="station-list" class="station-list"></ul>
        <p id="station-list-empty" class="empty" hidden>None yet.</p>
      </section>
    </div>
    <div class="column">
      <p id="station-none" class="card empty">Choose a station to rename it, set its mode and event, its staff PIN and its kiosk screens.</p>
      <section id="station-detail" class="card detail" aria-labelledby="station-title" tabindex="-1" hidden>
        <h2 id="station-title"></h2>
        <p id="station-meta" class="muted"></p>
        <p id="station-revoked" class="revoked" hidden></p>
        <div id="station-controls">
          <form id="station-rename-form" novalidate>
            <div class="row">
              ${field({ id: 'station-name', label: 'Name', name: 'name', attrs: 'autocomplete="off" maxlength="100"' })}
              <button type="submit">Rename</button>
            </div>
          </form>
          <form id="station-settings-form" novalidate>
            <h3>What it does</h3>
            <div class="row">
              ${field({ id: 'station-mode', label: 'Mode', name: 'mode', options: '<option value="" disabled>Not set</option><option value="checkin">Check-in</option><option value="bind">Bind wristbands</option><option value="exit">Exit</option><option value="claim">Claim (products)</option><option value="closed">Closed</option>' })}
              ${field({ id: 'station-event', label: 'Event', name: 'eventId', options: '<option value="">No event</option>', hint: 'Check-in, bind and exit need an event.' })}
              <button type="submit">Save</button>
            </div>
          </form>
          <form id="station-pin-form" novalidate>
            <h3>Staff PIN</h3>
            <div class="row">
              ${field({ id: 'station-pin', label: 'New PIN', name: 'pin', attrs: 'type="password" inputmode="numeric" autocomplete="new-password" maxlength="12"', hint: '4 to 12 digits. Staff enter it on the kiosk’s staff view.' })}
              <button type="submit">Set PIN</button>
            </div>
          </form>
          <section class="kiosk" aria-labelledby="kiosk-title">
            <h3 id="kiosk-title">Kiosk screens</h3>
            <p class="hint">Each press makes a new kiosk link. Open it on the screen beside the reader, or scan the code with it.</p>
            <button id="kiosk-url-button" type="button">Kiosk URL</button>
            <div id="kiosk-link" class="kiosk-link" hidden>
              <figure class="qr-figure">
                <div id="kiosk-qr" class="qr" role="img" aria-label="QR code of the kiosk URL"></div>
                <figcaption>Scan with the kiosk’s camera, or open the URL below on it.</figcaption>
              </figure>
              <div class="urls">
                <p class="label">Kiosk URL</p>
                <p class="url-line"><code id="kiosk-url" class="url"></code></p>
                <p id="kiosk-url-copy"></p>
                <p class="label">Staff view</p>
                <p class="url-line"><code id="staff-url" class="url"></code></p>
                <p id="staff-url-copy"></p>
              </div>
            </div>
            <h3>Kiosk links in use</h3>
            <ul id="kiosk-tokens" class="token-list"></ul>
          </section>
          <section class="danger-zone" aria-labelledby="revoke-title">
            <h3 id="revoke-title">Revoke the station</h3>
            <p class="hint">Its reader and every kiosk link of it stop working at once. This cannot be undone.</p>
            <button id="station-revoke" type="button" class="danger">Revoke station</button>
          </section>
        </div>
      </section>
    </div>
  </div>
</section>

<section id="panel-events" class="panel" role="tabpanel" aria-labelledby="tab-events" hidden>
  <div class="panel-head"><h1>Events</h1></div>
  <div class="columns">
    <div class="column">
      <form id="event-create-form" class="card" novalidate>
        <h2>New event</h2>
        ${field({ id: 'new-event-name', label: 'Name', name: 'name', attrs: 'autocomplete="off" maxlength="200" placeholder="e.g. Main door" enterkeyhint="done"' })}
        <button type="submit" class="primary">Create event</button>
      </form>
      <section class="card" aria-labelledby="event-list-title">
        <h2 id="event-list-title">Your events</h2>
        <ul id="event-list" class="station-list event-list"></ul>
        <p id="event-list-empty" class="empty" hidden>None yet.</p>
      </section>
    </div>
    <div class="column">
      <p id="event-none" class="card empty">Choose an event for its door settings, its guest list and its numbers.</p>
      <section id="event-detail" class="card detail" aria-labelledby="event-title" tabindex="-1" hidden>
        <h2 id="event-title"></h2>
        <p id="event-meta" class="muted"></p>
        <form id="event-settings-form" novalidate>
          <h3>At the door</h3>
          <div class="row">
            ${field({ id: 'event-reentry', label: 'Re-entry', name: 'reentry', options: '<option value="true">Allowed</option><option value="false">Refused</option>', hint: 'May a guest who went out come back in?' })}
            ${field({ id: 'event-public-names', label: 'The kiosk shows', name: 'publicNames', options: '<option value="first">First name</option><option value="full">Full name</option>', hint: 'The guest’s name on the public screen.' })}
            ${field({ id: 'event-admit-unpaid', label: 'Unpaid orders', name: 'admitUnpaid', options: '<option value="false">Refused</option><option value="true">Let in</option>', hint: 'pretix pending, Hi.Events awaiting payment.' })}
          </div>
          <button type="submit">Save door settings</button>
        </form>
        <section class="guests" aria-labelledby="guests-title">
          <h3 id="guests-title">Guest list</h3>
          ${uploadForm({ form: 'guest-upload-form', id: 'guest-file', label: 'Guest list file (.csv or .xlsx)', accept: '.csv,.xlsx,text/csv,application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', hint: 'The export of pretix, Eventbrite, Luma, Hi.Events or Tito, as downloaded. Guests already on the list are updated by ticket code; nobody is removed. A file with a bad row imports nothing.', result: 'guest-import', more: field({ id: 'guest-map', label: 'Columns, for a file from another tool (optional)', name: 'map', attrs: 'type="text" autocomplete="off" spellcheck="false" maxlength="1000"', hint: `Our field=its column, e.g. <code>name=Full name,email=E-mail,ticket=Barcode</code> (fields: ${MAP_FIELDS.join(', ')}). Empty: the tool is told by the header.` }) })}
          <form id="guest-search-form" role="search" novalidate>
            <div class="row">
              ${field({ id: 'guest-q', label: 'Search the guests', name: 'q', attrs: 'type="search" autocomplete="off" maxlength="200" spellcheck="false" enterkeyhint="search"', hint: 'Name, email or ticket code; empty: everyone.' })}
              <button type="submit">Search</button>
            </div>
          </form>
          <p id="guest-count" class="guest-count" aria-live="polite"></p>
          <table id="guests-table" class="cards">
            <thead><tr><th>Name</th><th>Email</th><th>Ticket type</th><th>Ticket code</th><th>Notes</th></tr></thead>
            <tbody id="guests"></tbody>
          </table>
          <div id="guest-pager" class="pager" hidden>
            <button id="guest-prev" type="button">Previous</button>
            <button id="guest-next" type="button">Next</button>
          </div>
          <p class="export"><a id="guest-export" class="button-link" href="/console/api/events" download>Download CSV</a> <span class="hint">Every guest, with their check-in, exits and chips.</span></p>
        </section>
      </section>
      ${numbersSection('Numbers')}
    </div>
  </div>
</section>

<section id="panel-products" class="panel" role="tabpanel" aria-labelledby="tab-products" hidden>
  <div class="panel-head"><h1>Products</h1></div>
  <div class="columns">
    <div class="column">
      <section class="product-section" aria-labelledby="product-list-title">
        <h2 id="product-list-title">Your products</h2>
        <p class="hint">Each is a token with the chips sewn or stuck into the thing it stands for. A chip’s UID opens its taps.</p>
        <ul id="product-list" class="product-list"></ul>
        <p id="product-list-empty" class="empty" hidden>No products yet: they come with <code>tapgate import</code> or the API (<code>POST /phygitals</code>).</p>
      </section>
    </div>
    <div class="column">
      <p id="product-none" class="card empty">Choose <b>Edit details</b> on a product to change its name, collection, description and image.</p>
      <section id="product-detail" class="card detail" aria-labelledby="product-title" tabindex="-1" hidden>
        <h2 id="product-title"></h2>
        <p id="product-meta" class="muted"></p>
        <form id="product-form" novalidate>
          <h3>What wallets and the kiosk show</h3>
          ${field({ id: 'product-name', label: 'Name', name: 'name', attrs: 'autocomplete="off" maxlength="200" data-field="metadata.name"' })}
          ${field({ id: 'product-collection', label: 'Collection', name: 'collection', attrs: 'autocomplete="off" maxlength="200" data-field="metadata.collection"' })}
          ${field({ id: 'product-description', label: 'Description', name: 'description', textarea: true, attrs: 'rows="4" maxlength="4000" data-field="metadata.description"' })}
          ${field({ id: 'product-image', label: 'Image URL', name: 'image', attrs: 'type="url" inputmode="url" autocomplete="off" spellcheck="false" placeholder="https://… or ipfs://…" data-field="metadata.image"', hint: 'https://, ipfs:// or empty for none. The gateway serves a copy to the kiosk.' })}
          <p class="hint">Every other field of the metadata (attributes, media) stays as it is.</p>
          <div class="save-row">
            <button type="submit" class="primary">Save</button>
            <p id="product-saved" class="saved" role="status"></p>
          </div>
        </form>
      </section>

      <section class="card" aria-labelledby="chips-title">
        <h2 id="chips-title">Register chips</h2>
        ${uploadForm({ form: 'chip-upload-form', id: 'chip-file', label: 'Chip file (.csv or .json)', accept: '.csv,.json,text/csv,application/json', hint: 'CSV columns: <code>uid</code>, and optional <code>profile</code>, <code>group</code>, <code>product</code> (an ID from this page). Or the <code>tapgate import</code> JSON file of this team. A file with a bad row imports nothing.', result: 'chip-import' })}
      </section>

      <section id="provision" class="card" aria-labelledby="provision-title">
        <h2 id="provision-title">Provision blank chips</h2>
        <p class="hint">Writes this team’s keys and tap URL to factory-new NTAG 424 DNA chips, one after another, on this gateway’s own reader.</p>
        <p id="provision-readers" class="readers"></p>
        <p id="provision-problem" class="problem" role="alert" hidden></p>
        <form id="provision-form" novalidate>
          <div class="row">
            ${field({ id: 'provision-profile', label: 'Chip profile', name: 'profile', options: '<option value="">Loading…</option>', hint: 'Its keys go on the chips. LRP profiles are provisioned with the CLI.' })}
          </div>
          ${field({ id: 'provision-url', label: 'Tap URL template', name: 'urlTemplate', attrs: 'autocomplete="off" spellcheck="false" inputmode="url"', hint: 'What a tap opens: the chip fills in <code>{picc}</code> and <code>{mac}</code>. The profile’s own, unless you change it for this run.' })}
          <div class="check">
            <input id="provision-unverified" name="allowUnverified" type="checkbox">
            <label for="provision-unverified">Accept chips without NXP’s originality signature (software cards)</label>
          </div>
          <button type="submit" class="primary">Start</button>
        </form>
        <div id="provision-run" class="provision-run" tabindex="-1" hidden>
          <p id="provision-place" class="place" aria-live="polite"></p>
          <p id="provision-plan" class="muted plan"></p>
          <dl id="provision-counts" class="import-counts"></dl>
          <ol id="provision-cards" class="provision-cards" aria-label="Chips of this run, newest first"></ol>
          <button id="provision-stop" type="button">Stop</button>
        </div>
      </section>
    </div>
  </div>
</section>

<section id="panel-keys" class="panel" role="tabpanel" aria-labelledby="tab-keys" hidden>
  <div class="panel-head"><h1>API keys</h1></div>
  <form id="key-create-form" class="card" novalidate>
    <h2>New API key</h2>
    <p class="hint">A key lets a program call this gateway’s API for your team (header <code>x-service-api-key</code>).</p>
    <div class="row">
      ${field({ id: 'key-label', label: 'Label (optional)', name: 'label', attrs: 'autocomplete="off" maxlength="100" placeholder="e.g. Shop backend"' })}
      <button type="submit" class="primary">Create key</button>
    </div>
  </form>
  <div id="key-secret" class="secret" tabindex="-1" hidden></div>
  <section class="card" aria-labelledby="keys-title">
    <h2 id="keys-title">Keys</h2>
    <table id="keys-table" class="cards">
      <thead><tr><th>Key</th><th>Label</th><th>Created</th><th>Status</th><th><span class="visually-hidden">Actions</span></th></tr></thead>
      <tbody id="keys"></tbody>
    </table>
    <p id="keys-empty" class="empty" hidden>No keys.</p>
  </section>
</section>

<section id="panel-taps" class="panel" role="tabpanel" aria-labelledby="tab-taps" hidden>
  <div class="panel-head"><h1>Taps</h1></div>
  <form id="taps-filter" class="card filters" role="search" novalidate>
    ${field({ id: 'filter-uid', label: 'Chip UID', name: 'uid', attrs: 'autocomplete="off" autocapitalize="characters" spellcheck="false" placeholder="Any chip"' })}
    ${field({ id: 'filter-station', label: 'Station', name: 'stationId', options: '<option value="">All stations</option>' })}
    ${field({ id: 'filter-verdict', label: 'Verdict', name: 'verdict', options: '<option value="">All</option><option value="accepted">Accepted</option><option value="refused">Refused</option>' })}
    <button type="submit" class="primary">Show</button>
  </form>
  <section id="taps-results" class="card" aria-labelledby="taps-title" tabindex="-1">
    <h2 id="taps-title">Newest first</h2>
    <table id="taps-table" class="cards">
      <thead><tr><th>Time</th><th>Station</th><th>Chip UID</th><th>Verdict</th><th>Reason</th><th>Counter</th><th>Source</th></tr></thead>
      <tbody id="taps"></tbody>
    </table>
    <p id="taps-empty" class="empty" hidden>No taps match.</p>
  </section>
</section>
</main>

<section id="signed-out" class="signed-out" aria-labelledby="signed-out-title" tabindex="-1" hidden>
  <h1 id="signed-out-title">Signed out — ask for a new console link</h1>
  <p id="signed-out-why"></p>
  <p>Whoever runs the gateway makes one on its machine:</p>
  <p class="command"><code id="signed-out-command">tapgate console-link --team &lt;id&gt;</code></p>
</section>

<p id="status" class="status" role="status"></p>
</body>
</html>
`
