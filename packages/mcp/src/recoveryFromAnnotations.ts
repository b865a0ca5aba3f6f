/**
 * An MCP tool's recovery mode, from what its server promises in its annotations: `readOnlyHint`
 * means running it again changes nothing (`replay_safe`); `idempotentHint` means a repeat with the
 * same arguments has no further effect (`idempotent`, and the operation's key travels in `_meta`);
 * anything else cannot be judged after a crash (`never_auto_retry`). A server entry's `recovery` may
 * lower that, never raise it: a person can distrust a server, but cannot make one safer than it says.
 */
import type { McpRecoveryMode } from './McpConfig.js'

/**
 * The annotations that decide a mode (MCP `ToolAnnotations`; other keys are ignored).
 * @category models
 */
export interface RecoveryHints {
  readonly readOnlyHint?: boolean
  readonly idempotentHint?: boolean
  readonly destructiveHint?: boolean
}

/**
 * A tool's mode and why, in words `maka mcp list` prints.
 * @category models
 */
export interface McpRecovery {
  readonly mode: McpRecoveryMode
  /** True unless the server says the tool only reads: a call then needs permission under `ask`/`deny`. */
  readonly mutates: boolean
  readonly why: string
}

const RANK: Readonly<Record<McpRecoveryMode, number>> = { never_auto_retry: 0, idempotent: 1, replay_safe: 2 }

/**
 * The mode of a tool with these annotations under a server entry's `recovery` (tool name, or `*`).
 * @category constructors
 */
export const recoveryFromAnnotations = (
  toolName: string,
  hints: RecoveryHints | undefined,
  entry: Readonly<Record<string, McpRecoveryMode>>,
): McpRecovery => {
  const readOnly = hints?.readOnlyHint === true
  const declared: McpRecoveryMode = readOnly
    ? 'replay_safe'
    : hints?.idempotentHint === true
      ? 'idempotent'
      : 'never_auto_retry'
  const because = readOnly
    ? 'readOnlyHint: true'
    : hints?.idempotentHint === true
      ? 'idempotentHint: true'
      : hints === undefined
        ? 'no annotations'
        : 'neither readOnlyHint nor idempotentHint'
  const own = Object.hasOwn(entry, toolName) ? entry[toolName] : undefined
  const asked = own ?? (Object.hasOwn(entry, '*') ? entry['*'] : undefined)
  const key = own !== undefined ? toolName : '*'
  if (asked === undefined || asked === declared) return { mode: declared, mutates: !readOnly, why: because }
  if (RANK[asked] < RANK[declared]) {
    return { mode: asked, mutates: !readOnly, why: `${because}, lowered by the server entry's recovery.${key}` }
  }
  return {
    mode: declared,
    mutates: !readOnly,
    why: `${because}; the server entry's recovery.${key} (${asked}) would raise it and is ignored`,
  }
}
