/**
 * MCP server configuration as users already write it for other agents: `{"mcpServers": {"name":
 * {"command", "args", "env"} | {"type": "http", "url", "headers"}}}`, with `${VAR}` (and
 * `${VAR:-default}`) expanded in `args`, `env` and `headers`. Parsing is pure and returns an
 * `Either`: a bad file is a typed error that names the file and the key, never a throw. Expanded
 * values live only in memory; nothing here formats them into a message.
 */
import * as E from 'fp-ts/lib/Either.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * The recovery modes an MCP tool can have. A server's annotations give one; a server entry may only
 * lower it (`replay_safe` > `idempotent` > `never_auto_retry`).
 * @category models
 */
export type McpRecoveryMode = 'replay_safe' | 'idempotent' | 'never_auto_retry'

/**
 * What every server entry has.
 * @category models
 */
export interface McpServerCommon {
  readonly name: string
  /** The file the entry came from. */
  readonly file: string
  /**
   * The entry's `recovery` key: tool name (as the server names it, or `*` for every tool) → the
   * mode it may at most have. It lowers a tool's mode, never raises it.
   */
  readonly recovery: Readonly<Record<string, McpRecoveryMode>>
  /**
   * Every value of `env` and `headers`, and every value a `${VAR}` put into `args`: what a tool
   * result or an error sentence must never carry (they are replaced by `[redacted]`).
   */
  readonly secretValues: ReadonlyArray<string>
}

/**
 * A server started as a child process that speaks MCP on its stdin and stdout.
 * @category models
 */
export interface McpStdioServer extends McpServerCommon {
  readonly transport: 'stdio'
  readonly command: string
  /** Expanded: may hold a secret. Never shown. */
  readonly args: ReadonlyArray<string>
  /** Expanded: may hold secrets. Never shown. */
  readonly env: Readonly<Record<string, string>>
  /** Where the server starts, relative to the session cwd; the session cwd when absent. */
  readonly cwd?: string
}

/**
 * A Streamable HTTP server on a loopback address.
 * @category models
 */
export interface McpHttpServer extends McpServerCommon {
  readonly transport: 'http'
  readonly url: string
  /** Expanded: may hold secrets. Never shown. */
  readonly headers: Readonly<Record<string, string>>
}

/**
 * One server entry.
 * @category models
 */
export type McpServerConfig = McpStdioServer | McpHttpServer

/**
 * The servers of every file read, a later file's entry replacing an earlier one of the same name.
 * @category models
 */
export interface McpConfig {
  readonly servers: ReadonlyArray<McpServerConfig>
  /** The files that were read, in the order they were read. */
  readonly files: ReadonlyArray<string>
}

// -------------------------------------------------------------------------------------
// errors
// -------------------------------------------------------------------------------------

/**
 * Why a config file was refused, by stable code, with the sentence a person reads.
 * @category errors
 */
export const McpConfigErrorSentences = {
  /** The file could not be read (a `--mcp-config` file that does not exist included). */
  mcp_config_unreadable: 'cannot be read',
  /** The file is not JSON. */
  mcp_config_not_json: 'is not JSON',
  /** A key has a value of the wrong shape. */
  mcp_config_invalid: 'has an invalid value',
  /** A `${VAR}` names a variable that is not set and has no default. */
  mcp_config_variable_unset: 'names an environment variable that is not set',
} as const

/**
 * A stable config error code.
 * @category errors
 */
export type McpConfigErrorCode = keyof typeof McpConfigErrorSentences

/**
 * A refused config file: the code, the file, the key (a path such as `mcpServers.fs.args[1]`) and
 * one sentence. It never holds a value read from the file or the environment.
 * @category errors
 */
export interface McpConfigError {
  readonly _tag: 'McpConfigError'
  readonly code: McpConfigErrorCode
  readonly file: string
  /** Empty for an error of the whole file. */
  readonly key: string
  readonly message: string
}

/**
 * Builds an error; `detail` says what the key must be (it never quotes a value).
 * @category constructors
 */
export const mcpConfigError = (
  code: McpConfigErrorCode,
  file: string,
  key: string,
  detail: string,
): McpConfigError => ({
  _tag: 'McpConfigError',
  code,
  file,
  key,
  message: `MCP config ${file}${key === '' ? '' : ` key ${key}`} ${McpConfigErrorSentences[code]}: ${detail}`,
})

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * A server's name: anything a person would type, without spaces or control characters. In a tool
 * name (`mcp__<server>__<tool>`) every character but letters, digits, `_` and `-` becomes `_`.
 */
const isServerName = (name: string): boolean =>
  name.length >= 1 &&
  name.length <= 64 &&
  ![...name].some((c) => /\s/.test(c) || c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)

const MODES: ReadonlyArray<McpRecoveryMode> = ['replay_safe', 'idempotent', 'never_auto_retry']
const COMMON_KEYS = ['type', 'recovery', 'description', 'disabled']
const STDIO_KEYS = [...COMMON_KEYS, 'command', 'args', 'env', 'cwd']
const HTTP_KEYS = [...COMMON_KEYS, 'url', 'headers']

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === 'object' && u !== null && !Array.isArray(u)

const keyOf = (parent: string, name: string): string =>
  /^[A-Za-z0-9_-]+$/.test(name) ? `${parent}.${name}` : `${parent}[${JSON.stringify(name)}]`

const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g

/**
 * Expands `${VAR}` and `${VAR:-default}` in one value; Left with the variable's name when it is unset
 * and has no default.
 * @category constructors
 */
export const expandVariables = (
  value: string,
  env: Readonly<Record<string, string | undefined>>,
): E.Either<string, string> => {
  let missing: string | null = null
  const expanded = value.replace(VARIABLE, (_whole, name: string, fallback: string | undefined) => {
    const found = env[name]
    if (found !== undefined && found !== '') return found
    if (fallback !== undefined) return fallback
    if (found !== undefined) return found
    missing ??= name
    return ''
  })
  return missing === null ? E.right(expanded) : E.left(missing)
}

// The values the `${VAR}`s of one string stand for.
const variableValues = (value: string, env: Readonly<Record<string, string | undefined>>): ReadonlyArray<string> =>
  [...value.matchAll(VARIABLE)].flatMap((m) => {
    const found = m[1] === undefined ? undefined : env[m[1]]
    return found === undefined || found === '' ? [] : [found]
  })

type Parsed<A> = E.Either<McpConfigError, A>

const expandedString = (
  file: string,
  key: string,
  raw: unknown,
  env: Readonly<Record<string, string | undefined>>,
): Parsed<string> => {
  if (typeof raw !== 'string') return E.left(mcpConfigError('mcp_config_invalid', file, key, 'a string'))
  return E.mapLeft((name: string) => mcpConfigError('mcp_config_variable_unset', file, key, `\${${name}}`))(
    expandVariables(raw, env),
  )
}

const stringMap = (
  file: string,
  key: string,
  raw: unknown,
  env: Readonly<Record<string, string | undefined>>,
): Parsed<Readonly<Record<string, string>>> => {
  if (raw === undefined) return E.right({})
  if (!isRecord(raw)) return E.left(mcpConfigError('mcp_config_invalid', file, key, 'an object of strings'))
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(raw)) {
    const expanded = expandedString(file, keyOf(key, name), value, env)
    if (E.isLeft(expanded)) return expanded
    Object.defineProperty(out, name, { value: expanded.right, enumerable: true, writable: true, configurable: true })
  }
  return E.right(out)
}

const recoveryOf = (file: string, key: string, raw: unknown): Parsed<Readonly<Record<string, McpRecoveryMode>>> => {
  if (raw === undefined) return E.right({})
  if (!isRecord(raw)) return E.left(mcpConfigError('mcp_config_invalid', file, key, 'an object of tool name → mode'))
  const out: Record<string, McpRecoveryMode> = {}
  for (const [tool, mode] of Object.entries(raw)) {
    if (typeof mode !== 'string' || !(MODES as ReadonlyArray<string>).includes(mode)) {
      return E.left(mcpConfigError('mcp_config_invalid', file, keyOf(key, tool), `one of ${MODES.join(', ')}`))
    }
    Object.defineProperty(out, tool, { value: mode, enumerable: true, writable: true, configurable: true })
  }
  return E.right(out)
}

const unknownKey = (file: string, key: string, entry: Record<string, unknown>, allowed: ReadonlyArray<string>) => {
  const extra = Object.keys(entry).find((k) => !allowed.includes(k))
  return extra === undefined
    ? null
    : mcpConfigError(
        'mcp_config_invalid',
        file,
        keyOf(key, extra),
        `not a key of this kind of server (${allowed.join(', ')})`,
      )
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1'])

/**
 * True for an http(s) URL whose host is a loopback address.
 * @category guards
 */
export const isLoopbackUrl = (raw: string): boolean => {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return false
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false
  return LOOPBACK.has(url.hostname) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(url.hostname)
}

const serverOf = (
  file: string,
  name: string,
  raw: unknown,
  env: Readonly<Record<string, string | undefined>>,
): Parsed<McpServerConfig | null> => {
  const key = keyOf('mcpServers', name)
  if (!isServerName(name)) {
    return E.left(
      mcpConfigError('mcp_config_invalid', file, key, 'a server name without spaces, at most 64 characters'),
    )
  }
  if (!isRecord(raw)) return E.left(mcpConfigError('mcp_config_invalid', file, key, 'an object'))
  if (raw['disabled'] !== undefined && typeof raw['disabled'] !== 'boolean') {
    return E.left(mcpConfigError('mcp_config_invalid', file, `${key}.disabled`, 'true or false'))
  }
  if (raw['description'] !== undefined && typeof raw['description'] !== 'string') {
    return E.left(mcpConfigError('mcp_config_invalid', file, `${key}.description`, 'a string'))
  }
  const type = raw['type'] ?? (raw['url'] !== undefined ? 'http' : 'stdio')
  const recovery = recoveryOf(file, `${key}.recovery`, raw['recovery'])
  if (E.isLeft(recovery)) return recovery
  if (type === 'stdio') {
    const extra = unknownKey(file, key, raw, STDIO_KEYS)
    if (extra !== null) return E.left(extra)
    const command = raw['command']
    if (typeof command !== 'string' || command.trim() === '') {
      return E.left(mcpConfigError('mcp_config_invalid', file, `${key}.command`, 'a non-empty string'))
    }
    const rawArgs = raw['args'] ?? []
    if (!Array.isArray(rawArgs))
      return E.left(mcpConfigError('mcp_config_invalid', file, `${key}.args`, 'an array of strings'))
    const args: Array<string> = []
    const substituted: Array<string> = []
    for (const [index, arg] of rawArgs.entries()) {
      const expanded = expandedString(file, `${key}.args[${index}]`, arg, env)
      if (E.isLeft(expanded)) return expanded
      args.push(expanded.right)
      if (typeof arg === 'string') substituted.push(...variableValues(arg, env))
    }
    const serverEnv = stringMap(file, `${key}.env`, raw['env'], env)
    if (E.isLeft(serverEnv)) return serverEnv
    if (raw['cwd'] !== undefined && typeof raw['cwd'] !== 'string') {
      return E.left(mcpConfigError('mcp_config_invalid', file, `${key}.cwd`, 'a string'))
    }
    if (raw['disabled'] === true) return E.right(null)
    const cwd = raw['cwd']
    return E.right({
      transport: 'stdio',
      name,
      file,
      recovery: recovery.right,
      command,
      args,
      env: serverEnv.right,
      secretValues: [...Object.values(serverEnv.right), ...substituted],
      ...(typeof cwd === 'string' ? { cwd } : {}),
    })
  }
  if (type === 'http' || type === 'streamable-http') {
    const extra = unknownKey(file, key, raw, HTTP_KEYS)
    if (extra !== null) return E.left(extra)
    const url = raw['url']
    if (typeof url !== 'string' || !isLoopbackUrl(url)) {
      return E.left(
        mcpConfigError(
          'mcp_config_invalid',
          file,
          `${key}.url`,
          'an http:// URL on a loopback address (127.0.0.1, ::1, localhost)',
        ),
      )
    }
    const headers = stringMap(file, `${key}.headers`, raw['headers'], env)
    if (E.isLeft(headers)) return headers
    if (raw['disabled'] === true) return E.right(null)
    return E.right({
      transport: 'http',
      name,
      file,
      recovery: recovery.right,
      url,
      headers: headers.right,
      secretValues: Object.values(headers.right),
    })
  }
  return E.left(mcpConfigError('mcp_config_invalid', file, `${key}.type`, '"stdio" or "http"'))
}

/**
 * Parses one file's text. `env` is what `${VAR}` reads. A file without `mcpServers` is refused: it
 * is not an MCP config.
 * @category constructors
 */
export const parseMcpConfigFile = (
  file: string,
  text: string,
  env: Readonly<Record<string, string | undefined>>,
): E.Either<McpConfigError, ReadonlyArray<McpServerConfig>> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return E.left(mcpConfigError('mcp_config_not_json', file, '', 'write it as a JSON object'))
  }
  if (!isRecord(json)) return E.left(mcpConfigError('mcp_config_invalid', file, '', 'a JSON object with "mcpServers"'))
  const servers = json['mcpServers']
  if (!isRecord(servers))
    return E.left(mcpConfigError('mcp_config_invalid', file, 'mcpServers', 'an object of server entries'))
  const out: Array<McpServerConfig> = []
  for (const [name, entry] of Object.entries(servers)) {
    const parsed = serverOf(file, name, entry, env)
    if (E.isLeft(parsed)) return parsed
    if (parsed.right !== null) out.push(parsed.right)
  }
  return E.right(out)
}

/**
 * Merges the servers of several files, read in order: a later entry of the same name replaces the
 * earlier one (user file, then the project's, then `--mcp-config`). Sorted by name.
 * @category combinators
 */
export const mergeMcpConfigs = (
  files: ReadonlyArray<{ readonly file: string; readonly servers: ReadonlyArray<McpServerConfig> }>,
): McpConfig => {
  const byName = new Map<string, McpServerConfig>()
  for (const { servers } of files) for (const server of servers) byName.set(server.name, server)
  return {
    servers: [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    files: files.map(({ file }) => file),
  }
}
