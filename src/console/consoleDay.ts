/**
 * The start of the day `now` falls in, in the gateway machine's time zone: "today" on the console is
 * the venue's day, as the gateway's clock is set where it runs.
 */
export function startOfDay(now: number): number {
  const day = new Date(now)
  day.setHours(0, 0, 0, 0)
  return day.getTime()
}
