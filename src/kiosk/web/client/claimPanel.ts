/*
 * The claim section of the result panel: the product (or event) card, the phone hand-off QR, and the
 * address field with its on-screen keyboard. It only draws and collects; kiosk.ts decides the states
 * and makes the calls. The field is validated as typed with the gateway's own parser.
 */
import { ADDRESS_INPUT_MESSAGES, parseAddressInput } from '../../../claims/addressInput.js'
import type { ClaimSummary, ProductCard } from '../../../wire/feedProtocol.js'
import type { Handoff } from './claimApi.js'
import { buildKeyboard, type Key } from './keyboard.js'
import { qrElement } from './qrElement.js'

export type PanelMode = 'product' | 'handoff'

export type ClaimPanel = {
  show(p: { claim: ClaimSummary; mode: PanelMode; handoff: Handoff | null; wifiName: string | null }): void
  hide(): void
  /** The claim on screen, if any. */
  readonly claimId: number | null
  /** A physical keystroke (a USB scanner): always into the field. */
  scannerChar(c: string): void
  scannerBack(): void
  scannerEnter(): void
  setConnected(connected: boolean): void
  /** An address is on its way to the gateway: no second send. */
  setSending(sending: boolean): void
  setPhoneBusy(busy: boolean): void
  phoneError(message: string): void
  addressError(message: string): void
}

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T

/** An error under a control: an alert while it says something, nothing at all (no empty alert region) otherwise. */
function setError(el: HTMLElement, message: string): void {
  el.textContent = message
  if (message) el.setAttribute('role', 'alert')
  else el.removeAttribute('role')
}

/** A scanner types a whole code within milliseconds: a keystroke after a longer pause starts a new code. */
const SCAN_GAP_MS = 1500

export function createClaimPanel(p: { onPhone: () => void; onSend: (recipient: string) => void }): ClaimPanel {
  const section = $('claim')
  const input = $<HTMLInputElement>('recipient')
  const send = $<HTMLButtonElement>('send')
  const phone = $<HTMLButtonElement>('phone')
  const typeButton = $<HTMLButtonElement>('type')
  const keyboardEl = $('keyboard')
  const img = $<HTMLImageElement>('product-img')
  const placeholder = $('product-placeholder')

  let claimId: number | null = null
  let mode: PanelMode = 'product'
  let connected = true
  let sending = false
  let phoneBusy = false
  let keyboardOpen = false
  // Where the field's text came from: a scan starts a new value unless it continues its own burst
  // (a scanner's Enter ends one; text from the on-screen keys is never continued by a scan).
  let source: 'keys' | 'screen' = 'screen'
  let scanDone = false
  let lastKeyAt = 0

  const verdict = () => parseAddressInput(input.value)
  const canSend = () => {
    const v = verdict()
    return connected && !sending && (v.ok || v.reason === 'name')
  }

  const keyboard = buildKeyboard(keyboardEl, (key: Key) => {
    source = 'screen'
    if ('char' in key) setValue(input.value + key.char)
    else if (key.action === 'back') setValue(input.value.slice(0, -1))
    else if (key.action === 'clear') setValue('')
    else trySend()
  })

  function renderField(): void {
    const v = verdict()
    const hint = $('address-hint')
    hint.textContent = v.ok ? 'Looks like a wallet address: press Send' : ADDRESS_INPUT_MESSAGES[v.reason]
    hint.dataset.verdict = v.ok ? 'ok' : v.reason
    input.setAttribute('aria-invalid', String(!v.ok && (v.reason === 'checksum' || v.reason === 'invalid')))
    send.disabled = !canSend()
    keyboard.setSendEnabled(canSend())
  }

  function setValue(value: string): void {
    input.value = value
    // The end is what is being typed: keep it in view.
    input.scrollLeft = input.scrollWidth
    setError($('address-error'), '')
    renderField()
  }

  function trySend(): void {
    const v = verdict()
    if (!(v.ok || v.reason === 'name')) {
      setError($('address-error'), ADDRESS_INPUT_MESSAGES[v.reason])
      return
    }
    if (!canSend()) return
    p.onSend(input.value.trim())
  }

  function renderLayout(): void {
    $('product').hidden = keyboardOpen || mode !== 'product'
    $('handoff').hidden = keyboardOpen || mode !== 'handoff'
    keyboardEl.hidden = !keyboardOpen
    phone.hidden = mode !== 'product'
    typeButton.textContent = keyboardOpen ? 'Hide the keyboard' : 'Type your address'
    typeButton.setAttribute('aria-expanded', String(keyboardOpen))
    $('address-label').textContent = mode === 'handoff' ? 'Or scan or type your address here' : 'Or scan your wallet’s QR, or type your address'
    section.dataset.keyboard = String(keyboardOpen)
  }

  function showCard(product: ProductCard): void {
    $('product-name').textContent = product.name
    const description = $('product-description')
    description.textContent = product.description ?? ''
    description.hidden = !product.description
    const list = $('product-attributes')
    list.replaceChildren(
      ...product.attributes.map(({ trait, value }) => {
        const li = document.createElement('li')
        const t = document.createElement('span')
        t.className = 'trait'
        t.textContent = trait
        const v = document.createElement('b')
        v.textContent = value
        li.append(t, v)
        return li
      }),
    )
    list.hidden = product.attributes.length === 0
    if (product.image) {
      // Shown once it has loaded; a broken or missing picture shows the placeholder instead.
      if (img.getAttribute('src') !== product.image) {
        img.hidden = true
        placeholder.hidden = true
        img.src = product.image
      }
    } else {
      img.removeAttribute('src')
      img.hidden = true
      placeholder.hidden = false
    }
  }

  img.addEventListener('load', () => {
    img.hidden = false
    placeholder.hidden = true
  })
  img.addEventListener('error', () => {
    img.hidden = true
    placeholder.hidden = false
  })
  phone.addEventListener('click', () => {
    if (!phoneBusy) p.onPhone()
  })
  send.addEventListener('click', trySend)
  typeButton.addEventListener('click', () => {
    keyboardOpen = !keyboardOpen
    renderLayout()
  })
  // A touch between two scans: the next scan is a new code.
  section.addEventListener('pointerdown', () => (source = 'screen'))
  // The field is typed into only through the on-screen keyboard and the scanner (captured keys).
  input.addEventListener('input', () => setValue(input.value))

  return {
    show({ claim, mode: next, handoff, wifiName }) {
      if (claim.id !== claimId) {
        claimId = claim.id
        keyboardOpen = false
        sending = false
        phoneBusy = false
        scanDone = false
        source = 'screen'
        phone.disabled = false
        setError($('phone-error'), '')
        setValue('')
      }
      mode = next
      showCard(claim.product)
      const qr = $('qr')
      if (handoff) {
        qr.dataset.claimUrl = handoff.url
        qr.replaceChildren(...[qrElement(handoff.svg)].filter((el) => el !== null))
      } else {
        delete qr.dataset.claimUrl
        qr.replaceChildren()
      }
      $('wifi').hidden = !wifiName
      $('wifi-name').textContent = wifiName ?? ''
      section.hidden = false
      renderLayout()
      renderField()
    },
    hide() {
      section.hidden = true
      claimId = null
      keyboardOpen = false
      setValue('')
      setError($('phone-error'), '')
      delete $('qr').dataset.claimUrl
      $('qr').replaceChildren()
    },
    get claimId() {
      return claimId
    },
    scannerChar(c) {
      const fresh = scanDone || source !== 'keys' || Date.now() - lastKeyAt > SCAN_GAP_MS
      lastKeyAt = Date.now()
      scanDone = false
      source = 'keys'
      setValue((fresh ? '' : input.value) + c)
    },
    scannerBack() {
      lastKeyAt = Date.now()
      scanDone = false
      source = 'keys'
      setValue(input.value.slice(0, -1))
    },
    scannerEnter() {
      scanDone = true
      trySend()
    },
    setConnected(value) {
      connected = value
      phone.disabled = !value || phoneBusy
      renderField()
    },
    setSending(value) {
      sending = value
      send.textContent = value ? 'Sending…' : 'Send'
      renderField()
    },
    setPhoneBusy(busy) {
      phoneBusy = busy
      phone.disabled = busy || !connected
      phone.textContent = busy ? 'Making your link…' : 'Finish on your phone'
    },
    phoneError(message) {
      setError($('phone-error'), message)
    },
    addressError(message) {
      setError($('address-error'), message)
    },
  }
}
