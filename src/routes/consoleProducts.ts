import type { FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { CHIP_FILE_TYPES, importConsoleChipList, importConsoleFile, MAX_CHIP_FILE_BYTES } from '../console/consoleChipImport.js'
import { consoleChipProfiles, consoleProduct, consoleProducts, setConsoleProductMetadata } from '../console/consoleProducts.js'
import { BaseError } from '../errors.js'
import {
  ConsoleChipFile,
  ConsoleChipProfilesResponse,
  ConsoleImportChipsResponse,
  ConsoleProductMetadataBody,
  ConsoleProductParams,
  ConsoleProductResponse,
  ConsoleProductsResponse,
} from '../schemas/consoleProducts.js'

// Console-only: hidden from the OpenAPI document (docs/decisions.md, issue 28), as the console's other routes.
const hide = true

/** 415: a chip file is an import file (JSON) or a chip list (CSV); anything else would be read as nonsense. */
class NotChipFileError extends BaseError {
  override name = 'NotChipFileError'
  constructor() {
    super(415, 'unsupported_media_type', 'Send the chip file as the body: content-type application/json (a tapgate import file) or text/csv (a chip list)')
  }
}

/**
 * The console's products, chip profiles and chip import (issue 28, part 3): registered inside
 * routes/console.ts's plugin, so its session guard and Origin check run first and the session names
 * the team. Each route calls what the API or the CLI calls (console/consoleProducts.ts,
 * console/consoleChipImport.ts say which); another team's product is 404 item_not_found.
 */
const consoleProductsApi: FastifyPluginAsyncZod = async (app) => {
  const deps = app.services
  const team = (request: FastifyRequest) => request.consoleSession!.team

  // A chip list is read whole (1 MiB at most, 413 beyond, as a JSON body): this scope's text/csv is not the guest list's stream.
  if (app.hasContentTypeParser('text/csv')) app.removeContentTypeParser('text/csv')
  app.addContentTypeParser('text/csv', { parseAs: 'buffer', bodyLimit: MAX_CHIP_FILE_BYTES }, (_request, body, done) => done(null, body))

  app.get('/console/api/products', { schema: { hide, response: { 200: ConsoleProductsResponse } } }, async (request) => ({
    success: true as const,
    products: await consoleProducts(deps, { teamId: team(request).id }),
  }))

  app.get('/console/api/products/:id', { schema: { hide, params: ConsoleProductParams, response: { 200: ConsoleProductResponse } } }, async (request) => ({
    success: true as const,
    product: await consoleProduct(deps, { teamId: team(request).id, productId: request.params.id }),
  }))

  app.patch(
    '/console/api/products/:id/metadata',
    { schema: { hide, params: ConsoleProductParams, body: ConsoleProductMetadataBody, response: { 200: ConsoleProductResponse } } },
    async (request) => ({
      success: true as const,
      product: await setConsoleProductMetadata(deps, { teamId: team(request).id, productId: request.params.id, metadata: request.body.metadata }),
    }),
  )

  app.get('/console/api/chip-profiles', { schema: { hide, response: { 200: ConsoleChipProfilesResponse } } }, async (request) => ({
    success: true as const,
    profiles: await consoleChipProfiles(deps, { teamId: team(request).id }),
  }))

  app.post(
    '/console/api/chips/import',
    { bodyLimit: MAX_CHIP_FILE_BYTES, schema: { hide, consumes: CHIP_FILE_TYPES, body: ConsoleChipFile, response: { 200: ConsoleImportChipsResponse } } },
    async (request) => {
      const type = String(request.headers['content-type']).toLowerCase()
      const body = request.body
      let result: Awaited<ReturnType<typeof importConsoleFile>>
      if (type.startsWith('text/csv') && Buffer.isBuffer(body)) result = await importConsoleChipList(deps, { team: team(request), csv: body })
      else if (type.startsWith('application/json')) result = await importConsoleFile(deps, { team: team(request), data: body })
      // Another type the console's scope parses (a guest list's .xlsx) is still no chip file.
      else throw new NotChipFileError()
      return { success: true as const, ...result }
    },
  )
}

export default consoleProductsApi
