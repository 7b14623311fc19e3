import type { FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { mintProofEvent } from '../guestbook/proofEventMints.js'
import { getItem, itemChips, listItems } from '../phygitals/items.js'
import { otpCodeOf, teamOf } from '../plugins/auth.js'
import { BODY_ERRORS, errorResponses, PATH_ERRORS, security } from '../schemas/common.js'
import { TxnResponse } from '../schemas/events.js'
import { ChipFindQuery, ChipFindResponse, HOSTED_TAG, Item, ItemChipList, ItemList, ItemParams, PatchChipsBody, PatchChipsResponse, PoapMintBody } from '../schemas/hosted.js'
import { setChipRedirects } from '../taps/chipRedirects.js'
import { findChip } from '../taps/findChip.js'
import { publicRateLimit } from './rateLimit.js'
import { recipientOf } from './transfers.js'

const tags = [HOSTED_TAG]

/** The endpoints apps written for the hosted API call that the spec does not name (issue 26). */
const hosted: FastifyPluginAsyncZod = async (app) => {
  app.get('/chips/find', {
    onRequest: app.optionalApiKey,
    config: publicRateLimit(app),
    schema: {
      tags,
      summary: "Verify a chip URL's e and c (as a tap): the chip, whether the tap is fresh, its token",
      description:
        'The same verification and replay protection as a phone tap: a fresh tap spends the chip\'s counter and mints a ref (`ref`), so the URL then fails at /tap too. A URL already used answers 200 with `isValidTap: false`. Any other refusal (a forged or edited c, an unknown chip, a damaged URL) is one 400 `tap_refused`, whatever the reason (the reason is in the tap log). `d` is ignored.',
      security: security.optionalApiKey,
      querystring: ChipFindQuery,
      response: { 200: ChipFindResponse, ...errorResponses(400, 401, 429) },
    },
    handler: async (request, reply) => {
      const found = await findChip(app.services.store, app.services.keyring, { e: request.query.e, c: request.query.c, now: app.services.now() })
      // A fresh answer carries a ref that works once: never cached.
      void reply.header('cache-control', 'no-store')
      return found
    },
  })

  app.patch('/chips', {
    onRequest: app.requireApiKey,
    schema: {
      tags,
      summary: "Set the redirect URL of the team's chips, all or nothing",
      description: 'Every UID must be a chip of the key\'s team; the first that is not (unknown, or another team\'s) refuses the whole request with 404 `chip_not_found` naming it, and nothing is changed.',
      security: security.apiKey,
      body: PatchChipsBody,
      response: { 200: PatchChipsResponse, ...errorResponses(...BODY_ERRORS, 401, 404) },
    },
    handler: async (request) => {
      const chips = await setChipRedirects(app.services.store, {
        teamId: teamOf(request).id,
        uids: request.body.tagUIDs,
        redirectUrl: request.body.updates.redirectUrl,
      })
      return { success: true as const, updated: chips.length, chips }
    },
  })

  app.post('/poap-events/mint', {
    preHandler: app.requireOtp,
    schema: {
      tags,
      summary: "Mint a proof event's attendance token with the OTP of a tap",
      description:
        "The OTP is a proof event's (GET /refs/:id, proofEvents[].otp), spent once. The token is minted on the gateway's chain as an event of a guestbook deployed for the team's proof events at the first mint (listed by GET /events; PATCH /events/metadata sets its metadata). Once per proof event and recipient, and once per chip: a second mint is 400 `already_minted`, as the hosted API answers it.",
      security: security.otp,
      body: PoapMintBody,
      response: { 200: TxnResponse, ...errorResponses(...BODY_ERRORS, 401, 403, 404, 409) },
    },
    handler: async (request) => {
      const recipient = await recipientOf(app, request.body.recipient)
      const mint = await mintProofEvent(app.services, { code: otpCodeOf(request), poapEventId: request.body.poapEventId, recipient })
      return { success: true as const, txnHash: mint.txnHash }
    },
  })

  // The API key is optional for the items: with one, the key's team's; without, every team's (src/phygitals/items.ts).
  const teamIdOf = (request: FastifyRequest) => request.team?.id ?? null
  app.get('/items', {
    onRequest: app.optionalApiKey,
    schema: { tags, summary: "The team's items (every team's without a key): its phygital tokens with their metadata", security: security.optionalApiKey, response: { 200: ItemList, ...errorResponses(401) } },
    handler: async (request) => listItems(app.services.store, teamIdOf(request)),
  })

  app.get('/items/:id', {
    onRequest: app.optionalApiKey,
    schema: { tags, summary: 'One item', security: security.optionalApiKey, params: ItemParams, response: { 200: Item, ...errorResponses(...PATH_ERRORS, 401, 404) } },
    handler: async (request) => getItem(app.services.store, teamIdOf(request), request.params.id),
  })

  // The chips' UIDs need the key: an NTAG 21x tap proves itself with its UID alone, and a SUN chip
  // encrypts its UID in every tap so that it cannot be followed around.
  app.get('/items/:id/chips', {
    onRequest: app.requireApiKey,
    schema: {
      tags,
      summary: "The chips linked to an item's token",
      security: security.apiKey,
      params: ItemParams,
      response: { 200: ItemChipList, ...errorResponses(...PATH_ERRORS, 401, 404) },
    },
    handler: async (request) => itemChips(app.services.store, teamOf(request).id, request.params.id),
  })
}

export default hosted
