/** The tools' export fixtures (test/fixtures/attendees/, written from their documented headers): file, detected format, guests imported. */
export const TOOL_EXPORTS = [
  ['pretix-checkin.csv', 'pretix-checkin', 3],
  ['pretix-positions.csv', 'pretix-positions', 2],
  ['eventbrite.csv', 'eventbrite', 3],
  ['luma.csv', 'luma', 2],
  ['hievents.csv', 'hievents', 2],
  ['hievents-semicolon.csv', 'hievents', 2],
  ['tito.csv', 'tito', 3],
] as const
