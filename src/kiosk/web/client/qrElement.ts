/*
 * A QR code from the SVG markup the gateway draws: the claim panel's hand-off code and the console's
 * kiosk URL. The CSP allows images from the gateway only (no data: URL in an <img>), so the markup
 * is parsed with DOMParser and its elements are put in the page, keeping only what a QR drawing
 * uses: nothing the markup carried can run.
 */

const SVG_ELEMENTS = new Set(['svg', 'path', 'rect', 'g'])
const SVG_ATTRIBUTES = new Set(['viewBox', 'xmlns', 'd', 'x', 'y', 'width', 'height', 'fill', 'transform'])

/**
 * The QR drawing as an element, or null when the markup is not an SVG.
 *
 * @example
 * qrBox.replaceChildren(...[qrElement(answer.qrSvg)].filter((el) => el !== null))
 */
export function qrElement(markup: string): SVGSVGElement | null {
  const doc = new DOMParser().parseFromString(markup, 'image/svg+xml')
  const root = doc.documentElement
  if (root.localName !== 'svg' || doc.querySelector('parsererror')) return null
  for (const el of [root, ...root.querySelectorAll('*')]) {
    if (!SVG_ELEMENTS.has(el.localName)) {
      el.remove()
      continue
    }
    for (const attr of [...el.attributes]) if (!SVG_ATTRIBUTES.has(attr.name)) el.removeAttribute(attr.name)
  }
  const svg = document.importNode(root, true) as unknown as SVGSVGElement
  // Sharp module edges: a camera reads them better than anti-aliased ones.
  svg.setAttribute('shape-rendering', 'crispEdges')
  svg.setAttribute('aria-hidden', 'true')
  return svg
}
