/** What the relayer and its helpers log through: the app's pino logger, or a test's. */
export type RelayerLog = {
  info(obj: object, msg?: string): void
  warn(obj: object, msg?: string): void
  error(obj: object, msg?: string): void
}
