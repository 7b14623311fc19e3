import { TapgateApiError } from './apiError.js'

type Parsed = { json: true; value: unknown } | { json: false; text: string }

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * The parsed JSON of a 2xx answer; anything else as a TapgateApiError. The answer is not checked
 * against the route's schema: the server serialized it through that schema already, and a client
 * that re-validated would refuse answers from a newer gateway that only added fields.
 */
export async function readAnswer(operation: string, response: Response): Promise<unknown> {
  const parsed = await parse(response)
  if (response.ok) {
    if (parsed.json) return parsed.value
    throw new TapgateApiError({
      operation,
      status: response.status,
      code: 'not_json',
      message: `${operation} answered ${response.status} with ${response.headers.get('content-type') ?? 'no content type'}, not JSON`,
      body: parsed.text,
    })
  }
  const body = parsed.json ? parsed.value : parsed.text
  const fields = isRecord(body) ? body : {}
  // compat=iyk puts the reason phrase in `error` and our code in `code` (plugins/hostedCompat.ts).
  const code = typeof fields.code === 'string' ? fields.code : typeof fields.error === 'string' ? fields.error : `http_${response.status}`
  const message = typeof fields.message === 'string' ? fields.message : `${operation} answered ${response.status} ${response.statusText}`.trim()
  throw new TapgateApiError({ operation, status: response.status, code, message, body })
}

/** The body as JSON when it says it is and parses; its text otherwise (an HTML error page, an empty body). */
async function parse(response: Response): Promise<Parsed> {
  const text = await response.text()
  if (!/^application\/(?:[\w.+-]+\+)?json\b/i.test(response.headers.get('content-type') ?? '')) return { json: false, text }
  try {
    return { json: true, value: JSON.parse(text) as unknown }
  } catch {
    return { json: false, text }
  }
}
