/**
 * The MCP servers of one command. A command that runs or plans tools opens the servers its config
 * files name — the user's `mcp.json` in the data dir, the project's `.mcp.json` in the session cwd,
 * `--mcp-config FILE` — and closes them when it ends (stdio servers are stopped). With no such file,
 * `@maka/mcp` (and the MCP SDK under it) is never loaded, so commands without MCP start as fast as
 * before. A bad file is bad input (exit 2) with the sentence naming the file and the key. A server
 * that does not start is one stderr line with its reason (never a value of its entry); its tools are
 * absent and plans that need them say so.
 */
import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { McpServerStatus } from '@maka/mcp'
import type { StorePorts } from '@maka/stores'
import type { Tool } from '@maka/tools'
import { BadInputError } from './ExitCode.js'

/**
 * What a command gets: the server tools to register beside the built-in ones, the servers that did
 * not start, every server's status, and `close()` for the command's end.
 * @category models
 */
export interface CommandMcp {
  readonly tools: ReadonlyArray<Tool>
  readonly unavailableToolServers: ReadonlyArray<{ readonly server: string; readonly reason: string }>
  readonly servers: ReadonlyArray<McpServerStatus>
  /** The config files read, in order. */
  readonly files: ReadonlyArray<string>
  close(): Promise<void>
}

/**
 * No servers: what a command has without any MCP config file.
 * @category constructors
 */
export const NO_MCP: CommandMcp = {
  tools: [],
  unavailableToolServers: [],
  servers: [],
  files: [],
  close: () => Promise.resolve(),
}

/**
 * Where a command's servers are configured and how long a call may take.
 * @category models
 */
export interface CommandMcpChoice {
  /** The data dir: its `mcp.json` is the user's file. */
  readonly dataHome: string
  /** The session cwd (its `.mcp.json`); null when no session folder is known yet. */
  readonly cwd: string | null
  /** `--mcp-config FILE`. */
  readonly configFile?: string
  /** `--timeout MS`: one call's time limit. */
  readonly timeout?: string
  /** Whether a server that did not start gets its stderr line (off for `--json` list output that carries it). */
  readonly warn?: boolean
}

/**
 * `--timeout` (or the variable `name`) as milliseconds, or undefined when not given; anything but a
 * positive integer is bad input.
 * @category constructors
 */
export const mcpTimeoutOf = (timeout: string | undefined, name = '--timeout'): number | undefined => {
  if (timeout === undefined) return undefined
  if (!/^[1-9][0-9]{0,8}$/.test(timeout)) throw new BadInputError(`${name} must be a positive number of milliseconds.`)
  return Number(timeout)
}

/**
 * True when some config file applies, so the servers must be opened.
 * @category guards
 */
export const hasMcpConfig = (choice: CommandMcpChoice): boolean =>
  choice.configFile !== undefined ||
  existsSync(join(choice.dataHome, 'mcp.json')) ||
  (choice.cwd !== null && existsSync(join(choice.cwd, '.mcp.json')))

/**
 * Reads the config and opens its servers; NO_MCP when no file applies.
 * @category constructors
 */
export const openCommandMcp = async (choice: CommandMcpChoice): Promise<CommandMcp> => {
  // Without a config file --timeout stays the provider's alone, checked (or not) as before.
  if (!hasMcpConfig(choice)) return NO_MCP
  const callTimeoutMs = mcpTimeoutOf(choice.timeout)
  const { loadMcpConfig, openMcpTools } = await import('@maka/mcp')
  const config = await loadMcpConfig({
    dataHome: choice.dataHome,
    ...(choice.cwd === null ? {} : { cwd: choice.cwd }),
    ...(choice.configFile === undefined ? {} : { extraFile: resolve(choice.configFile) }),
  })
  if (config._tag === 'Left') throw new BadInputError(config.left.message)
  const startTimeoutMs = mcpTimeoutOf(
    process.env['MAKA_MCP_START_TIMEOUT_MS'] || undefined,
    'MAKA_MCP_START_TIMEOUT_MS',
  )
  const opened = await openMcpTools(config.right, {
    cwd: choice.cwd ?? process.cwd(),
    ...(startTimeoutMs === undefined ? {} : { startTimeoutMs }),
    ...(callTimeoutMs === undefined ? {} : { callTimeoutMs }),
  })
  const down = opened.servers.flatMap((s) =>
    s.state === 'failed' ? [{ server: s.name, reason: s.reason ?? 'it did not start' }] : [],
  )
  if (choice.warn !== false) {
    for (const { server, reason } of down) {
      process.stderr.write(`maka: MCP server "${server}" did not start (${reason}); its tools are not available.\n`)
    }
  }
  return {
    tools: opened.tools,
    unavailableToolServers: down,
    servers: opened.servers,
    files: config.right.files,
    close: () => opened.close(),
  }
}

/**
 * The folder a session records (where its project `.mcp.json` is), or null when it cannot be read;
 * planning then reports what it reads, and the user's and `--mcp-config` files still apply.
 * @category constructors
 */
export const sessionCwdOf = async (stores: StorePorts, sessionId: string): Promise<string | null> => {
  const session = await stores.sessions.read(sessionId)()
  return session._tag === 'Right' && existsSync(session.right.cwd) ? session.right.cwd : null
}
