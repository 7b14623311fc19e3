import { z } from 'zod'

const httpUrl = z.url({ protocol: /^https?$/ })

/**
 * A redirect URL (a team's, a chip's, a self-service edit's): http or https only, so no
 * `javascript:` or `data:` URL can be stored for a tap to land on. Checked with zod's URL rule, but
 * the value is kept exactly as sent: z.url() trims it and drops tabs and newlines, and a
 * self-service edit's signature covers the bytes the owner signed, not zod's rewrite of them.
 * The tap redirect reads it through the URL parser (tapRedirectUrl), which ignores the same bytes.
 *
 * @example
 * RedirectUrl.parse('https://shop.example/landing?x=1') // 'https://shop.example/landing?x=1'
 * RedirectUrl.safeParse('javascript:alert(1)').success // false
 */
export const RedirectUrl = z
  .string()
  .max(2048)
  .refine((value) => httpUrl.safeParse(value).success, 'Must be an http:// or https:// URL')
  .meta({ format: 'uri', description: 'An http(s) URL, at most 2048 characters' })
