/**
 * The `maka` command line: every command, option and exit code of docs/contract.md §4, parsed by commander.
 * Commands are loaded lazily so `maka sessions` never pays for ink or the runtime it does not use.
 * Parse errors (unknown option, missing argument, bad choice) are one stderr line and exit 2.
 */
import { readFileSync } from 'node:fs'
import { Command, CommanderError, Option } from 'commander'
import {
  BadInputError,
  ExitCode,
  HistoryChangedError,
  ShowCutOffError,
  StoreUnavailableError,
  WriteFailedError,
} from './ExitCode.js'
import {
  type GlobalFlags,
  DEMO_CRASH_POINTS,
  type DemoFlags,
  type DemoChildFlags,
  type ChaosFlags,
  type ChaosChildFlags,
  type ChatFlags,
  type RunFlags,
  type JsonFlag,
  type ResolveFlags,
  type ResumeFlags,
  type ResumePlanFlags,
  type McpListFlags,
  type UiFlags,
  type StoreCopyFlags,
  type ConfigListFlags,
  type DoctorFlags,
} from './CommandFlags.js'

/**
 * The version of the `@maka/cli` package (`maka --version`), read from its package.json next to
 * `src/` and `dist/`.
 * @category constructors
 */
export const cliVersion = (): string => {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version?: unknown
  }
  return typeof manifest.version === 'string' ? manifest.version : 'unknown'
}

// Every command's --help ends with its exit codes and the environment it reads, so a script author
// never has to open the README to branch on them.
const EXIT_TEXT = {
  ok: '0    done',
  failed: '1    the run failed',
  badInput: '2    bad input (unknown option, session or run, malformed id, unreadable data dir); nothing changed',
  parked: '3    parked: resuming was refused, every reason printed (also: nothing to resume)',
  interrupted: '130  interrupted by SIGINT (Ctrl+C): the active run was cancelled (143 for SIGTERM)',
} as const

const helpFooter = (codes: ReadonlyArray<string>): string =>
  [
    '',
    'Exit codes:',
    ...codes.map((line) => `  ${line}`),
    '',
    'Environment:',
    '  MAKA_RUNTIME_SAFE_BOUNDARY_RESUME=1  enables safe-boundary resume (without it every plan parks',
    '                                       with resume_feature_disabled)',
    '  MAKA_RUNTIME_TOOL_JOURNAL=0          runs keep no tool journal (by default, with the flag above, each',
    '                                       tool call is journaled so a crash inside a tool can be continued)',
    '  MAKA_HOME                            the data directory when --data-dir is not given (else ~/.maka)',
    '  MAKA_STORE                           the store when --store is not given (jsonl:DIR, sqlite:FILE, postgres://…)',
    '  MAKA_HOST_ID                         this host in a shared postgres:// store (default: the hostname)',
    '  MAKA_API_KEY                         the key of --provider openai-compatible (a profile may name another variable)',
    '  MAKA_PROFILE                         the provider profile of new sessions when no flag chooses one',
    '  MAKA_MCP_START_TIMEOUT_MS            how long an MCP server may take to start and list its tools (default 60000)',
    '  MAKA_PROVIDER_MAX_ATTEMPTS           openai-compatible: tries of a model step that met a 429, a 5xx, a stall',
    '                                       or a dropped stream (default 5; 1 never tries again)',
    '  MAKA_PROVIDER_RETRY_BASE_MS          the first wait between those tries, doubling after (default 1000)',
    '  MAKA_PROVIDER_RETRY_MAX_WAIT_MS      all the waits of one step together, at most (default 120000)',
    '',
    'Settings: <data dir>/config.toml (maka config list); flags win over the environment, the environment over it.',
  ].join('\n')

const addProviderOptions = (command: Command): Command =>
  command
    .option('--script <file>', 'scripted model: a JSON array of steps (default: a built-in script)')
    // No commander default: `resume` must tell a given --provider from none (then the source run's).
    .addOption(
      new Option(
        '--provider <name>',
        'model provider (default: scripted; resume: the one the source run used)',
      ).choices(['scripted', 'openai-compatible']),
    )
    .option('--base-url <url>', 'openai-compatible: the endpoint base URL')
    .option('--model <model>', 'openai-compatible: the model name (key from MAKA_API_KEY)')
    .option(
      '--timeout <ms>',
      'openai-compatible: give up after this long without a response or a streamed chunk (default: $MAKA_PROVIDER_TIMEOUT_MS, else 120000); also the limit of one MCP tool call (default 60000)',
    )
    .option('--yes', 'allow tool calls that change the workspace (permission mode allow; default deny)')
    .addOption(
      new Option(
        '--permission-mode <mode>',
        "how tool calls that change the workspace are authorised (default: the session's recorded mode, else the settings', else deny, or ask in chat and ui)",
      ).choices(['ask', 'allow', 'deny']),
    )
    .option('--profile <name>', 'a provider profile of the settings file (maka config; default: its "profile")')

const oneLine = (text: string): string => text.trim().replace(/\s*\n\s*/g, ' ')

// Program options are positional (so `resume plan --json` reaches `plan`), so every command repeats
// the global ones: `maka --data-dir D sessions` and `maka sessions --data-dir D` both work.
const withGlobalOptions = (command: Command): Command =>
  command
    .option('--data-dir <dir>', 'data directory (default: $MAKA_HOME, else ~/.maka)')
    .option('--store <store>', 'jsonl:DIR, sqlite:FILE or postgres://… (default: $MAKA_STORE, else the data dir)')
    .option('--verbose', 'lifecycle log on stderr (identities and codes only)')

/**
 * The global options of a command: the nearest `--data-dir` given, `--verbose` given anywhere.
 * @category constructors
 */
export const globalsOf = (command: Command): GlobalFlags => {
  let dataDir: string | undefined
  let store: string | undefined
  let verbose = false
  for (let c: Command | null = command; c !== null; c = c.parent) {
    const opts = c.opts<{ dataDir?: string; store?: string; verbose?: boolean }>()
    dataDir = dataDir ?? opts.dataDir
    store = store ?? opts.store
    verbose = verbose || opts.verbose === true
  }
  return { ...(dataDir === undefined ? {} : { dataDir }), ...(store === undefined ? {} : { store }), verbose }
}

/**
 * Builds the program; each action stores its exit code in `result`.
 * @category constructors
 */
export const buildProgram = (result: { code: ExitCode }): Command => {
  const program = new Command('maka')
  withGlobalOptions(program)
    .description('Safe continuation of interrupted AI-agent turns after a crash.')
    .enablePositionalOptions()
    .exitOverride()
    .configureOutput({ outputError: (text, write) => write(`maka: ${oneLine(text.replace(/^error: /, ''))}\n`) })
    .showSuggestionAfterError(true)
    .version(cliVersion(), '-V, --version', 'the version of maka')
    .addHelpText(
      'after',
      helpFooter([EXIT_TEXT.ok, EXIT_TEXT.failed, EXIT_TEXT.badInput, EXIT_TEXT.parked, EXIT_TEXT.interrupted]),
    )

  const act =
    <A extends Array<unknown>>(handler: (...args: A) => Promise<ExitCode>) =>
    async (...args: A) => {
      result.code = await handler(...args)
    }
  const sub = (parent: Command, name: string, hidden = false): Command =>
    withGlobalOptions(parent.command(name, { hidden }))

  sub(program, 'demo')
    .description('crash a scripted turn with SIGKILL in a child process, recover, plan, continue, print the lineage')
    .addOption(
      new Option('--at <point>', 'where the child process is killed')
        .choices(DEMO_CRASH_POINTS)
        .default('after_tool_response'),
    )
    .option('--script <file>', 'the scripted turn to crash (default: the built-in demo script)')
    .option('--json', 'one JSON object with the steps, the plan, the result and the lineage')
    .option('--keep', 'keep the scratch data dir and workspace (also implied by an explicit --data-dir)')
    .addHelpText(
      'after',
      helpFooter(['0    every step behaved as the contract says', '1    a step did not', EXIT_TEXT.badInput]),
    )
    .action(
      act(async (options: DemoFlags, command: Command) =>
        (await import('./commands/demo.js')).demo(options, globalsOf(command)),
      ),
    )

  sub(program, '__demo-child', true)
    .requiredOption('--session <id>')
    .requiredOption('--cwd <dir>')
    .requiredOption('--at <point>')
    .option('--script <file>')
    .action(
      act(async (options: DemoChildFlags, command: Command) =>
        (await import('./commands/demoChild.js')).demoChild(options, globalsOf(command)),
      ),
    )

  sub(program, 'chaos')
    .description('SIGKILL scripted turns and concurrent resumes at random boundaries; check the invariants on disk')
    .option('--iterations <n>', 'how many iterations (default 100)')
    .option(
      '--seed <s>',
      'seed of the first iteration (default: random); each violation names the seed that replays it',
    )
    .option('--json', "one JSON object: the summary, kills per boundary, violations, each iteration's schedule")
    .option('--keep', "keep every iteration's scratch folder (those with violations are always kept)")
    .option(
      '--storm-size <n>',
      'every iteration: kill the turn at a crash point, then start n (2-16) recover/resume children at once over its session',
    )
    .addOption(
      new Option('--storm-roles <who>', 'who storms with --storm-size (default: a seeded mix)').choices([
        'mixed',
        'recover',
        'resume',
      ]),
    )
    .addOption(
      new Option(
        '--journal <state>',
        'turns whose tools take real time (list_dir, a 1.5 s build, read_file, a 1 s test run, write_file), killed at a random moment, then recovered and resumed; reports the share that continued without a person, with the tool journal on or off',
      ).choices(['on', 'off']),
    )
    .action(
      act(async (options: ChaosFlags, command: Command) =>
        (await import('./commands/chaos.js')).chaos(options, globalsOf(command)),
      ),
    )

  sub(program, '__chaos-child', true)
    .addOption(new Option('--mode <mode>').choices(['turn', 'resume', 'recover']).makeOptionMandatory())
    .requiredOption('--session <id>')
    .requiredOption('--cwd <dir>')
    .requiredOption('--script <file>')
    .option('--crash-at <point>')
    .option('--crash-nth <n>')
    .option('--cue')
    .action(
      act(async (options: ChaosChildFlags, command: Command) =>
        (await import('./commands/chaosChild.js')).chaosChild(options, globalsOf(command)),
      ),
    )

  addProviderOptions(
    sub(program, 'chat')
      .description('interactive terminal UI (/resume, /resolve, /plan, /sessions, /help, /exit; Esc cancels a turn)')
      .option('--session <id>', 'the session to open or create (default: a new one)')
      .option('--cwd <dir>', 'workspace of a new session (default: the current directory)')
      .option(
        '--mcp-config <file>',
        'an MCP config file ({"mcpServers": …}) read after <data dir>/mcp.json and the folder\'s .mcp.json',
      )
      .addHelpText(
        'after',
        helpFooter([
          '0    left with /exit, /quit, Ctrl+D or Ctrl+C on an empty line while nothing runs',
          EXIT_TEXT.badInput,
          '130  SIGINT while a turn runs: it was cancelled (143 for SIGTERM); the Esc and Ctrl+C keys cancel a turn and stay',
        ]),
      ),
  ).action(
    act(async (options: ChatFlags, command: Command) =>
      (await import('./commands/chat.js')).chat(options, globalsOf(command)),
    ),
  )

  addProviderOptions(
    sub(program, 'run')
      .description('one headless turn; committed events are streamed to stdout')
      .argument('<prompt>', 'the user prompt')
      .option('--session <id>', 'the session to continue or create (default: a new one)')
      .option('--cwd <dir>', 'workspace of a new session (default: the current directory)')
      .option('--json', 'newline-delimited JSON: one object per committed event, then a result object')
      .option(
        '--mcp-config <file>',
        'an MCP config file ({"mcpServers": …}) read after <data dir>/mcp.json and the folder\'s .mcp.json',
      )
      .addHelpText(
        'after',
        helpFooter([
          '0    the turn completed',
          '1    the turn failed or was refused',
          EXIT_TEXT.badInput,
          EXIT_TEXT.interrupted,
        ]),
      ),
  ).action(
    act(async (prompt: string, options: RunFlags, command: Command) =>
      (await import('./commands/run.js')).run(prompt, options, globalsOf(command)),
    ),
  )

  sub(program, 'sessions')
    .description('sessions with their latest run status and an "interrupted" mark')
    .option('--json', 'JSON output')
    .addHelpText('after', helpFooter(['0    listed', EXIT_TEXT.badInput]))
    .action(
      act(async (options: JsonFlag, command: Command) =>
        (await import('./commands/sessions.js')).sessions(options, globalsOf(command)),
      ),
    )

  sub(program, 'show')
    .description("a session's runs as a lineage tree and each ledger as a timeline")
    .argument('<session>', 'session id')
    .option('--json', 'JSON output')
    .addHelpText(
      'after',
      helpFooter([
        '0    shown',
        '1    a ledger changed while it was shown, or the store failed: the output is cut off',
        '2    unknown session or other bad input; nothing changed',
      ]),
    )
    .action(
      act(async (sessionId: string, options: JsonFlag, command: Command) =>
        (await import('./commands/show.js')).show(sessionId, options, globalsOf(command)),
      ),
    )

  sub(program, 'resolve')
    .description(
      'record what became of a tool call an interrupted turn left open (it took effect, it did not, it failed); then resume',
    )
    .argument('<session>', 'session id')
    .option('--call <id>', 'the tool call id (as the park answer lists it)')
    .option('--operation <id>', 'the operation id, when a tool call id names more than one call')
    .option('--as <verdict>', 'applied | not_applied | failed')
    .option('--output <text>', "the call's result as the model will read it (at most 64 KiB; never logged)")
    .option('--json', 'one JSON object with the result')
    .addHelpText(
      'after',
      helpFooter([
        '0    recorded: `maka resume SESSION` continues the turn with it',
        '1    a write failed; recovery closes what was started',
        '2    bad input (resolve_unavailable, --as, --call/--operation, --output, unknown session); nothing written',
        '3    refused: every reason printed with its code; nothing written',
      ]),
    )
    .action(
      act(async (sessionId: string, options: ResolveFlags, command: Command) =>
        (await import('./commands/resolve.js')).resolve(sessionId, options, globalsOf(command)),
      ),
    )

  const store = sub(program, 'store').description('move sessions between stores')
  sub(store, 'copy')
    .description('copy every session of one store into another, verifying each row (never overwrites)')
    .requiredOption('--from <store>', 'the source: jsonl:DIR, sqlite:FILE or postgres://…')
    .requiredOption('--to <store>', 'the destination: jsonl:DIR, sqlite:FILE or postgres://…')
    .option('--json', 'JSON output')
    .addHelpText(
      'after',
      helpFooter([
        '0    copied and verified',
        '1    a write failed, or a copied run did not read back the same',
        '2    bad input, a source that does not read whole, or a session the destination holds; nothing copied',
      ]),
    )
    .action(act(async (options: StoreCopyFlags) => (await import('./commands/storeCopy.js')).storeCopy(options)))

  sub(program, 'recover')
    .description('the startup recovery pass, reporting each repair')
    .option('--json', 'JSON output')
    .addHelpText('after', helpFooter(['0    the pass ran (each repair reported)', EXIT_TEXT.badInput]))
    .action(
      act(async (options: JsonFlag, command: Command) =>
        (await import('./commands/recover.js')).recover(options, globalsOf(command)),
      ),
    )

  const config = sub(program, 'config').description(
    'the settings file <data dir>/config.toml: provider profiles, permission mode, safe resume',
  )
  const configFooter = helpFooter([
    '0    done',
    '1    config get: the key is not set; config set: the file could not be written',
    EXIT_TEXT.badInput,
  ])
  sub(config, 'get')
    .description('print the value of one key (e.g. safeResume, profiles.local.model)')
    .argument('<key>', 'the key')
    .addHelpText('after', configFooter)
    .action(
      act(async (key: string, _options: unknown, command: Command) =>
        (await import('./commands/config.js')).configGet(key, globalsOf(command)),
      ),
    )
  sub(config, 'set')
    .description('set one key (checked first; a bad key or value writes nothing)')
    .argument('<key>', 'the key')
    .argument('<value>', 'the value')
    .addHelpText('after', configFooter)
    .action(
      act(async (key: string, value: string, _options: unknown, command: Command) =>
        (await import('./commands/config.js')).configSet(key, value, globalsOf(command)),
      ),
    )
  sub(config, 'unset')
    .description('remove one key')
    .argument('<key>', 'the key')
    .addHelpText('after', configFooter)
    .action(
      act(async (key: string, _options: unknown, command: Command) =>
        (await import('./commands/config.js')).configSet(key, undefined, globalsOf(command)),
      ),
    )
  sub(config, 'list')
    .description('every key the settings file holds, and the file')
    .option('--json', 'one JSON object: the file and its settings')
    .addHelpText('after', configFooter)
    .action(
      act(async (options: ConfigListFlags, command: Command) =>
        (await import('./commands/config.js')).configList(options, globalsOf(command)),
      ),
    )

  addProviderOptions(
    sub(program, 'doctor')
      .description(
        'check the settings, the safe-resume flag, the model and its key, its endpoint (one small request), the data dir and the store; each with its fix',
      )
      .option('--json', 'one JSON object: ok, and each check with its status, detail and fix')
      .option(
        '--mcp-config <file>',
        'an MCP config file ({"mcpServers": …}) read after <data dir>/mcp.json and the folder\'s .mcp.json',
      )
      .addHelpText(
        'after',
        helpFooter(['0    nothing failed (warnings allowed)', '1    a check failed', EXIT_TEXT.badInput]),
      ),
  ).action(
    act(async (options: DoctorFlags, command: Command) =>
      (await import('./commands/doctor.js')).doctor(options, globalsOf(command)),
    ),
  )

  const ui = addProviderOptions(
    sub(program, 'ui')
      .description('the desktop UI in a browser: serves it on 127.0.0.1 with a per-run token until Ctrl+C')
      .option('--port <n>', 'port to listen on (default: a free one)')
      .option('--no-open', 'print the address without opening a browser'),
  )
  // The page asks each question, so the shared option's "default deny" does not hold here.
  const yes = ui.options.find((option) => option.long === '--yes')
  if (yes !== undefined) yes.description = 'allow tool calls that change the workspace (default: ask in the page)'
  ui.addHelpText('after', helpFooter(['0    stopped by Ctrl+C or SIGTERM', EXIT_TEXT.badInput])).action(
    act(async (options: UiFlags, command: Command) =>
      (await import('./commands/ui.js')).ui(options, globalsOf(command)),
    ),
  )

  const mcp = sub(program, 'mcp').description('MCP servers: the tools they give and the recovery mode each gets')
  sub(mcp, 'list')
    .description('start each configured MCP server, list its tools with the recovery mode each gets and why, stop it')
    .option('--json', 'one JSON object: the files read, each server with its state and tools')
    .option('--cwd <dir>', 'the folder whose .mcp.json applies (default: the current directory)')
    .option(
      '--mcp-config <file>',
      'an MCP config file ({"mcpServers": …}) read after <data dir>/mcp.json and the folder\'s .mcp.json',
    )
    .addHelpText(
      'after',
      helpFooter(['0    listed (a server that did not start is listed with why)', EXIT_TEXT.badInput]),
    )
    .action(
      act(async (options: McpListFlags, command: Command) =>
        (await import('./commands/mcpList.js')).mcpList(options, globalsOf(command)),
      ),
    )

  const resume = addProviderOptions(
    sub(program, 'resume')
      .description('recover, plan the latest safe boundary and execute it')
      .option(
        '--session <id>',
        'session (default: the most recent interrupted one of this folder, else of any folder, else the most recent one)',
      )
      .option('--pick', 'list the interrupted sessions and choose one (needs a terminal)')
      .option(
        '--mcp-config <file>',
        'an MCP config file ({"mcpServers": …}) read after <data dir>/mcp.json and the folder\'s .mcp.json',
      )
      .option('--json', 'newline-delimited JSON: the plan, one object per committed event, then a result object')
      .option(
        '--no-wait',
        'park at once when a command of the interrupted turn is still running (default: wait for it)',
      )
      .addHelpText(
        'after',
        helpFooter([
          '0    the continuation completed',
          '1    the continuation failed',
          EXIT_TEXT.badInput,
          '3    parked or rejected: every reason printed (also: no session or nothing to resume)',
          EXIT_TEXT.interrupted,
        ]),
      ),
  ).action(
    act(async (options: ResumeFlags, command: Command) =>
      options.pick === true
        ? (await import('./commands/resumePick.js')).resumePick(options, globalsOf(command))
        : (await import('./commands/resume.js')).resume(options, globalsOf(command)),
    ),
  )
  sub(resume, 'plan')
    .description('dry run: recovery, then the plan (exit 0 continue, 3 park)')
    .option('--session <id>', 'session (default: the most recent one)')
    .option('--run <id>', 'plan this run instead of the latest top-level run')
    .option('--json', 'print the plan JSON')
    .option('--no-recover', 'skip the recovery pass')
    .option(
      '--mcp-config <file>',
      'an MCP config file ({"mcpServers": …}) read after <data dir>/mcp.json and the folder\'s .mcp.json',
    )
    .addHelpText(
      'after',
      helpFooter([
        '0    the plan continues',
        EXIT_TEXT.badInput,
        '3    the plan parks (also: no session or nothing to resume)',
      ]),
    )
    .action(
      act(async (options: ResumePlanFlags, command: Command) =>
        (await import('./commands/resumePlan.js')).resumePlan(options, globalsOf(command)),
      ),
    )
  return program
}

/**
 * Runs the CLI and returns its exit code; never throws.
 * @category constructors
 */
export const main = async (argv: ReadonlyArray<string>): Promise<ExitCode> => {
  const result: { code: ExitCode } = { code: ExitCode.ok }
  const program = buildProgram(result)
  try {
    await program.parseAsync([...argv])
    return result.code
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.code === 'commander.helpDisplayed' ||
        error.code === 'commander.help' ||
        error.code === 'commander.version'
        ? ExitCode.ok
        : ExitCode.badInput
    }
    if (error instanceof BadInputError) {
      process.stderr.write(`maka: ${oneLine(error.message)}\n`)
      return ExitCode.badInput
    }
    if (error instanceof WriteFailedError || error instanceof StoreUnavailableError) {
      process.stderr.write(`maka: ${oneLine(error.message)}\n`)
      return ExitCode.failed
    }
    if (error instanceof HistoryChangedError) {
      process.stderr.write(`maka: the plan's history could not be printed whole: ${oneLine(error.message)}\n`)
      return ExitCode.failed
    }
    if (error instanceof ShowCutOffError) {
      process.stderr.write(`maka: the session could not be shown whole: ${oneLine(error.message)}\n`)
      return ExitCode.failed
    }
    const message = error instanceof Error ? error.message : String(error)
    process.stderr.write(`maka: unexpected error: ${oneLine(message)}\n`)
    return ExitCode.failed
  }
}
