/**
 * Connects the configured MCP servers through the official SDK and turns each server tool into a
 * `Tool` of the tool port, named `mcp__<server>__<tool>`. Stdio servers are started here and stopped
 * by `close()`; their stderr is drained into nothing (a server's stderr may echo its environment, so
 * it never reaches the user's terminal, a log or the data dir). A server that does not start is a
 * status with a reason, and its tools are absent. A call never rejects: a server that dies, hangs
 * past the time limit, answers with a protocol error or writes garbage on its stdout gives an error
 * outcome with one sentence and no stack, so the turn goes on. An aborted call sends MCP
 * cancellation (the SDK does, for a request given an `AbortSignal`).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js'
import { resolve } from 'node:path'
import { argsDigest } from '@maka/events'
import type { Tool, ToolContext, ToolOutcome } from '@maka/tools'
import type { McpConfig, McpRecoveryMode, McpServerConfig } from './McpConfig.js'
import { mcpResultText } from './mcpResultText.js'
import { type RecoveryHints, recoveryFromAnnotations } from './recoveryFromAnnotations.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/** How long one tool call may take when the host sets no limit (`--timeout`). */
export const MCP_CALL_TIMEOUT_MS = 60_000
/** How long a server may take to start and list its tools when the host sets no limit. */
export const MCP_START_TIMEOUT_MS = 60_000
/** The `_meta` key that carries an `idempotent` call's idempotency key. */
export const IDEMPOTENCY_META_KEY = 'maka/idempotencyKey'

/**
 * One tool of a connected server, as the catalog holds it.
 * @category models
 */
export interface McpToolEntry {
  /** `mcp__<server>__<tool>`. */
  readonly toolName: string
  /** The name the server gave it. */
  readonly serverToolName: string
  readonly recoveryMode: McpRecoveryMode
  readonly mutates: boolean
  /** Why it has that mode, in words. */
  readonly why: string
  /** `sha256:<hex>` of its name, input schema and annotations. */
  readonly digest: string
}

/**
 * What became of one configured server.
 * @category models
 */
export interface McpServerStatus {
  readonly name: string
  readonly transport: 'stdio' | 'http'
  /** The config file its entry came from. */
  readonly file: string
  readonly state: 'connected' | 'failed'
  /** Why it failed: one sentence that holds no value of its entry. */
  readonly reason?: string
  readonly tools: ReadonlyArray<McpToolEntry>
  /** Tools left out, with why (a name no model can call, a clash). */
  readonly skippedTools: ReadonlyArray<{ readonly name: string; readonly reason: string }>
}

/**
 * The connected servers and their tools; `close()` stops every stdio server and closes every
 * connection (call it when the command ends).
 * @category models
 */
export interface McpTools {
  readonly tools: ReadonlyArray<Tool>
  readonly servers: ReadonlyArray<McpServerStatus>
  close(): Promise<void>
}

/**
 * How servers are opened.
 * @category models
 */
export interface McpOpenOptions {
  /** The session cwd: stdio servers start there (or in their entry's `cwd`, relative to it). */
  readonly cwd: string
  /** One call's time limit; {@link MCP_CALL_TIMEOUT_MS} when absent. */
  readonly callTimeoutMs?: number
  /** Start and tool listing's time limit; {@link MCP_START_TIMEOUT_MS} when absent. */
  readonly startTimeoutMs?: number
  /** The environment stdio servers inherit beneath their entry's `env`; the SDK's safe default set when absent. */
  readonly baseEnv?: Readonly<Record<string, string>>
  readonly clientVersion?: string
}

// -------------------------------------------------------------------------------------
// internals
// -------------------------------------------------------------------------------------

const MAX_TOOL_NAME = 64
// What a provider accepts in a tool name: the rest becomes `_` (the call still uses the server's name).
const toolNamePart = (name: string): string => name.replace(/[^A-Za-z0-9_-]/g, '_')
const MESSAGE_LIMIT = 300

// Shorter values are left alone: redacting "1" or "on" would garble every result.
const SECRET_MIN_LENGTH = 4

/** Replaces every secret value of the entry in `text`. */
const redactor = (server: McpServerConfig): ((text: string) => string) => {
  const secrets = [...new Set(server.secretValues.filter((v) => v.length >= SECRET_MIN_LENGTH))].sort(
    (a, b) => b.length - a.length,
  )
  return secrets.length === 0
    ? (text) => text
    : (text) => secrets.reduce((t, secret) => t.split(secret).join('[redacted]'), text)
}

const cut = (text: string): string => (text.length > MESSAGE_LIMIT ? `${text.slice(0, MESSAGE_LIMIT)}…` : text)

const codeOf = (cause: unknown): string | undefined =>
  typeof cause === 'object' && cause !== null && 'code' in cause && typeof cause.code === 'string'
    ? cause.code
    : undefined

// A line on stdout that is not JSON, or JSON that is not JSON-RPC.
const isGarbage = (error: unknown): boolean =>
  error instanceof SyntaxError || (error instanceof Error && error.name === 'ZodError')

interface Connection {
  readonly client: Client
  /** Set once the connection can no longer serve calls, with why. */
  broken: string | null
}

const startFailure = (cause: unknown, timeoutMs: number, server: McpServerConfig): string => {
  if (cause instanceof McpError && cause.code === Number(ErrorCode.RequestTimeout)) {
    return `it did not answer within ${timeoutMs} ms`
  }
  if (cause instanceof McpError && cause.code === Number(ErrorCode.ConnectionClosed)) {
    return 'it closed the connection before it listed its tools'
  }
  const code = codeOf(cause)
  if (server.transport === 'stdio' && code !== undefined) return `its command could not be started (${code})`
  if (server.transport === 'http') {
    const nested = cause instanceof Error ? codeOf(cause.cause) : undefined
    return `its URL did not answer as an MCP server (${nested ?? code ?? (cause instanceof Error ? cut(cause.message) : 'unknown')})`
  }
  return `it did not start as an MCP server (${cause instanceof Error ? cut(cause.message) : 'unknown'})`
}

const callFailure = (
  server: string,
  cause: unknown,
  timeoutMs: number,
  connection: Connection,
  signal?: AbortSignal,
): string => {
  if (signal?.aborted === true) return `The call to MCP server "${server}" was cancelled.`
  // A line of garbage closes the connection, so its rejection reads as a closed connection: say why.
  if (isBrokenByGarbage(connection))
    return `The MCP server "${server}" ${connection.broken ?? ''}; the call has no result.`
  if (cause instanceof McpError) {
    switch (cause.code) {
      case Number(ErrorCode.RequestTimeout):
        return `The MCP server "${server}" did not answer within ${timeoutMs} ms; the call was cancelled.`
      case Number(ErrorCode.ConnectionClosed):
        return `The MCP server "${server}" stopped during the call; the call has no result.`
      default:
        return `The MCP server "${server}" answered with an error: ${cut(cause.message)}`
    }
  }
  return `The MCP server "${server}" gave an answer that is not a valid tool result.`
}

const transportOf = (server: McpServerConfig, options: McpOpenOptions) => {
  if (server.transport === 'http') {
    return new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { ...server.headers } } })
  }
  return new StdioClientTransport({
    command: server.command,
    args: [...server.args],
    env: { ...(options.baseEnv ?? {}), ...server.env },
    cwd: server.cwd === undefined ? options.cwd : resolve(options.cwd, server.cwd),
    stderr: 'pipe',
  })
}

interface ListedTool {
  readonly name: string
  readonly title?: string
  readonly description?: string
  readonly inputSchema: Record<string, unknown>
  readonly annotations?: Record<string, unknown>
}

const listAll = async (client: Client, timeoutMs: number): Promise<ReadonlyArray<ListedTool>> => {
  const tools: Array<ListedTool> = []
  let cursor: string | undefined
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: timeoutMs })
    tools.push(...(page.tools as ReadonlyArray<ListedTool>))
    cursor = page.nextCursor
  } while (cursor !== undefined)
  return tools
}

const hintsOf = (annotations: Record<string, unknown> | undefined): RecoveryHints | undefined => {
  if (annotations === undefined) return undefined
  const flag = (key: string) => (typeof annotations[key] === 'boolean' ? { [key]: annotations[key] } : {})
  return { ...flag('readOnlyHint'), ...flag('idempotentHint'), ...flag('destructiveHint') }
}

const argsObject = (args: unknown): Record<string, unknown> | null =>
  args === undefined || args === null
    ? {}
    : typeof args === 'object' && !Array.isArray(args)
      ? (args as Record<string, unknown>)
      : null

const toolOf = (
  server: McpServerConfig,
  listed: ListedTool,
  entry: McpToolEntry,
  connection: Connection,
  callTimeoutMs: number,
  redact: (text: string) => string,
): Tool => ({
  name: entry.toolName,
  description: listed.description ?? listed.title ?? `${listed.name} (MCP server ${server.name})`,
  parameters: listed.inputSchema,
  mutates: entry.mutates,
  recovery: entry.recoveryMode,
  source: { server: server.name, digest: entry.digest },
  describeCall: () => `${listed.name} on MCP server "${server.name}"`,
  run: async (args: unknown, context: ToolContext): Promise<ToolOutcome> => {
    const params = argsObject(args)
    if (params === null) return { result: `${entry.toolName}: the arguments must be a JSON object.`, isError: true }
    if (connection.broken !== null) {
      return { result: `The MCP server "${server.name}" ${connection.broken}; the tool did not run.`, isError: true }
    }
    if (context.signal?.aborted === true)
      return { result: `${entry.toolName} was cancelled before it started.`, isError: true }
    const key = entry.recoveryMode === 'idempotent' ? context.idempotencyKey : undefined
    try {
      const result = await connection.client.callTool(
        {
          name: listed.name,
          arguments: params,
          ...(key === undefined ? {} : { _meta: { [IDEMPOTENCY_META_KEY]: key } }),
        },
        undefined,
        { timeout: callTimeoutMs, ...(context.signal === undefined ? {} : { signal: context.signal }) },
      )
      // A server on the protocol's first version may answer `{toolResult}` instead of content.
      const answer: { content?: unknown; structuredContent?: unknown; isError?: unknown; toolResult?: unknown } = result
      const text =
        answer.content === undefined && answer.toolResult !== undefined
          ? JSON.stringify(answer.toolResult)
          : mcpResultText(answer)
      return { result: redact(text), isError: answer.isError === true }
    } catch (cause) {
      return {
        result: redact(callFailure(server.name, cause, callTimeoutMs, connection, context.signal)),
        isError: true,
      }
    }
  },
})

type Opened = {
  readonly status: McpServerStatus
  readonly tools: ReadonlyArray<Tool>
  readonly close: () => Promise<void>
}

const openOne = async (server: McpServerConfig, options: McpOpenOptions): Promise<Opened> => {
  const startTimeoutMs = options.startTimeoutMs ?? MCP_START_TIMEOUT_MS
  const callTimeoutMs = options.callTimeoutMs ?? MCP_CALL_TIMEOUT_MS
  const base = { name: server.name, transport: server.transport, file: server.file } as const
  const client = new Client({ name: 'maka', version: options.clientVersion ?? '0.1.0' })
  const connection: Connection = { client, broken: null }
  const transport = transportOf(server, options)
  // Drained, never shown: a server's stderr may echo its environment.
  if (transport instanceof StdioClientTransport) transport.stderr?.on('data', () => undefined)
  client.onerror = (error) => {
    if (connection.broken === null && isGarbage(error)) {
      connection.broken = 'wrote something that is not MCP on its stdout, so its connection was closed'
      void client.close().catch(() => undefined)
    }
  }
  client.onclose = () => {
    connection.broken ??= 'is not running any more'
  }
  const close = () => client.close().catch(() => undefined)
  const redact = redactor(server)
  try {
    await client.connect(transport, { timeout: startTimeoutMs })
    const listed = await listAll(client, startTimeoutMs)
    const entries: Array<McpToolEntry> = []
    const tools: Array<Tool> = []
    const skipped: Array<{ name: string; reason: string }> = []
    const seen = new Set<string>()
    for (const tool of listed) {
      const toolName = `mcp__${toolNamePart(server.name)}__${toolNamePart(tool.name)}`
      if (tool.name === '' || toolName.length > MAX_TOOL_NAME) {
        skipped.push({
          name: tool.name,
          reason: `mcp__<server>__<tool> would be longer than ${MAX_TOOL_NAME} characters`,
        })
        continue
      }
      if (seen.has(toolName)) {
        skipped.push({ name: tool.name, reason: `another tool of the server is named ${toolName} too` })
        continue
      }
      seen.add(toolName)
      const recovery = recoveryFromAnnotations(tool.name, hintsOf(tool.annotations), server.recovery)
      const entry: McpToolEntry = {
        toolName,
        serverToolName: tool.name,
        recoveryMode: recovery.mode,
        mutates: recovery.mutates,
        why: recovery.why,
        digest: argsDigest({ name: tool.name, inputSchema: tool.inputSchema, annotations: tool.annotations ?? null }),
      }
      entries.push(entry)
      tools.push(toolOf(server, tool, entry, connection, callTimeoutMs, redact))
    }
    return { status: { ...base, state: 'connected', tools: entries, skippedTools: skipped }, tools, close }
  } catch (cause) {
    await close()
    const reason = redact(
      isBrokenByGarbage(connection)
        ? 'its stdout held something that is not MCP'
        : startFailure(cause, startTimeoutMs, server),
    )
    return {
      status: { ...base, state: 'failed', reason, tools: [], skippedTools: [] },
      tools: [],
      close: () => Promise.resolve(),
    }
  }
}

const isBrokenByGarbage = (connection: Connection): boolean => connection.broken?.startsWith('wrote') === true

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Opens every server of the config at once and waits for each to be connected or failed.
 * @category constructors
 */
export const openMcpTools = async (config: McpConfig, options: McpOpenOptions): Promise<McpTools> => {
  const opened = await Promise.all(config.servers.map((server) => openOne(server, options)))
  let closing: Promise<void> | null = null
  return {
    tools: opened.flatMap((o) => o.tools),
    servers: opened.map((o) => o.status),
    close: () => (closing ??= Promise.all(opened.map((o) => o.close())).then(() => undefined)),
  }
}
