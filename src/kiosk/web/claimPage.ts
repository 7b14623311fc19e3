/*
 * The phone page of a claim link (GET /c/:token). Static like the kiosk pages: the claim itself
 * comes from POST /c/:token/open, so the HTML holds nothing of it and the token stays in the path.
 * Served with KIOSK_CSP (pages.ts): self only, so the phone loads nothing from anywhere else.
 */

export const CLAIM_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">
<meta name="referrer" content="no-referrer">
<meta name="color-scheme" content="light">
<title>Claim your token</title>
<link rel="icon" href="/kiosk/assets/icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/kiosk/assets/claim.css">
<script type="module" src="/kiosk/assets/claim.js"></script>
</head>
<body class="phone">
<main id="claim" data-state="loading">
  <section id="outcome" class="outcome" aria-labelledby="outcome-word">
    <div id="outcome-icon" class="outcome-icon"></div>
    <div id="outcome-status" role="status"><p id="outcome-word" class="word">Opening your claim…</p></div>
    <div id="outcome-alert" role="alert"></div>
    <p id="outcome-timer" class="timer" hidden></p>
  </section>
  <article id="product" class="product" hidden>
    <div id="picture" class="picture"></div>
    <div class="product-text">
      <p id="kicker" class="kicker"></p>
      <h1 id="product-name"></h1>
      <p id="product-description" class="description"></p>
      <dl id="product-attributes" class="attributes"></dl>
    </div>
  </article>
  <form id="form" class="address" novalidate hidden>
    <label id="recipient-label" for="recipient">Your wallet address</label>
    <div class="field">
      <input id="recipient" name="recipient" type="text" inputmode="text" autocomplete="off" autocorrect="off" autocapitalize="off" spellcheck="false" enterkeyhint="send" aria-describedby="hint field-alert">
      <button id="paste" type="button" hidden>Paste</button>
    </div>
    <p id="hint" class="hint"></p>
    <div id="field-alert" class="field-alert" role="alert"></div>
    <div id="resolved" class="resolved" hidden></div>
    <button id="send" type="submit" class="send" disabled>Send to my wallet</button>
    <p id="expires" class="expires"></p>
  </form>
</main>
</body>
</html>
`
