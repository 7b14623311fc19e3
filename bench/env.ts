/** A bench setting from the environment (BENCH_CARDS=20 …): a positive integer, else the default. */
export function positiveEnv(name: string, fallback: number): number {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const n = Number(raw)
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer, got ${JSON.stringify(raw)}`)
  return n
}
