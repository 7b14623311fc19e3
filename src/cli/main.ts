import { cac } from 'cac'
import { ConfigError } from '../config.js'
import { BaseError } from '../errors.js'
import { version } from '../version.js'
import { UsageError } from './usage.js'


const cli = cac('tapgate')
cli.option('--data-dir <dir>', 'Data directory (default ./data, or $TAPGATE_DATA_DIR)')
cli.option('--config <file>', 'JSON config file (default $TAPGATE_CONFIG or ./tapgate.config.json)')

// Each action imports its command lazily so `--help` and small commands stay fast.
cli
  .command('serve', 'Run the gateway (what `npm start` runs)')
  .option('--port <port>', 'Port (default 8787, or $PORT)')
  .option('--host <host>', 'Interface (default 127.0.0.1, or $HOST)')
  .option('--no-demo', 'Do not create the demo team on an empty data dir')
  .action(run(async (o) => (await import('./commands/serve.js')).serve(o)))

cli
  .command('team <action>', 'Teams: `team create --name N`, `team list`')
  .option('--name <name>', 'Team name')
  .option('--redirect-url <url>', 'Where taps of the team’s chips redirect (optional)')
  .action(run(async (action: string, o) => (await import('./commands/team.js')).team(action, o)))

cli
  .command('key <action>', 'API keys: `key create --team ID`, `key revoke --prefix P`, `key list --team ID`')
  .option('--team <id>', 'Team id')
  .option('--label <label>', 'A note to tell keys apart')
  .option('--prefix <prefix>', 'Key prefix (as listed) or the whole key, for revoke')
  .action(run(async (action: string, o) => (await import('./commands/key.js')).key(action, o)))

cli
  .command('import <file>', 'Import teams, chips, tokens and events from a JSON file (format: README)')
  .action(run(async (file: string, o) => (await import('./commands/importFile.js')).importFile(file, o)))

cli
  .command('tap', 'Record an operator-entered tap and print the new ref id')
  .option('--uid <uid>', 'Chip UID (14 hex digits, ":" allowed)')
  .option('--links-module', 'Mark the ref as created by the Links Module (only its team’s key validates it)')
  .option('--json', 'Print JSON instead of the bare ref id')
  .action(run(async (o) => (await import('./commands/tap.js')).tap(o)))

cli.help()
cli.version(version)

function run<A extends unknown[]>(command: (...args: A) => Promise<void>) {
  return async (...args: A) => {
    try {
      await command(...args)
    } catch (error) {
      process.exitCode = report(error)
    }
  }
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
  cli.parse(process.argv, { run: false })
  if (!cli.matchedCommand) {
    if (cli.args.length > 0) throw new UsageError(`unknown command "${cli.args[0]}"`)
    if (!cli.options.help && !cli.options.version) cli.outputHelp()
  } else await cli.runMatchedCommand()
} catch (error) {
  process.exitCode = report(error)
}
