import type { ChipProfileRow } from '../../db/chipProfiles.js'
import { UsageError } from '../usage.js'

/**
 * The URL template of a `chip provision` run: `--url` when given, which wins
 * for this run (the plan still checks it against the profile's layout), else
 * the one stored on the profile, so a stack of chips needs no repeated flag.
 *
 * @throws UsageError (exit 2) when there is neither
 * @example
 * provisionTemplate(undefined, { name: 'tags', urlTemplate: 'https://tap.example/t?e={picc}&c={mac}' }) // the stored template
 */
export function provisionTemplate(flag: string | undefined, profile: Pick<ChipProfileRow, 'name' | 'urlTemplate'>): string {
  const template = flag ?? profile.urlTemplate
  if (template === null)
    throw new UsageError(
      `profile ${JSON.stringify(profile.name)} stores no URL template: give --url TEMPLATE, or store one on the profile: ` +
        'tapgate profile create ... --url TEMPLATE (e.g. https://tap.example/t?e={picc}&c={mac})',
    )
  return template
}
