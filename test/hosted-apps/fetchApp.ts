/**
 * An app written for the hosted API the way the public Next.js ones are: `fetch`, a base URL from its
 * settings, x-iyk-* headers and the hosted names only (uid in decimal, poapEvents, iykRef). It knows
 * nothing of tapgate but the base URL. Errors are read as the hosted API sends them: `message`.
 */
export type HostedRef = {
  uid: string
  isValidRef: boolean
  linkedToken?: { contractAddress: string; chainId: number; tokenId: string; otp?: string; ownerAddress?: string }
  poapEvents: { id: number; poapEventId: number; otp?: string; status: string }[]
  guestbookEvents: { contractAddress: string; tokenId: string; chainId: number; otp?: string }[]
}
export type HostedItem = { id: number; name: string; description: string; imageUrl: string | null; attributes: { name: string; values: string[] }[]; contract: { address: string; chainId: number }; createdAt: string }
export type ChipFound = { uid: string; isValidTap: boolean; linkedToken: { contractAddress: string; chainId: number; tokenId: string } | null; ref?: string }

export class HostedApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message)
  }
}

export function createFetchApp(baseUrl: string, apiKey: string) {
  async function request<T>(path: string, init: RequestInit = {}): Promise<T> {
    const res = await fetch(`${baseUrl}${path}`, init)
    const body = (await res.json()) as T & { message?: string }
    if (!res.ok) throw new HostedApiError(res.status, body.message ?? res.statusText)
    return body
  }
  const post = <T>(path: string, code: string, body: object) =>
    request<T>(path, { method: 'POST', headers: { 'content-type': 'application/json', 'x-iyk-code': code }, body: JSON.stringify(body) })
  return {
    /** The chip URL's e and c, as the app reads them off the URL it was opened with. */
    findChip: (tapUrl: string) => {
      const { searchParams } = new URL(tapUrl)
      return request<ChipFound>(`/chips/find?e=${searchParams.get('e')}&c=${searchParams.get('c')}&d=101`, { headers: { 'x-iyk-api-key': apiKey } })
    },
    getRef: (ref: string) => request<HostedRef>(`/refs/${ref}?includeOwner=true&includeMetadata=true`, { headers: { 'x-iyk-api-key': apiKey } }),
    claimToken: (otp: string, recipient: string) => post<{ success: boolean; initialTxHash: string }>('/phygitals/transfer/pullable', otp, { recipient }),
    mintPoap: (otp: string, poapEventId: number, recipient: string) =>
      post<{ success: boolean }>('/poap-events/mint', otp, { poapEventId, recipient, deviceId: 'kiosk-ipad-1' }),
    items: () => request<HostedItem[]>('/items'),
  }
}
