// An app that takes a tap and gives the tapped token to a customer: the kind of app tapgate/testing
// is for. A tap sends the customer to the app with a ref; the app reads it (its first read carries the
// token's one-time code) and asks for a wallet address; then it has the gateway transfer the token
// with that code.

/**
 * The tapped chip's token and its one-time code, or why there is none.
 * @param {{ gatewayUrl: string, refId: string }} p
 */
export async function openTap({ gatewayUrl, refId }) {
  const res = await fetch(`${gatewayUrl}/refs/${encodeURIComponent(refId)}`)
  if (!res.ok) return { ok: false, why: `The gateway answered ${res.status}` }
  const ref = await res.json()
  if (!ref.isValidRef) return { ok: false, why: 'This tap was already used. Tap the chip again.' }
  if (!ref.linkedToken?.otp) return { ok: false, why: 'This chip has no token to claim.' }
  return { ok: true, token: ref.linkedToken, otp: ref.linkedToken.otp }
}

/**
 * Transfers the tapped token to `recipient` with the code openTap gave.
 * @param {{ gatewayUrl: string, otp: string, recipient: string }} p
 */
export async function claimToken({ gatewayUrl, otp, recipient }) {
  const res = await fetch(`${gatewayUrl}/phygitals/transfer/pullable`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-service-code': otp },
    body: JSON.stringify({ recipient }),
  })
  const body = await res.json()
  if (!res.ok) return { claimed: false, code: body.error, why: body.message }
  return { claimed: true, txHash: body.initialTxHash }
}
