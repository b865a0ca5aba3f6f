/**
 * Where a called tool came from, recorded on its `function_call` row: a call of an MCP tool carries
 * `actions.stateDelta.toolSource = {server, digest}` — the server's name and the digest of the tool's
 * declaration (name, input schema, annotations) when the call was made. The catalog gate compares it
 * with what the host declares now, so a tool that changed is never taken for the one that ran. A
 * row written before MCP tools existed, or a built-in tool's row, has none.
 */
import type { RuntimeEvent } from './RuntimeEvent.js'

/**
 * The source of a called tool: its server and its declaration digest (`sha256:<hex>`).
 * @category models
 */
export interface RecordedToolSource {
  readonly server: string
  readonly digest: string
}

/** The `stateDelta` key that carries it. */
export const TOOL_SOURCE_KEY = 'toolSource'

/**
 * The `stateDelta` of a call of a tool from `source`.
 * @category constructors
 */
export const toolSourceDelta = (source: RecordedToolSource): Readonly<Record<string, unknown>> => ({
  [TOOL_SOURCE_KEY]: { server: source.server, digest: source.digest },
})

/**
 * The source a row records, or null when it records none (or a malformed one).
 * @category constructors
 */
export const recordedToolSourceOf = (event: RuntimeEvent): RecordedToolSource | null => {
  const value: unknown = event.actions?.stateDelta?.[TOOL_SOURCE_KEY]
  if (typeof value !== 'object' || value === null) return null
  const server: unknown = 'server' in value ? value.server : undefined
  const digest: unknown = 'digest' in value ? value.digest : undefined
  return typeof server === 'string' && typeof digest === 'string' ? { server, digest } : null
}
