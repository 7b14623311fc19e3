import axios, { AxiosError } from 'axios'
import type { ChipFound, HostedItem, HostedRef } from './fetchApp.js'

/**
 * The same app as the axios-based ones are written: one instance with the base URL and the API key
 * as default headers, `response.data`, and a failed call read from `error.response.data.message`.
 */
export function createAxiosApp(baseURL: string, apiKey: string) {
  const api = axios.create({ baseURL, headers: { 'x-iyk-api-key': apiKey } })
  const withCode = (code: string) => ({ headers: { 'x-iyk-code': code } })
  return {
    findChip: async (tapUrl: string) => {
      const { searchParams } = new URL(tapUrl)
      return (await api.get<ChipFound>('/chips/find', { params: { e: searchParams.get('e'), c: searchParams.get('c'), d: 101 } })).data
    },
    getRef: async (ref: string) => (await api.get<HostedRef>(`/refs/${ref}`, { params: { includeOwner: true, includeMetadata: true } })).data,
    claimToken: async (otp: string, recipient: string) => (await api.post<{ success: boolean; initialTxHash: string }>('/phygitals/transfer/pullable', { recipient }, withCode(otp))).data,
    mintPoap: async (otp: string, poapEventId: number, recipient: string) => (await api.post<{ success: boolean }>('/poap-events/mint', { poapEventId, recipient }, withCode(otp))).data,
    items: async () => (await api.get<HostedItem[]>('/items')).data,
  }
}

/** What an axios app shows the user for a failed call. */
export function messageOf(error: unknown): string {
  if (error instanceof AxiosError) return (error.response?.data as { message?: string } | undefined)?.message ?? error.message
  throw error
}
