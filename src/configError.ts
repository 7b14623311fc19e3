/**
 * A configuration that cannot be used (a bad value, an unreadable or invalid file). Its own
 * module, without zod, so the CLI's entry can tell it apart without loading the config schema.
 */
export class ConfigError extends Error {
  override name = 'ConfigError'
}
