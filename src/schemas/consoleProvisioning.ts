import { z } from 'zod'
import { Iso, Success } from './common.js'

/*
 * The console's provisioning run on the gateway's own readers (/console/api/provisioning, issue 28
 * part 3): hidden from the OpenAPI document like every console route. Never a key: a run answers
 * with UIDs, outcomes and the CLI's own progress lines.
 */

export const ConsoleReader = z.object({ name: z.string(), cardPresent: z.boolean() })

export const ConsoleProvisionedCard = z.object({
  at: Iso,
  /** The chip's UID; null when the card was refused before it was known (pulled too soon, unreadable). */
  uid: z.string().nullable(),
  outcome: z.enum(['provisioned', 'resumed', 'refused']),
  /** Why a card was refused (ProvisioningStopped's reason, or `failed` for an unexpected error); null otherwise. */
  reason: z.string().nullable(),
  /** The line `tapgate chip provision --batch` prints for the card. */
  message: z.string(),
})

export const ConsoleProvisioningRun = z.object({
  id: z.string(),
  profile: z.string(),
  urlTemplate: z.string(),
  startedAt: Iso,
  endedAt: Iso.nullable(),
  cards: z.array(ConsoleProvisionedCard),
  summary: z.object({ provisioned: z.number().int(), resumed: z.number().int(), refused: z.number().int() }),
})

export const ConsoleProvisioningResponse = Success.extend({
  /** null: this gateway has no readers this console may use; `unavailable` says why. */
  readers: z.array(ConsoleReader).nullable(),
  unavailable: z.string().nullable(),
  run: ConsoleProvisioningRun.nullable(),
})

export const ConsoleStartProvisioningBody = z
  .object({
    profile: z.string().trim().min(1, 'Choose a chip profile').max(200),
    /** Default: the profile's own template. */
    urlTemplate: z.string().trim().min(1, 'A URL template, or leave it out for the profile\'s').max(2048).optional(),
    /** Accept chips without NXP's originality signature (software cards): the CLI's --allow-unverified. */
    allowUnverified: z.boolean().optional(),
  })
  .strict()

export const ConsoleProvisioningRunResponse = Success.extend({ run: ConsoleProvisioningRun })
