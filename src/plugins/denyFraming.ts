import type { FastifyReply, FastifyRequest } from 'fastify'

const FRAME_ANCESTORS_NONE = "frame-ancestors 'none'"

/**
 * An onSend hook that keeps a scope's pages out of any frame (clickjacking: a page of another
 * site framing /docs or a tap page under its own buttons). CSP `frame-ancestors 'none'` for
 * today's browsers, `X-Frame-Options: DENY` for older ones; added to a CSP the route already set.
 *
 * @example
 * app.addHook('onSend', denyFraming)
 */
export async function denyFraming(_request: FastifyRequest, reply: FastifyReply): Promise<void> {
  reply.header('x-frame-options', 'DENY')
  const csp = reply.getHeader('content-security-policy')
  if (typeof csp !== 'string') reply.header('content-security-policy', FRAME_ANCESTORS_NONE)
  else if (!csp.includes('frame-ancestors')) reply.header('content-security-policy', `${csp}; ${FRAME_ANCESTORS_NONE}`)
}
