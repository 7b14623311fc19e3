/*
 * The console's Products tab (notes/console-contract-3.md, part C): the team's phygital tokens with
 * their image, token, owner on chain and chips (a chip's UID opens its taps), a product's metadata
 * edited (the same update as PATCH /phygitals/metadata: a bad field is refused next to itself, and the
 * fields the form does not show are sent back as they were), and chips registered from a file (the
 * same import as `tapgate import`; a bad row imports nothing, shown as the guest list upload does).
 * Provisioning blank chips is consoleProvisioning.ts.
 */
import { type ChipImport, chipFileType, type ConsoleApi, type Product } from './consoleApi.js'
import { $, button, clearFieldErrors, h, onSubmit, redraw, showFailure, type StatusLine, when } from './consoleDom.js'
import type { ConsoleState, Message } from './consoleState.js'
import { FILE_REFUSALS, fileError, nothingImported, refusedImport, refusedView, showOutcome } from './consoleUpload.js'
import { ownerWords, shortHex } from './consoleWords.js'

export type ProductsSection = { load(): Promise<void>; render(state: ConsoleState): void }

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`

/** The metadata fields the form edits; every other field of the object is sent back untouched. */
const FIELDS = [
  ['name', 'product-name'],
  ['collection', 'product-collection'],
  ['description', 'product-description'],
  ['image', 'product-image'],
] as const

/** A metadata field as the form shows it: the string stored, or empty (a field never set, or not a string). */
const textOf = (metadata: Record<string, unknown>, key: string) => (typeof metadata[key] === 'string' ? (metadata[key] as string) : '')

/**
 * @example
 * const products = createProducts({ api, dispatch, status, getState: () => state, showChipTaps: (uid) => taps.showChip(uid) })
 * await products.load()
 */
export function createProducts(p: {
  api: ConsoleApi
  dispatch: (message: Message) => void
  status: StatusLine
  getState: () => ConsoleState
  /** The Taps tab, filtered by this chip: its history. */
  showChipTaps: (uid: string) => void
}): ProductsSection {
  const { api, dispatch, status } = p
  const form = $<HTMLFormElement>('product-form')
  const uploadForm = $<HTMLFormElement>('chip-upload-form')
  const fileInput = $<HTMLInputElement>('chip-file')
  const selected = (): Product | undefined => {
    const state = p.getState()
    return state.products?.find((product) => product.id === state.selectedProductId)
  }

  async function load(): Promise<void> {
    const answer = await api.products()
    if (answer.ok) dispatch({ type: 'products', products: answer.body.products })
    else if (answer.status !== 401) status.show(`The products could not be loaded: ${answer.message}`, 'error')
  }

  function open(productId: number): void {
    dispatch({ type: 'selectProduct', productId })
    $('product-detail').focus()
  }

  // ---- the metadata form ----

  // Typing after "Saved" takes it away: what is on screen is no longer what was saved.
  form.addEventListener('input', () => dispatch({ type: 'productEdited' }))
  onSubmit(form, async () => {
    const product = selected()
    if (!product) return
    dispatch({ type: 'productEdited' })
    const metadata: Record<string, unknown> = { ...product.metadata }
    for (const [key, id] of FIELDS) metadata[key] = $<HTMLInputElement | HTMLTextAreaElement>(id).value.trim()
    const answer = await api.patchMetadata(product.id, metadata)
    if (!answer.ok) return showFailure(answer, status, form)
    dispatch({ type: 'productSaved', product: answer.body.product })
  })

  // ---- the chip file ----

  onSubmit(uploadForm, async () => {
    const file = fileInput.files?.[0]
    if (!file) return fileError(fileInput, 'Choose the chip file first: a .csv chip list or a tapgate import .json.')
    const answer = await api.importChips(file, chipFileType(file))
    if (answer.ok) {
      dispatch({ type: 'chipImport', outcome: { kind: 'imported', result: answer.body } })
      status.show(`${file.name}: ${plural(answer.body.chips, 'chip')} read, ${answer.body.summary.chips} registered or updated.`)
      uploadForm.reset()
      // The chips now sit under their products.
      await load()
      $('chip-import').focus()
      return
    }
    if (answer.status === 401) return
    if (!FILE_REFUSALS.has(answer.status)) return showFailure(answer, status, uploadForm)
    status.clear()
    dispatch({ type: 'chipImport', outcome: refusedImport(answer) })
    fileError(fileInput, nothingImported(answer.message))
  })

  // ---- the views ----

  /** The product's image, or a plain box when it has none or it does not load (the demo's is on the internet). */
  function picture(product: Product): HTMLElement {
    const box = h('div', { className: 'product-picture', data: { picture: 'none' } })
    const placeholder = () => box.replaceChildren(h('span', { className: 'placeholder', text: 'No image' }))
    // Only the gateway's own /media/ copy: the console's policy loads nothing from elsewhere.
    if (!product.imageUrl || !product.imageUrl.startsWith('/') || product.imageUrl.startsWith('//')) {
      placeholder()
      return box
    }
    const img = h('img', { attrs: { alt: `Picture of ${product.name || 'the product'}`, decoding: 'async', loading: 'lazy' } })
    img.addEventListener(
      'error',
      () => {
        box.dataset.picture = 'none'
        placeholder()
      },
      { once: true },
    )
    img.src = product.imageUrl
    box.dataset.picture = 'image'
    box.append(img)
    return box
  }

  function chipItem(product: Product, chip: Product['chips'][number]): HTMLElement {
    const uid = button('', () => p.showChipTaps(chip.uid), {
      className: 'chip-uid',
      attrs: { 'aria-label': `Taps of chip ${chip.uid}` },
      data: { focusKey: `chip-${product.id}-${chip.uid}`, uid: chip.uid },
    })
    uid.append(h('code', { text: chip.uid }))
    const about = [chip.profile, chip.lastTapAt ? `last tap ${when(chip.lastTapAt)}` : 'no tap yet'].filter((text): text is string => !!text).join(' · ')
    return h('li', { data: { uid: chip.uid } }, uid, h('span', { className: 'chip-about', text: about }))
  }

  function productItem(product: Product, selectedId: number | null): HTMLElement {
    const line = (label: string, value: Node | string, data: Record<string, string> = {}) => [h('dt', { text: label }), h('dd', { data }, value)]
    const chips =
      product.chips.length === 0
        ? h('span', { className: 'muted', text: 'None linked' })
        : h('ul', { className: 'chip-list', attrs: { 'aria-label': `Chips of ${product.name || `product ${product.id}`}` } }, ...product.chips.map((chip) => chipItem(product, chip)))
    const edit = button('Edit details', () => open(product.id), {
      attrs: { 'aria-label': `Edit the details of ${product.name || `product ${product.id}`}`, ...(product.id === selectedId ? { 'aria-current': 'true' } : {}) },
      data: { focusKey: `edit-${product.id}` },
    })
    return h(
      'li',
      { className: 'product-card', data: { productId: String(product.id) } },
      picture(product),
      h(
        'div',
        { className: 'product-head' },
        h('h3', { className: 'product-name', text: product.name || '(no name)' }),
        h('p', { className: 'muted product-collection', text: [product.collection, `ID ${product.id}`].filter(Boolean).join(' · ') }),
      ),
      h(
        'div',
        { className: 'product-body' },
        h(
          'dl',
          {},
          ...line('Token', h('span', { text: `#${product.tokenId} · ${shortHex(product.contract.address)}`, attrs: { title: `${product.contract.address} on chain ${product.contract.chainId}` } }), { field: 'token' }),
          ...line('Owner', ownerWords(product.owner), { field: 'owner', owner: product.owner.state }),
          ...line('Chips', chips, { field: 'chips' }),
        ),
        edit,
      ),
    )
  }

  function renderDetail(product: Product | undefined, state: ConsoleState, chosenAnew: boolean, changed: boolean): void {
    $('product-none').hidden = product !== undefined
    $('product-detail').hidden = product === undefined
    if (!product) return
    $('product-title').textContent = product.name || '(no name)'
    $('product-meta').textContent = `Product ${product.id} · token #${product.tokenId} on chain ${product.contract.chainId}`
    if (chosenAnew) clearFieldErrors(form)
    // The fields are filled when a product is chosen or saved: a list reloaded meanwhile must not undo typing.
    if (chosenAnew || changed) for (const [key, id] of FIELDS) $<HTMLInputElement | HTMLTextAreaElement>(id).value = textOf(product.metadata, key)
    $('product-saved').textContent = state.productSaved === product.id ? '✓ Saved' : ''
  }

  function importedView(result: ChipImport): Node[] {
    const { summary } = result
    const counts: [string, number][] = [
      ['Rows read', result.chips],
      ['Chips registered or updated', summary.chips],
      ['Products linked', summary.tokens],
    ]
    for (const [label, key] of [
      ['Chip profiles', 'chipProfiles'],
      ['Contracts', 'phygitalContracts'],
    ] as const) {
      // A tapgate import file may carry more than chips: said when it did.
      if (summary[key] > 0) counts.push([label, summary[key]])
    }
    return [
      h('p', { className: 'import-ok', text: '✓ The chips are in.' }),
      h('dl', { className: 'import-counts' }, ...counts.flatMap(([label, n]) => [h('dt', { text: label }), h('dd', { text: String(n), data: { count: label } })])),
    ]
  }

  let drawn: Pick<ConsoleState, 'products' | 'selectedProductId' | 'productSaved' | 'chipImport'> | null = null
  return {
    load,
    render(state) {
      if (drawn && drawn.products === state.products && drawn.selectedProductId === state.selectedProductId && drawn.productSaved === state.productSaved && drawn.chipImport === state.chipImport) return
      const chosenAnew = drawn?.selectedProductId !== state.selectedProductId
      if (drawn?.products !== state.products || chosenAnew) {
        const products = state.products ?? []
        redraw($('product-list'), products.map((product) => productItem(product, state.selectedProductId)))
        $('product-list-empty').hidden = state.products === null || products.length > 0
      }
      const product = state.products?.find((x) => x.id === state.selectedProductId)
      const before = drawn?.products?.find((x) => x.id === state.selectedProductId)
      const changed = !!product && JSON.stringify(before?.metadata) !== JSON.stringify(product.metadata)
      renderDetail(product, state, chosenAnew, changed)
      if (drawn?.chipImport !== state.chipImport) {
        const outcome = state.chipImport
        const nodes = !outcome ? [] : outcome.kind === 'imported' ? importedView(outcome.result) : refusedView(outcome, 'no chip was added or changed')
        showOutcome($('chip-import'), outcome?.kind ?? null, nodes)
      }
      drawn = { products: state.products, selectedProductId: state.selectedProductId, productSaved: state.productSaved, chipImport: state.chipImport }
    },
  }
}
