import { parseArgs, type ParseArgsConfig } from 'node:util'
import { ConfigError } from '../configError.js'
import { BaseError } from '../errors.js'
import { version } from '../version.js'
import { UsageError, type CommandModule, type Flags } from './usage.js'

type OptionSpec = NonNullable<ParseArgsConfig['options']>[string] & { description: string; value?: string }

type CommandSpec = {
  usage: string
  summary: string
  options: Record<string, OptionSpec>
  /** Imported only when the command runs, so `--help` and small commands stay fast. */
  load: () => Promise<CommandModule>
}

const globalOptions: Record<string, OptionSpec> = {
  'data-dir': { type: 'string', value: 'DIR', description: 'Data directory (default ./data, or $TAPGATE_DATA_DIR)' },
  config: { type: 'string', value: 'FILE', description: 'JSON config file (default $TAPGATE_CONFIG or ./tapgate.config.json)' },
  help: { type: 'boolean', short: 'h', description: 'Show help' },
}

// Where a chip puts its SUN fields (layoutFlags.ts): the same for profile create and sun verify.
const layoutOptions: Record<string, OptionSpec> = {
  'picc-param': { type: 'string', value: 'P', description: 'PICCData parameter (default: e, picc_data)' },
  'mac-param': { type: 'string', value: 'M', description: 'SDMMAC parameter (default: c, cmac)' },
  'enc-param': { type: 'string', value: 'E', description: 'Encrypted file data parameter (default: d, enc)' },
  'picc-offset': { type: 'string', value: 'N', description: 'PICCDataOffset, counted in the NDEF file (decimal or 0x hex)' },
  'enc-offset': { type: 'string', value: 'N', description: 'SDMENCOffset (with --enc-length)' },
  'enc-length': { type: 'string', value: 'N', description: 'SDMENCLength in ASCII characters (multiple of 32)' },
  'mac-input-offset': { type: 'string', value: 'N', description: 'SDMMACInputOffset (= --mac-offset for an empty MAC input)' },
  'mac-offset': { type: 'string', value: 'N', description: 'SDMMACOffset' },
  'uri-prefix-code': { type: 'string', value: 'HEX', description: 'URI identifier code (default: 01–04 from the URL, else 00)' },
}

// Commands that act on one team's data take it the same way.
const teamOption: OptionSpec = { type: 'string', value: 'ID', description: 'Team id' }

// node:util parseArgs rather than a CLI framework: it never turns `--uid 04123…` or
// `--meta-key 000…` into numbers, and it rejects unknown flags.
const commands: Record<string, CommandSpec> = {
  serve: {
    usage: 'serve [--port N] [--host H] [--no-demo] [--ready-file FILE]',
    summary: 'Run the gateway (what `npm start` runs)',
    options: {
      port: { type: 'string', value: 'N', description: 'Port (default 8787, or $PORT)' },
      host: { type: 'string', value: 'H', description: 'Interface (default 127.0.0.1, or $HOST)' },
      'no-demo': { type: 'boolean', description: 'Do not create the demo team on an empty data dir' },
      'ready-file': { type: 'string', value: 'FILE', description: 'Once the gateway answers, write one JSON line there: {"url", "apiKey" (the demo key, when this start made it)}' },
    },
    load: () => import('./commands/serve.js'),
  },
  test: {
    usage: 'test [--port N] -- COMMAND [ARG…]',
    summary:
      'Run COMMAND against a gateway of its own: a fresh data dir with the demo team, the embedded chain, no rate limits; ' +
      'COMMAND gets TAPGATE_URL, TAPGATE_API_KEY and TAPGATE_DATA_DIR, and tapgate exits with its code after stopping everything',
    options: {
      port: { type: 'string', value: 'N', description: 'Port (default: a free one)' },
    },
    load: () => import('./commands/testRun.js'),
  },
  team: {
    usage: 'team create --name N [--redirect-url URL] | team list',
    summary: 'Create or list teams',
    options: {
      name: { type: 'string', value: 'N', description: 'Team name' },
      'redirect-url': { type: 'string', value: 'URL', description: "Where taps of the team's chips redirect (http or https, as in an import file)" },
    },
    load: () => import('./commands/team.js'),
  },
  key: {
    usage: 'key create --team ID [--label L] | key revoke --prefix P | key list --team ID',
    summary: 'Create, revoke or list API keys',
    options: {
      team: teamOption,
      label: { type: 'string', value: 'L', description: 'A note to tell keys apart' },
      prefix: { type: 'string', value: 'P', description: 'Key prefix (10 characters, as listed) or the whole key, which must be the key itself' },
    },
    load: () => import('./commands/key.js'),
  },
  import: {
    usage: 'import FILE.json',
    summary: 'Import teams, chips, tokens and events (format: README)',
    options: {},
    load: () => import('./commands/importFile.js'),
  },
  attendees: {
    usage: 'attendees import --event ID [--map name=COL,email=COL,ticket=COL,type=COL,chip=COL,wallet=COL,note=COL,paid=COL] [--json] FILE.csv|FILE.xlsx | attendees export --event ID [--format csv|json] [--out FILE]',
    summary:
      "A guestbook event's guest list: import a CSV of pretix, Eventbrite, Luma, Hi.Events or Tito (told by its header) or any CSV with --map, " +
      'updating guests in place by ticket code (nothing imported if a row is bad); export it with chips, check-ins, exits and mint states',
    options: {
      event: { type: 'string', value: 'ID', description: 'The guestbook event (id as GET /events lists it)' },
      map: { type: 'string', value: 'F=COL,…', description: "import: our field = the file's column header, for a CSV of another tool (name and ticket required)" },
      json: { type: 'boolean', description: 'import: print the report as JSON' },
      format: { type: 'string', value: 'csv|json', description: 'export: csv (default; formula-looking cells made safe) or json (raw values)' },
      out: { type: 'string', value: 'FILE', description: 'export: write here instead of stdout' },
    },
    load: () => import('./commands/attendees.js'),
  },
  db: {
    usage: 'db status [--json] | db copy --to postgres://… [--json]',
    summary:
      "status: the database (SQLite, or PostgreSQL with database.url): backend, location and size, schema version against this tapgate's, rows per table (reads only, migrates nothing). " +
      'copy: the data dir\'s SQLite database into an empty PostgreSQL database (every table, in one transaction), with row counts on both sides',
    options: {
      json: { type: 'boolean', description: 'Print one JSON object instead of the table' },
      to: { type: 'string', value: 'URL', description: 'db copy: the empty PostgreSQL database (postgres://user@host/db; a Unix socket: ?host=/dir)' },
    },
    load: () => import('./commands/db.js'),
  },
  tap: {
    usage: 'tap --uid UID [--links-module] [--json]',
    summary: 'Record an operator-entered tap and print the new ref id',
    options: {
      uid: { type: 'string', value: 'UID', description: 'Chip UID (14 hex digits, ":" allowed)' },
      'links-module': { type: 'boolean', description: 'Mark the ref as created by the Links Module' },
      json: { type: 'boolean', description: 'Print JSON instead of the bare ref id' },
    },
    load: () => import('./commands/tap.js'),
  },
  taps: {
    usage: 'taps list [--team ID] [--refused] [--limit N] [--json] | taps set-counter --uid UID --team ID --counter N',
    summary: "Read the tap log (why taps were refused); move a chip's last accepted counter after checking it",
    options: {
      team: teamOption,
      refused: { type: 'boolean', description: 'Only refused taps' },
      limit: { type: 'string', value: 'N', description: 'At most N rows, newest first (default 50)' },
      json: { type: 'boolean', description: 'Print JSON instead of one line per tap' },
      uid: { type: 'string', value: 'UID', description: 'Chip UID (set-counter)' },
      counter: { type: 'string', value: 'N', description: 'The last accepted counter to set (set-counter); the next tap must be above it' },
    },
    load: () => import('./commands/taps.js'),
  },
  profile: {
    usage:
      'profile create --team ID --name N --scheme S [--mode aes|lrp] [--meta-key HEX | --meta-key-file F] [--file-key HEX | --file-key-file F] ' +
      '[--master-key HEX | --master-key-file F] [--picc-param P --mac-param M [--enc-param E] | --picc-offset N --mac-input-offset N --mac-offset N ' +
      '[--enc-offset N --enc-length N]] [--url TEMPLATE|none] | profile list --team ID',
    summary: 'Create (or update) and list chip profiles: URL layout, URL template, mode, keys (README "Verifying taps")',
    options: {
      team: teamOption,
      name: { type: 'string', value: 'N', description: 'Profile name (unique in the team; an existing one is updated)' },
      scheme: { type: 'string', value: 'S', description: 'Key scheme: static, per_chip, an10922, sdm_backend, boltcard' },
      mode: { type: 'string', value: 'aes|lrp', description: "The chips' mode (default: as stored, else aes)" },
      'meta-key': { type: 'string', value: 'HEX', description: 'SDM meta read key (32 hex); lands in shell history: prefer --meta-key-file' },
      'meta-key-file': { type: 'string', value: 'FILE', description: 'A file holding the meta read key as hex' },
      'file-key': { type: 'string', value: 'HEX', description: 'SDM file read key (32 hex, scheme static); prefer --file-key-file' },
      'file-key-file': { type: 'string', value: 'FILE', description: 'A file holding the file read key as hex' },
      'master-key': { type: 'string', value: 'HEX', description: 'Master / issuer key (32 hex; an10922, sdm_backend, boltcard); prefer --master-key-file' },
      'master-key-file': { type: 'string', value: 'FILE', description: 'A file holding the master key as hex' },
      url: {
        type: 'string',
        value: 'TEMPLATE',
        description: 'The tap URL chip provision writes, e.g. https://tap.example/t?e={picc}&c={mac}; checked against the layout; none clears it',
      },
      ...layoutOptions,
    },
    load: () => import('./commands/profile.js'),
  },
  chip: {
    usage:
      'chip set --uid UID --team ID --profile N [--file-key HEX | --file-key-file F] [--random-uid | --no-random-uid] [--key-version N] [--wallet ADDR|none] | ' +
      'chip set --uid UID --team ID --wallet ADDR|none | chip inspect [--reader NAME] [--json] | ' +
      'chip provision --team ID --profile N [--url TEMPLATE] [--reader NAME] [--batch] [--dry-run] [--record FILE] [--lrp --irreversible] [--random-id --irreversible] [--allow-unverified] | ' +
      'chip reset --uid UID [--reader NAME] [--record FILE]',
    summary: "Put a chip under a chip profile; set its attendee's wallet; inspect, provision or reset an NTAG 424 DNA on a reader",
    options: {
      uid: { type: 'string', value: 'UID', description: 'Chip UID (14 hex digits, ":" allowed)' },
      team: { type: 'string', value: 'ID', description: "Team id (the chip's team)" },
      profile: { type: 'string', value: 'N', description: 'Chip profile name in that team' },
      'file-key': { type: 'string', value: 'HEX', description: "The chip's SDM file read key (per_chip); prefer --file-key-file" },
      'file-key-file': { type: 'string', value: 'FILE', description: "A file holding the chip's file read key as hex" },
      'random-uid': { type: 'boolean', description: 'The chip answers with a random ID: stations skip the RF UID check' },
      'no-random-uid': { type: 'boolean', description: 'Undo --random-uid' },
      'key-version': { type: 'string', value: 'N', description: 'Bolt Card key version (scheme boltcard; default 1)' },
      wallet: { type: 'string', value: 'ADDR', description: "The attendee's wallet (0x address): a check-in mints to it; none clears it" },
      reader: { type: 'string', value: 'NAME', description: 'inspect/provision/reset: only readers whose name contains this' },
      json: { type: 'boolean', description: 'inspect: print the whole reading as JSON' },
      url: {
        type: 'string',
        value: 'TEMPLATE',
        description: "provision: the tap URL with {picc} {mac} (or {uid} {ctr} {mac}, {enc}, {macin}); default: the profile's (profile create --url); given, it wins for this run",
      },
      batch: { type: 'boolean', description: 'provision: keep the reader open for a stack of cards (Ctrl-C ends it with a summary)' },
      'dry-run': { type: 'boolean', description: 'provision: print the plan (URL, NDEF, file settings, slots; never keys) and write nothing' },
      record: { type: 'string', value: 'FILE', description: 'provision/reset: the full APDU transcript as JSON Lines (mode 0600: it reveals keys)' },
      lrp: { type: 'boolean', description: 'provision: switch the chip to LRP (needs --irreversible and an LRP profile)' },
      'random-id': { type: 'boolean', description: 'provision: switch on Random ID (needs --irreversible)' },
      irreversible: { type: 'boolean', description: 'Confirms --lrp or --random-id, which no reset can undo' },
      'allow-unverified': { type: 'boolean', description: 'provision: accept a chip whose NXP originality signature does not verify (the virtual card)' },
    },
    load: () => import('./commands/chip.js'),
  },
  event: {
    usage: 'event set --event ID [--reentry yes|no] [--public-names first|full] [--admit-unpaid yes|no]',
    summary: "An event's door settings: may a guest who went out come back in; first names or whole names on the public screen; are unpaid orders let in",
    options: {
      event: { type: 'string', value: 'ID', description: 'The guestbook event' },
      reentry: { type: 'string', value: 'yes|no', description: 'A guest who went out (an exit door) may come back in (default yes)' },
      'public-names': { type: 'string', value: 'first|full', description: "What the check-in screen calls a guest (default first: the first name only)" },
      'admit-unpaid': { type: 'string', value: 'yes|no', description: 'Let in guests whose order is not paid (pretix pending, Hi.Events AWAITING_PAYMENT); default no: refused "not paid"' },
    },
    load: () => import('./commands/event.js'),
  },
  station: {
    usage:
      'station --gateway URL --token T [--reader S] [--record FILE] [--queue-dir D] | station --replay FILE [--gateway URL --token T [--rewind-counters] [--no-check] [--json]] | ' +
      'station create --team ID [--name N] | station list --team ID | station revoke --prefix P | ' +
      'station set --station ID --mode checkin|bind|exit --event EVENT_ID [--ticket-types VIP,Press|all] | station set --station ID --mode claim|closed|none | ' +
      'station kiosk-url --station ID [--base-url URL] | station staff-pin --station ID (PIN on stdin) | ' +
      'station kiosk-tokens --station ID [--revoke PREFIX]',
    summary: "Run a station on the local PC/SC readers (or replay a fixture); create, list or revoke station tokens; a station's mode, kiosk URL and staff PIN",
    options: {
      team: teamOption,
      name: { type: 'string', value: 'N', description: 'A name to tell stations apart' },
      prefix: { type: 'string', value: 'P', description: 'Token prefix (as listed) or the whole token' },
      gateway: { type: 'string', value: 'URL', description: 'The gateway to send taps to (e.g. http://127.0.0.1:8787)' },
      token: { type: 'string', value: 'T', description: 'Station token (tgs_…; or $TAPGATE_STATION_TOKEN)' },
      reader: { type: 'string', value: 'S', description: 'Only readers whose name contains S (default: every reader)' },
      record: { type: 'string', value: 'FILE', description: 'Also record every tap (APDU transcripts) to this JSON Lines fixture' },
      replay: { type: 'string', value: 'FILE', description: 'Feed a recorded fixture through the station instead of live readers' },
      'rewind-counters': { type: 'boolean', description: "Replay: first move the fixture's chips' counters back below its taps (on the gateway's machine; its data dir)" },
      'no-check': { type: 'boolean', description: "Replay: feed the taps without comparing the verdicts with the fixture's (exit 0 whatever they are)" },
      json: { type: 'boolean', description: 'Replay: one JSON line per tap (whole verdict, expected, match), then a summary line' },
      'queue-dir': { type: 'string', value: 'D', description: 'Where taps wait while the gateway is unreachable (default <data dir>/station-queue)' },
      station: { type: 'string', value: 'ID', description: 'Station id, as `station list` shows it (set, kiosk-url, staff-pin, kiosk-tokens)' },
      mode: { type: 'string', value: 'M', description: 'checkin, bind or exit (a door: with --event), claim, closed, or none (set)' },
      event: { type: 'string', value: 'ID', description: 'The guestbook event a door counts and mints (set)' },
      'ticket-types': { type: 'string', value: 'T,T', description: 'The ticket types this door admits (set; all: every type, the default)' },
      'base-url': { type: 'string', value: 'URL', description: "The kiosk page's base (kiosk-url; default publicBaseUrl, else http://127.0.0.1:<port>)" },
      revoke: { type: 'string', value: 'PREFIX', description: 'Revoke the kiosk token with this prefix (as kiosk-tokens lists it) or the whole token; the station goes on (kiosk-tokens)' },
    },
    load: () => import('./commands/station.js'),
  },
  'console-link': {
    usage: 'console-link --team ID [--base-url URL] | console-link --team ID --revoke-sessions',
    summary:
      "A one-time sign-in link to the team's web console (one use, within an hour; the session lasts 12 hours); " +
      "--revoke-sessions signs every console session of the team out",
    options: {
      team: teamOption,
      'base-url': { type: 'string', value: 'URL', description: "The gateway's address as the browser reaches it (default publicBaseUrl, else http://127.0.0.1:<port>)" },
      'revoke-sessions': { type: 'boolean', description: "End every console session of the team (makes no link)" },
    },
    load: () => import('./commands/consoleLink.js'),
  },
  'virtual-card': {
    usage: 'virtual-card --uid UID (--blank | --meta-key HEX --file-key HEX [--mode aes|lrp] [--counter N] [--url TEMPLATE]) [--vpcd HOST:PORT]',
    summary: 'A software NTAG 424 DNA with real SDM, inserted into a local pcscd through vsmartcard vpcd',
    options: {
      uid: { type: 'string', value: 'UID', description: 'The card UID (14 hex digits)' },
      blank: { type: 'boolean', description: 'A factory-fresh card (keys zero, no SDM) to provision' },
      'meta-key': { type: 'string', value: 'HEX', description: 'SDM meta read key (32 hex)' },
      'file-key': { type: 'string', value: 'HEX', description: 'SDM file read key (32 hex)' },
      mode: { type: 'string', value: 'aes|lrp', description: 'SDM mode (default aes)' },
      counter: { type: 'string', value: 'N', description: 'SDMReadCtr before the first read (default 0)' },
      url: { type: 'string', value: 'TEMPLATE', description: 'The NDEF URL; default http://127.0.0.1:8787/tap?e=…&c=…' },
      vpcd: { type: 'string', value: 'HOST:PORT', description: 'vpcd socket of pcscd (default 127.0.0.1:35963)' },
    },
    load: () => import('./commands/virtualCard.js'),
  },
  sun: {
    usage: 'sun verify URL [--meta-key HEX] [--file-key HEX] […] (the keys the URL needs: SUN both, a plain uid/ctr/cmac mirror --file-key)',
    summary: 'Check one tap URL against SUN keys (no database; docs/sun-verify.md)',
    options: {
      'meta-key': { type: 'string', value: 'HEX', description: 'SDM meta read key (32 hex; not for a plain uid/ctr/cmac mirror); never printed' },
      'file-key': { type: 'string', value: 'HEX', description: 'SDM file read key (32 hex); never printed' },
      mode: { type: 'string', value: 'aes|lrp', description: "The chip's mode (default: from the PICCData length)" },
      ...layoutOptions,
      ntag21x: { type: 'boolean', description: 'Accept an NTAG 21x mirror (no MAC) as valid, unauthenticated' },
    },
    load: () => import('./commands/sunVerify.js'),
  },
}

function optionLines(options: Record<string, OptionSpec>): string[] {
  return Object.entries(options).map(([name, o]) => {
    const flag = `--${name}${o.value ? ` ${o.value}` : ''}`
    return `  ${flag.padEnd(22)} ${o.description}`
  })
}

const commandWidth = Math.max(...Object.keys(commands).map((name) => name.length))

function mainHelp(): string {
  return [
    `tapgate ${version}: NFC tap gateway`,
    '',
    'Usage: tapgate <command> [options]',
    '',
    'Commands:',
    ...Object.entries(commands).map(([name, c]) => `  ${name.padEnd(commandWidth)} ${c.summary}`),
    '',
    'Options for every command:',
    ...optionLines(globalOptions),
    '',
    'Run `tapgate <command> --help` for its options.',
  ].join('\n')
}

function commandHelp(spec: CommandSpec): string {
  return [`Usage: tapgate ${spec.usage}`, '', spec.summary, '', 'Options:', ...optionLines({ ...spec.options, ...globalOptions })].join('\n')
}

async function main(argv: string[]): Promise<void> {
  const [name, ...rest] = argv
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') return void console.log(mainHelp())
  if (name === '--version' || name === '-v') return void console.log(version)
  const spec = commands[name]
  if (!spec) throw new UsageError(`unknown command "${name}"`)
  let parsed: { values: Flags; positionals: string[] }
  try {
    // No option is declared `multiple`, so every value is a string or a boolean.
    parsed = parseArgs({ args: rest, options: { ...spec.options, ...globalOptions }, allowPositionals: true, strict: true }) as {
      values: Flags
      positionals: string[]
    }
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
  if (parsed.values.help) return void console.log(commandHelp(spec))
  await (await spec.load()).run(parsed.positionals, parsed.values)
}

function report(error: unknown): number {
  if (error instanceof UsageError) {
    console.error(`tapgate: ${error.message} (see tapgate --help)`)
    return 2
  }
  if (error instanceof ConfigError) {
    console.error(`tapgate: ${error.message}`)
    return 1
  }
  if (error instanceof BaseError) {
    console.error(`tapgate: ${error.message}`)
    for (const [path, message] of Object.entries(error.errors ?? {})) console.error(`  - ${path}: ${message}`)
    return 1
  }
  console.error(`tapgate: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
  return 1
}

try {
  await main(process.argv.slice(2))
} catch (error) {
  process.exitCode = report(error)
}
