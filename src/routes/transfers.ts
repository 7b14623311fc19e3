import type { FastifyInstance } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { refuseZeroAddress } from '../chain/recipientCheck.js'
import { editChipsBySelfService } from '../phygitals/selfServiceEdit.js'
import { resolveRecipient } from '../chain/resolveRecipient.js'
import { otpCodeOf, teamOf } from '../plugins/auth.js'
import { BODY_ERRORS, errorResponses, security, tokenMoveErrorResponses } from '../schemas/common.js'
import {
  SelfServiceEditBody,
  SelfServiceEditResponse,
  SelfServiceTransferBody,
  SelfServiceTransferResponse,
  TransferBody,
  TransferPullableBody,
  TransferResponse,
  TransferSignaturePullableQuery,
  TransferSignatureQuery,
  TransferSignatureResponse,
} from '../schemas/transfers.js'
import { transferSignatureWithApiKey, transferSignatureWithOtp } from '../transfers/transferSignature.js'
import { transferBySelfService, transferWithApiKey, transferWithOtp } from '../transfers/transferToken.js'
import { mergeJsonBodyIntoQuery } from './queryOrBody.js'
import { publicRateLimit } from './rateLimit.js'

const tags = ['transfers']
const bodyNote = 'The parameters may come in the query string or, as the spec documents, in a JSON body (or both, if they agree).'
// That body is read by mergeJsonBodyIntoQuery, whatever its content type: not JSON (400) or too large (413), never unsupported.
const GET_BODY_ERRORS = [400, 413] as const

/** The recipient of a transfer, signature or mint as a checksummed address (ENS only with a mainnet RPC); never the zero address. */
export async function recipientOf(app: FastifyInstance, raw: string): Promise<`0x${string}`> {
  const address = await resolveRecipient(raw, { ens: app.services.chains.ens })
  refuseZeroAddress(address)
  return address
}

const transfers: FastifyPluginAsyncZod = async (app) => {
  const deps = app.services

  app.post('/phygitals/transfer', {
    onRequest: app.requireApiKey,
    schema: { tags, summary: "Transfer a team's phygital NFT (API key)", body: TransferBody, security: security.apiKey, response: { 200: TransferResponse, ...tokenMoveErrorResponses(...BODY_ERRORS, 401, 404, 409) } },
    handler: async (request) => {
      const { recipient, ...key } = request.body
      const accepted = await transferWithApiKey(deps, { key, teamId: teamOf(request).id, recipient: await recipientOf(app, recipient) })
      return { success: true as const, initialTxHash: accepted.initialTxHash }
    },
  })

  app.post('/phygitals/transfer/pullable', {
    preHandler: app.requireOtp,
    schema: { tags, summary: 'Transfer the tapped phygital NFT (OTP)', body: TransferPullableBody, security: security.otp, response: { 200: TransferResponse, ...tokenMoveErrorResponses(...BODY_ERRORS, 401, 403, 409) } },
    handler: async (request) => {
      const recipient = await recipientOf(app, request.body.recipient)
      const accepted = await transferWithOtp(deps, { code: otpCodeOf(request), recipient })
      return { success: true as const, initialTxHash: accepted.initialTxHash }
    },
  })

  app.post('/phygitals/transfer/self-service', {
    onRequest: app.requireApiKey,
    schema: {
      tags,
      summary: 'Transfer the NFT linked to a tag (API key)',
      body: SelfServiceTransferBody,
      security: security.apiKey,
      response: { 200: SelfServiceTransferResponse, ...tokenMoveErrorResponses(...BODY_ERRORS, 401, 404, 409) },
    },
    handler: async (request) => {
      const recipient = await recipientOf(app, request.body.recipient)
      const { initialTxHash, token } = await transferBySelfService(deps, { tagUid: request.body.tagUID, teamId: teamOf(request).id, recipient })
      return { initialTxHash, tokenRef: { chainId: token.chainId, contractAddress: token.contractAddress, tokenId: token.tokenId } }
    },
  })

  app.get('/phygitals/transfer-signature', {
    onRequest: app.requireApiKey,
    preValidation: mergeJsonBodyIntoQuery,
    schema: {
      tags,
      summary: 'A signature for mintNFT/claimNFT to the recipient (API key)',
      description: bodyNote,
      querystring: TransferSignatureQuery,
      security: security.apiKey,
      response: { 200: TransferSignatureResponse, ...tokenMoveErrorResponses(...GET_BODY_ERRORS, 401, 404, 409) },
    },
    handler: async (request) => {
      const { recipient, ...key } = request.query
      return transferSignatureWithApiKey(deps, { key, teamId: teamOf(request).id, recipient: await recipientOf(app, recipient) })
    },
  })

  app.get('/phygitals/transfer-signature/pullable', {
    preValidation: mergeJsonBodyIntoQuery,
    preHandler: app.requireOtp,
    schema: {
      tags,
      summary: 'A signature for mintNFT/claimNFT of the tapped token (OTP)',
      description: bodyNote,
      querystring: TransferSignaturePullableQuery,
      security: security.otp,
      response: { 200: TransferSignatureResponse, ...tokenMoveErrorResponses(...GET_BODY_ERRORS, 401, 403, 409) },
    },
    handler: async (request) =>
      transferSignatureWithOtp(deps, { code: otpCodeOf(request), recipient: await recipientOf(app, request.query.recipient) }),
  })

  app.patch('/chips/self-service', {
    config: publicRateLimit(app),
    schema: {
      tags: ['chips'],
      summary: "Set the redirect URL of a token's chips, signed by the token's owner (EIP-712)",
      body: SelfServiceEditBody,
      security: security.none,
      response: { 200: SelfServiceEditResponse, ...errorResponses(...BODY_ERRORS, 403, 404, 409, 429) },
    },
    handler: async (request) => {
      const { ownerSignature, updates, requestExpiryTime, ...key } = request.body
      return editChipsBySelfService(deps, { key, ownerSignature, updates, requestExpiryTime })
    },
  })
}

export default transfers
