import { type ConsoleDeps, type ConsoleStation, stationViews } from './consoleStations.js'
import { startOfDay } from './consoleDay.js'

export type ConsoleOverview = {
  team: { id: number; name: string }
  stations: ConsoleStation[]
  taps: { today: number; accepted: number; refused: number }
}

/**
 * The console's first page: the team's active stations (a revoked one is on the stations page)
 * and today's taps of the team (its chips', and any at its stations).
 */
export async function consoleOverview(deps: ConsoleDeps, p: { team: { id: number; name: string } }): Promise<ConsoleOverview> {
  const { store } = deps
  const active = (await store.stations.listByTeam(p.team.id)).filter((s) => s.revokedAt === null)
  const { total, accepted } = await store.tapLog.countOfTeam(p.team.id, startOfDay(deps.now()))
  return { team: p.team, stations: await stationViews(deps, active), taps: { today: total, accepted, refused: total - accepted } }
}
