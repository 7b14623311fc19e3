import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { deleteOtp, getOtp } from '../otps/getOtp.js'
import { teamOf } from '../plugins/auth.js'
import { BODY_ERRORS, errorResponses, PATH_ERRORS, security, Success } from '../schemas/common.js'
import { OtpParams, OtpResponse } from '../schemas/otps.js'
import { publicRateLimit } from './rateLimit.js'

const otps: FastifyPluginAsyncZod = async (app) => {
  app.get('/otps/:id', {
    config: publicRateLimit(app),
    schema: {
      tags: ['otps'],
      summary: 'Read an OTP',
      params: OtpParams,
      security: security.none,
      response: { 200: OtpResponse, ...errorResponses(...PATH_ERRORS, 404, 429) },
    },
    handler: async (request) => getOtp(app.services.store, { code: request.params.id, now: app.services.now() }),
  })

  app.delete('/otps/:id', {
    onRequest: app.requireApiKey,
    schema: {
      tags: ['otps'],
      summary: "Delete one of the team's OTPs",
      params: OtpParams,
      security: security.apiKey,
      response: { 200: Success, ...errorResponses(...BODY_ERRORS, ...PATH_ERRORS, 401, 404) },
    },
    handler: async (request) => {
      await deleteOtp(app.services.store, { code: request.params.id, teamId: teamOf(request).id })
      return { success: true as const }
    },
  })
}

export default otps
