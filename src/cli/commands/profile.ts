import fs from 'node:fs'
import { keySchemes, type KeyScheme } from '../../db/chipProfiles.js'
import { NotFoundError, ValidationError } from '../../errors.js'
import { openGatewaySecret, recordGatewaySecret } from '../../profiles/secretCheck.js'
import { assertSecretOpensStoredKeys, chipProfileView, listChipProfiles, upsertChipProfile } from '../../profiles/chipProfiles.js'
import { UsageError, type Flags } from '../usage.js'
import { onePositional, printJson, required, teamIdOf, text, withStore } from './context.js'
import { layoutFrom, modeFlag } from './layoutFlags.js'

/** The flag of each key, and the field name upsertChipProfile reports problems under. */
const KEY_FLAGS = { metaKey: 'meta-key', fileKey: 'file-key', masterKey: 'master-key' } as const

/**
 * A key from `--NAME HEX` or, kept out of shell history and `ps`, from
 * `--NAME-file FILE` holding the hex. Never echoed, not even in errors.
 *
 * @throws UsageError for both forms at once, an unreadable file, or anything but 32 hex characters
 */
export function keyFromFlags(flags: Flags, name: string): string | undefined {
  const inline = text(flags, name)
  const file = text(flags, `${name}-file`)
  if (inline !== undefined && file !== undefined) throw new UsageError(`give --${name} or --${name}-file, not both`)
  let value = inline
  if (file !== undefined) {
    try {
      value = fs.readFileSync(file, 'utf8').trim()
    } catch (error) {
      throw new UsageError(`--${name}-file: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`)
    }
  }
  if (value === undefined) return undefined
  if (!/^[0-9A-Fa-f]{32}$/.test(value))
    throw new UsageError(`--${name}${file === undefined ? '' : '-file'} must hold 32 hex characters (an AES-128 key), got ${value.length} characters`)
  return value
}

function schemeFlag(flags: Flags): KeyScheme {
  const raw = required(flags, 'scheme')
  if (!(keySchemes as readonly string[]).includes(raw)) throw new UsageError(`--scheme is one of ${keySchemes.join(', ')}`)
  return raw as KeyScheme
}

/** `--url TEMPLATE`, `--url none` to clear the stored one, or undefined to keep it. */
function urlTemplateFlag(flags: Flags): string | null | undefined {
  const raw = text(flags, 'url')
  return raw === 'none' ? null : raw
}

/** Domain errors name fields (metaKey); on the command line they are flags (--meta-key). */
function asFlags(error: unknown): unknown {
  if (!(error instanceof ValidationError) || !error.errors) return error
  const errors = Object.fromEntries(
    Object.entries(error.errors).map(([field, message]) => {
      const flag = KEY_FLAGS[field as keyof typeof KEY_FLAGS]
      const name = flag ? `--${flag}` : field === 'urlTemplate' ? '--url' : field === 'layout' || field === 'layout.mode' ? 'layout flags' : field
      return [name, message]
    }),
  )
  return new ValidationError(error.message, errors, error.code)
}

/**
 * `tapgate profile create|list`: chip profiles for tap verification. Keys are
 * sealed under the gateway secret on the way in and never printed.
 */
export async function run(positionals: string[], flags: Flags) {
  const action = onePositional(positionals, 'action (create, list)')
  if (action === 'create') {
    const teamId = teamIdOf(flags)
    const name = required(flags, 'name')
    const keyScheme = schemeFlag(flags)
    const mode = modeFlag(flags)
    const layout = layoutFrom(flags)
    const urlTemplate = urlTemplateFlag(flags)
    const keys = {
      metaKey: keyFromFlags(flags, 'meta-key'),
      fileKey: keyFromFlags(flags, 'file-key'),
      masterKey: keyFromFlags(flags, 'master-key'),
    }
    await withStore(flags, async (store, config) => {
      const secret = await openGatewaySecret(store, { dataDir: config.dataDir, secretHex: config.secret })
      // Before sealing anything: keys sealed under a secret the server does not have would never open.
      await assertSecretOpensStoredKeys(store, secret, { except: (p) => p.teamId === teamId && p.name === name })
      let profileId: number
      try {
        profileId = await upsertChipProfile(store, secret, { teamId, name, keyScheme, mode, layout, urlTemplate, ...keys, now: Date.now() })
      } catch (error) {
        throw asFlags(error)
      }
      await recordGatewaySecret(store, secret)
      printJson(chipProfileView((await store.chipProfiles.get(profileId))!))
    })
  } else if (action === 'list') {
    const teamId = teamIdOf(flags)
    await withStore(flags, async (store, config) => {
      if (!await store.teams.get(teamId)) throw new NotFoundError('team_not_found', `No team with id ${teamId}`)
      const secret = await openGatewaySecret(store, { dataDir: config.dataDir, secretHex: config.secret })
      printJson(await listChipProfiles(store, secret, teamId))
    })
  } else throw new UsageError(`unknown action "profile ${action}" (create, list)`)
}
