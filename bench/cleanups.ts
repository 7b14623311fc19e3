/**
 * What a bench started (pcscd, readers, a gateway, temp dirs), stopped in reverse order exactly
 * once each: at the end, on a time bound, or on Ctrl-C; calls while one is running share it. A failing step is reported and the rest still run.
 *
 * @example
 * const { onCleanup, cleanup, abort } = createCleanups('bench/station.ts')
 * onCleanup('stop pcscd', () => pcscd.stop())
 */
export function createCleanups(bench: string) {
  const cleanups: { what: string; run: () => Promise<unknown> | unknown }[] = []
  let cleaning: Promise<void> | null = null
  const cleanup = (): Promise<void> => {
    cleaning ??= (async () => {
      while (cleanups.length > 0) {
        const { what, run } = cleanups.pop()!
        try {
          await run()
        } catch (error) {
          console.error(`cleanup: ${what} failed: ${(error as Error).message}`)
        }
      }
      // Done: a later call cleans up what was started since (a bench that stops part 1 before part 2).
      cleaning = null
    })()
    return cleaning
  }
  return {
    onCleanup(what: string, run: () => Promise<unknown> | unknown): void {
      cleanups.push({ what, run })
    },
    cleanup,
    async abort(why: string, code: number): Promise<never> {
      console.error(`${bench}: ${why}; stopping what it started`)
      await cleanup()
      process.exit(code)
    },
  }
}
