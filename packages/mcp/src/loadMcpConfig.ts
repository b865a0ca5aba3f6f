/**
 * Reads the MCP config files a command sees: the user's `mcp.json` in the data home, the project's
 * `.mcp.json` in the session cwd, then a `--mcp-config FILE`. A user or project file that does not
 * exist is no config; a named file that does not exist is an error, as is any file that exists and
 * is bad. The first bad file stops the read: the person fixes one file at a time.
 */
import { readFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import {
  type McpConfig,
  type McpConfigError,
  type McpServerConfig,
  mcpConfigError,
  mergeMcpConfigs,
  parseMcpConfigFile,
} from './McpConfig.js'

/**
 * Where to look.
 * @category models
 */
export interface McpConfigSources {
  /** The data home (`~/.maka` or `--data-dir`): its `mcp.json` is the user's file. */
  readonly dataHome?: string
  /** The session cwd: its `.mcp.json` is the project's file. */
  readonly cwd?: string
  /** `--mcp-config FILE`, resolved against the process cwd. */
  readonly extraFile?: string
  /** What `${VAR}` reads; `process.env` when absent. */
  readonly env?: Readonly<Record<string, string | undefined>>
}

/** The user's file in the data home. */
export const USER_MCP_CONFIG = 'mcp.json'
/** The project's file in the session cwd. */
export const PROJECT_MCP_CONFIG = '.mcp.json'

const readOne = async (
  file: string,
  required: boolean,
  env: Readonly<Record<string, string | undefined>>,
): Promise<E.Either<McpConfigError, ReadonlyArray<McpServerConfig> | null>> => {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (cause) {
    const code = typeof cause === 'object' && cause !== null && 'code' in cause ? String(cause.code) : 'UNKNOWN'
    if (code === 'ENOENT' && !required) return E.right(null)
    return E.left(mcpConfigError('mcp_config_unreadable', file, '', code === 'ENOENT' ? 'no such file' : code))
  }
  return parseMcpConfigFile(file, text, env)
}

/**
 * Reads and merges every file that applies.
 * @category constructors
 */
export const loadMcpConfig = async (sources: McpConfigSources): Promise<E.Either<McpConfigError, McpConfig>> => {
  const env = sources.env ?? process.env
  const wanted: Array<{ readonly file: string; readonly required: boolean }> = []
  if (sources.dataHome !== undefined) wanted.push({ file: join(sources.dataHome, USER_MCP_CONFIG), required: false })
  if (sources.cwd !== undefined) wanted.push({ file: join(sources.cwd, PROJECT_MCP_CONFIG), required: false })
  if (sources.extraFile !== undefined) wanted.push({ file: resolve(sources.extraFile), required: true })
  const read: Array<{ readonly file: string; readonly servers: ReadonlyArray<McpServerConfig> }> = []
  for (const { file, required } of wanted) {
    // The same file named twice (cwd = data home, or --mcp-config naming the project file) is read once.
    if (read.some((r) => r.file === file)) continue
    const servers = await readOne(file, required, env)
    if (E.isLeft(servers)) return servers
    if (servers.right !== null) read.push({ file, servers: servers.right })
  }
  return E.right(mergeMcpConfigs(read))
}
