/*
 * Which folders may import which: the checked source of truth for the layers that
 * docs/architecture.md ("Layers") draws. `npm run lint:deps` (part of `npm test`) fails on a
 * violation. Type-only imports count (tsPreCompilationDeps): a layer that needs another's types
 * depends on it as much as one that needs its values.
 *
 * Layers, top to bottom:
 *   app       src/server.ts, src/cli/ (entry points: compose the library with the station app),
 *             src/app.ts, src/startEarly.ts, src/bootstrapDemo.ts
 *   http      src/routes/, src/plugins/
 *   domain    every other src/ folder (taps, refs, otps, kiosk, claims, relayer, chain, …)
 *   data      src/db/ (all the SQL)
 *   libraries src/sun/, src/provisioning/ (pure commands), src/card/ (a card in a reader's field)
 * station/ is an app of its own beside the gateway: it uses the libraries, and only its
 * in-process half (run by `tapgate serve`) calls the domain.
 */

/** The station↔gateway wire contract: types and constants both ends of the socket share. */
const STATION_CONTRACT = '^station/(tap|link/protocol)\\.ts$'
/** The app's top: nothing below it imports these. */
const APP_TOP = '^src/(app|server|startEarly|bootstrapDemo|index)\\.ts$|^src/cli/|^src/testing/'

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'No import cycles between modules, across folders or inside one. There were two, both type-only inside a folder ' +
        '(db/migrate ↔ db/openDatabase, relayer/relayer ↔ relayer/recoverTransfer), removed when this rule came in. ' +
        "Folders that import each other are checked by test/project/folderCycles.test.ts: dependency-cruiser's folder scope " +
        "would count src/'s root files as one folder `src`, so every folder that imports paths.ts would close a cycle through server.ts.",
      from: {},
      to: { circular: true },
    },
    {
      name: 'gateway-not-station',
      severity: 'error',
      comment:
        'The gateway library (src/) does not import the station app (station/). Allowed: the entry points that compose ' +
        'them (src/server.ts starts the in-process station, src/cli/ runs stations, virtual cards and provisioning on ' +
        "readers), and the station's wire contract (station/tap.ts, station/link/protocol.ts), which the gateway's end " +
        'of the socket (routes/stationSocket.ts) shares and which imports nothing else (station-contract-is-a-leaf).',
      from: { path: '^src/', pathNot: '^src/server\\.ts$|^src/cli/|^src/testing/' },
      to: { path: '^station/', pathNot: STATION_CONTRACT },
    },
    {
      name: 'station-contract-is-a-leaf',
      severity: 'error',
      comment: 'The wire contract both ends import stays types and constants: it imports nothing of ours but itself.',
      from: { path: STATION_CONTRACT },
      to: { path: '^(src|station)/', pathNot: STATION_CONTRACT },
    },
    {
      name: 'station-reaches-src-through-libraries',
      severity: 'error',
      comment:
        "station/ uses the gateway's libraries through their entries: src/card/ (the card session), src/sun/index.ts " +
        '(SUN messages, for the virtual card) and src/provisioning/index.ts (the NTAG 424 commands, for the virtual ' +
        'card). A list rather than one src/index.ts (style.md habit 14): ESM evaluates every module a barrel re-exports, ' +
        'so a barrel would load the gateway (db, Fastify, viem) into every station and virtual card.',
      from: { path: '^station/', pathNot: '^station/(inProcessStation|link/inProcessSink)\\.ts$' },
      to: { path: '^src/', pathNot: '^src/card/|^src/sun/index\\.ts$|^src/provisioning/index\\.ts$' },
    },
    {
      name: 'in-process-station-uses-listed-domain',
      severity: 'error',
      comment:
        "The in-process station (station/inProcessStation.ts, station/link/inProcessSink.ts) is the station's half that " +
        "runs inside `tapgate serve`: it submits taps to the domain directly instead of over the socket. It may use the " +
        'libraries and exactly this domain surface; growing it is a decision, not an accident.',
      from: { path: '^station/(inProcessStation|link/inProcessSink)\\.ts$' },
      to: {
        path: '^src/',
        pathNot:
          '^src/card/|^src/sun/index\\.ts$|^src/provisioning/index\\.ts$|^src/(config|errors)\\.ts$|^src/db/store\\.ts$|' +
          '^src/feed/stationStatus\\.ts$|^src/schemas/taps\\.ts$|^src/stations/|^src/taps/createKeyring\\.ts$',
      },
    },
    {
      name: 'below-the-app-top',
      severity: 'error',
      comment:
        'Only the app imports its top (app.ts, server.ts, startEarly.ts, bootstrapDemo.ts, cli/): routes, plugins and ' +
        'the domain are what the top composes, never the reverse.',
      from: { path: '^src/', pathNot: APP_TOP },
      to: { path: APP_TOP },
    },
    {
      name: 'domain-not-http',
      severity: 'error',
      comment:
        'Routes and plugins call the domain; the domain does not import them (it runs from the CLI and the station too). ' +
        'Routes may use plugins (auth hooks, denyFraming); plugins do not import routes.',
      from: { path: '^src/', pathNot: `${APP_TOP}|^src/routes/|^src/plugins/` },
      to: { path: '^src/(routes|plugins)/' },
    },
    {
      name: 'plugins-not-routes',
      severity: 'error',
      from: { path: '^src/plugins/' },
      to: { path: '^src/routes/' },
    },
    {
      name: 'db-is-the-data-layer',
      severity: 'error',
      comment:
        'src/db/ (all the SQL) imports nothing from the domain, the schemas or above; only src/paths.ts and src/redact.ts ' +
        '(leaves: a password masked in a status or an error the same way the config masks it). The schemas ' +
        "import db's value lists (otpTypes, keySchemes, proofEventStatuses) so a CHECK constraint and an API enum are " +
        'one list: schemas sit above db. One named exception: db/ takes the feed event shapes from ' +
        'wire/feedProtocol.ts, as types only (db-wire-shapes-as-types). They live in src/wire/, a leaf below both db/ and ' +
        'feed/, so that db/ names them without importing feed/ (issue 24: that was the db <-> feed folder cycle).',
      from: { path: '^src/db/' },
      to: { path: '^(src|station)/', pathNot: '^src/db/|^src/(paths|redact)\\.ts$|^src/wire/feedProtocol\\.ts$' },
    },
    {
      name: 'db-wire-shapes-as-types',
      severity: 'error',
      comment: 'db/ may name the feed event shapes of wire/feedProtocol.ts, never run its code.',
      from: { path: '^src/db/' },
      to: { path: '^src/wire/feedProtocol\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'libraries-are-pure',
      severity: 'error',
      comment:
        'src/sun/ (tap crypto, node:crypto only) and src/card/ (the card session) import none of our modules outside ' +
        'themselves: the station, the virtual card and the gateway all build on them.',
      from: { path: '^src/(sun|card)/' },
      to: { path: '^(src|station)/', pathNot: '^src/$1/' },
    },
    {
      name: 'provisioning-commands-are-pure',
      severity: 'error',
      comment: 'The NTAG 424 commands are pure (an APDU out, a parsed answer back): only src/sun/. The run on a card (run/) uses the store.',
      from: { path: '^src/provisioning/[^/]+$' },
      to: { path: '^(src|station)/', pathNot: '^src/provisioning/[^/]+$|^src/sun/' },
    },
    {
      name: 'browser-client-imports-browser-safe',
      severity: 'error',
      comment:
        'The kiosk, staff and claim-phone pages (src/kiosk/web/client/, bundled by esbuild for the browser) import ' +
        'their own folder and three browser-safe modules of the server side: wire/feedProtocol.ts (the feed and socket types, ' +
        "the close codes), claims/addressInput.ts (the as-typed address checks, shared so a page and the server say the same) " +
        'and door/scannedCode.ts (the ticket codes a scanned QR payload carries, for the same reason).',
      from: { path: '^src/kiosk/web/client/' },
      to: { pathNot: '^src/kiosk/web/client/|^src/wire/feedProtocol\.ts$|^src/claims/addressInput\.ts$|^src/door/scannedCode\.ts$|^src/schemas/|^node_modules/zod/' },
    },
    {
      name: 'browser-client-reads-schemas-as-types',
      severity: 'error',
      comment:
        "The staff page types the staff API's answers from their zod schemas (src/schemas/), as types only: zod and the " +
        'schemas stay out of the bundle, and the page cannot drift from what the routes answer.',
      from: { path: '^src/kiosk/web/client/' },
      to: { path: '^src/schemas/|^node_modules/zod/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'browser-shared-stays-browser-safe',
      severity: 'error',
      comment:
        "What the browser code shares with the server imports no Node module and none of ours; addressInput uses viem's tree-shaken utils. " +
        'src/wire/ as a whole is such a leaf: db/, feed/ and the pages all read it.',
      from: { path: '^src/wire/|^src/claims/addressInput\.ts$|^src/door/scannedCode\.ts$' },
      to: { pathNot: '^node_modules/viem/' },
    },
    {
      name: 'client-imports-schemas-only',
      severity: 'error',
      comment:
        'tapgate/client (src/client/) is what a program that only talks to a gateway imports: it types the HTTP API from ' +
        "the routes' zod schemas (src/schemas/) and imports nothing else of ours and no package but zod, so Fastify, the " +
        'store and the chain code stay out of it.',
      from: { path: '^src/client/' },
      to: { pathNot: '^src/(client|schemas)/|^node_modules/zod/' },
    },
    {
      name: 'client-runs-without-schemas',
      severity: 'error',
      comment:
        "Only the client's operation table (src/client/operations.ts) imports the schemas and zod as values; the rest of " +
        'src/client/ reads the table as types, so a program using the client loads fetch and nothing more ' +
        '(test/client/importGraph.test.ts checks the whole run-time graph).',
      from: { path: '^src/client/', pathNot: '^src/client/operations\\.ts$' },
      to: { path: '^src/schemas/|^src/client/operations\\.ts$|^node_modules/zod/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'product-not-tests',
      severity: 'error',
      comment: 'The package ships src/ and station/ without test/ and bench/ (package.json files).',
      from: { path: '^(src|station)/' },
      to: { path: '^(test|bench)/' },
    },
    {
      name: 'product-not-dev-dependencies',
      severity: 'error',
      comment:
        'An installed tapgate has no devDependencies: src/ and station/ may import them as types only. Except where ' +
        'an installed package never goes: the bin bundles the sources (esbuild, tsx as a fallback) only in a checkout, ' +
        'which has no dist/; the package build runs at `npm pack`; the kiosk assets come from dist/ once packed. And ' +
        "tapgate/testing/vitest imports the consumer's vitest (an optional peer dependency).",
      from: { path: '^(src|station)/', pathNot: '^src/cli/(tapgate|bundle|buildPackage)\\.js$|^src/kiosk/web/bundle\\.ts$|^src/testing/vitest\\.ts$' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/db/migrations/' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.json'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
}
