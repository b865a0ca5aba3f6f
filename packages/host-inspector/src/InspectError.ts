/**
 * Why the host could not observe a fact. Every failure is data with a `_tag` naming the operation
 * that failed and a human `message`; the planner maps any of them to `safety_observation_unavailable`,
 * because a fact we could not observe must never read as a safe one.
 */
import { errnoCode } from '@maka/stores'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * The session cwd is empty, relative or holds a NUL byte: resolving it would depend on our own cwd.
 * @category errors
 */
export interface InvalidCwd {
  readonly _tag: 'InvalidCwd'
  readonly path: string
  readonly message: string
}

/**
 * `realpath` or `stat` of the session cwd failed (`code` is the errno code, e.g. `ENOENT`).
 * @category errors
 */
export interface CwdUnavailable {
  readonly _tag: 'CwdUnavailable'
  readonly path: string
  readonly code: string
  readonly message: string
  readonly cause: unknown
}

/**
 * The session cwd resolves to something that is not a directory.
 * @category errors
 */
export interface NotADirectory {
  readonly _tag: 'NotADirectory'
  readonly path: string
  readonly canonicalPath: string
  readonly message: string
}

/**
 * The session id is not path-safe, so no store was asked about it.
 * @category errors
 */
export interface InvalidSessionId {
  readonly _tag: 'InvalidSessionId'
  readonly sessionId: string
  readonly message: string
}

/**
 * The session's shell runs could not be listed, or one of them could not be read.
 * @category errors
 */
export interface ShellRunsUnreadable {
  readonly _tag: 'ShellRunsUnreadable'
  readonly sessionId: string
  readonly shellRunId?: string
  readonly message: string
  readonly cause: unknown
}

/**
 * The session's runs could not be listed, or one run header could not be read.
 * @category errors
 */
export interface RunsUnreadable {
  readonly _tag: 'RunsUnreadable'
  readonly sessionId: string
  readonly runId?: string
  readonly message: string
  readonly cause: unknown
}

/**
 * The host's tool catalog could not be read.
 * @category errors
 */
export interface ToolCatalogUnavailable {
  readonly _tag: 'ToolCatalogUnavailable'
  readonly message: string
  readonly cause: unknown
}

/**
 * A checkpoint provider is configured but failed, or returned a malformed checkpoint.
 * @category errors
 */
export interface CheckpointUnavailable {
  readonly _tag: 'CheckpointUnavailable'
  readonly sessionId: string
  readonly runId?: string
  readonly message: string
  readonly cause: unknown
}

/**
 * Every way host inspection can fail.
 * @category errors
 */
export type InspectError =
  | InvalidCwd
  | CwdUnavailable
  | NotADirectory
  | InvalidSessionId
  | ShellRunsUnreadable
  | RunsUnreadable
  | ToolCatalogUnavailable
  | CheckpointUnavailable

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

// The cause's own text makes a message actionable ("EACCES: permission denied") without the caller digging.
const causeText = (cause: unknown): string => {
  if (cause instanceof Error) return cause.message
  if (typeof cause === 'string') return cause
  if (typeof cause === 'object' && cause !== null && 'message' in cause && typeof cause.message === 'string') {
    return cause.message
  }
  try {
    return JSON.stringify(cause) ?? String(cause)
  } catch {
    return String(cause)
  }
}

/**
 * Builds an {@link InvalidCwd}.
 * @category constructors
 */
export const invalidCwd = (path: string): InvalidCwd => ({
  _tag: 'InvalidCwd',
  path,
  message: `The session folder ${JSON.stringify(path)} is not an absolute path.`,
})

/**
 * Builds a {@link CwdUnavailable} from a failed fs call; the errno code is read off the cause.
 * @category constructors
 */
export const cwdUnavailable = (path: string, cause: unknown): CwdUnavailable => {
  const code = errnoCode(cause) ?? 'UNKNOWN'
  return {
    _tag: 'CwdUnavailable',
    path,
    code,
    cause,
    message:
      code === 'ENOENT'
        ? `The session folder ${path} does not exist.`
        : `The session folder ${path} cannot be read (${code}): ${causeText(cause)}`,
  }
}

/**
 * Builds a {@link NotADirectory}.
 * @category constructors
 */
export const notADirectory = (path: string, canonicalPath: string): NotADirectory => ({
  _tag: 'NotADirectory',
  path,
  canonicalPath,
  message: `The session folder ${path} resolves to ${canonicalPath}, which is not a directory.`,
})

/**
 * Builds an {@link InvalidSessionId}.
 * @category constructors
 */
export const invalidSessionId = (sessionId: string): InvalidSessionId => ({
  _tag: 'InvalidSessionId',
  sessionId,
  message: `The session id ${JSON.stringify(sessionId)} is not a valid id; nothing was read.`,
})

/**
 * Builds a {@link ShellRunsUnreadable}; `shellRunId` names the one record that failed, if known.
 * @category constructors
 */
export const shellRunsUnreadable = (sessionId: string, cause: unknown, shellRunId?: string): ShellRunsUnreadable => ({
  _tag: 'ShellRunsUnreadable',
  sessionId,
  ...(shellRunId === undefined ? {} : { shellRunId }),
  cause,
  message:
    shellRunId === undefined
      ? `The background shell runs of session ${sessionId} cannot be read: ${causeText(cause)}`
      : `The background shell run ${shellRunId} of session ${sessionId} cannot be read: ${causeText(cause)}`,
})

/**
 * Builds a {@link RunsUnreadable}; `runId` names the one header that failed, if known.
 * @category constructors
 */
export const runsUnreadable = (sessionId: string, cause: unknown, runId?: string): RunsUnreadable => ({
  _tag: 'RunsUnreadable',
  sessionId,
  ...(runId === undefined ? {} : { runId }),
  cause,
  message:
    runId === undefined
      ? `The runs of session ${sessionId} cannot be listed: ${causeText(cause)}`
      : `The header of run ${runId} in session ${sessionId} cannot be read: ${causeText(cause)}`,
})

/**
 * Builds a {@link ToolCatalogUnavailable}.
 * @category constructors
 */
export const toolCatalogUnavailable = (cause: unknown): ToolCatalogUnavailable => ({
  _tag: 'ToolCatalogUnavailable',
  cause,
  message: `The host's tool catalog cannot be read: ${causeText(cause)}`,
})

/**
 * Builds a {@link CheckpointUnavailable}.
 * @category constructors
 */
export const checkpointUnavailable = (sessionId: string, cause: unknown, runId?: string): CheckpointUnavailable => ({
  _tag: 'CheckpointUnavailable',
  sessionId,
  ...(runId === undefined ? {} : { runId }),
  cause,
  message: `The workspace checkpoint of session ${sessionId} cannot be read: ${causeText(cause)}`,
})

// -------------------------------------------------------------------------------------
// guards
// -------------------------------------------------------------------------------------

const INSPECT_ERROR_TAGS: ReadonlySet<string> = new Set<InspectError['_tag']>([
  'InvalidCwd',
  'CwdUnavailable',
  'NotADirectory',
  'InvalidSessionId',
  'ShellRunsUnreadable',
  'RunsUnreadable',
  'ToolCatalogUnavailable',
  'CheckpointUnavailable',
])

/**
 * True for a value shaped like an {@link InspectError} (a known `_tag` and a string `message`).
 * @category guards
 */
export const isInspectError = (u: unknown): u is InspectError =>
  typeof u === 'object' &&
  u !== null &&
  '_tag' in u &&
  typeof u._tag === 'string' &&
  INSPECT_ERROR_TAGS.has(u._tag) &&
  'message' in u &&
  typeof u.message === 'string'
