/**
 * Why a tool call did not do what it was asked. Tools never throw at the executor: a failure becomes
 * an error outcome whose result is one short sentence the model can act on, so a bad call costs one
 * turn and never leaves a committed `function_call` without its response. Stacks and raw `Error`
 * objects stay out of the ledger.
 */
import type { ToolOutcome } from './Tool.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * A tool failure, tagged by what went wrong; `message` is the sentence the model sees.
 * @category errors
 */
export type ToolFailure =
  | { readonly _tag: 'InvalidArguments'; readonly tool: string; readonly message: string }
  | { readonly _tag: 'OutsideWorkspace'; readonly path: string; readonly message: string }
  | { readonly _tag: 'WorkspaceUnavailable'; readonly cwd: string; readonly message: string }
  | {
      readonly _tag: 'FileSystemFailed'
      readonly operation: string
      readonly path: string
      readonly code: string
      readonly message: string
    }
  | { readonly _tag: 'SpawnFailed'; readonly code: string; readonly message: string }
  | { readonly _tag: 'ShellRunNotRecorded'; readonly message: string }
  | { readonly _tag: 'SupervisorFailed'; readonly message: string }
  | { readonly _tag: 'Cancelled'; readonly tool: string; readonly message: string }
  | { readonly _tag: 'Unexpected'; readonly tool: string; readonly message: string }

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

// Node error codes in words; anything else is shown by its code, which is still short and stable.
const FS_CODE_SENTENCES: Readonly<Record<string, string>> = {
  ENOENT: 'no such file or directory',
  EISDIR: 'it is a directory',
  ENOTDIR: 'a part of the path is not a directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ELOOP: 'too many levels of symbolic links',
  EEXIST: 'it already exists',
  ENOSPC: 'no space left on the device',
  EROFS: 'the file system is read-only',
  ENAMETOOLONG: 'the name is too long',
  NOT_REGULAR_FILE: 'it is not a regular file',
}

/**
 * The `code` of a Node system error, or `UNKNOWN` when the value carries none.
 * @category constructors
 */
export const errorCode = (cause: unknown): string =>
  typeof cause === 'object' && cause !== null && 'code' in cause && typeof cause.code === 'string'
    ? cause.code
    : 'UNKNOWN'

/**
 * A tool was called with arguments it cannot use.
 * @category constructors
 */
export const invalidArguments = (tool: string, message: string): ToolFailure => ({
  _tag: 'InvalidArguments',
  tool,
  message,
})

/**
 * A path resolves (after following symlinks) outside the session cwd.
 * @category constructors
 */
export const outsideWorkspace = (path: string): ToolFailure => ({
  _tag: 'OutsideWorkspace',
  path,
  message: `Refused: "${path}" is outside the workspace.`,
})

/**
 * The session cwd itself cannot be resolved, so nothing can be confined to it.
 * @category constructors
 */
export const workspaceUnavailable = (cwd: string, cause: unknown): ToolFailure => ({
  _tag: 'WorkspaceUnavailable',
  cwd,
  message: `The workspace "${cwd}" is not available: ${FS_CODE_SENTENCES[errorCode(cause)] ?? errorCode(cause)}.`,
})

/**
 * A file system operation failed; the message names the operation, the path and the reason.
 * @category constructors
 */
export const fileSystemFailed = (operation: string, path: string, cause: unknown): ToolFailure => {
  const code = errorCode(cause)
  return {
    _tag: 'FileSystemFailed',
    operation,
    path,
    code,
    message: `Could not ${operation} "${path}": ${FS_CODE_SENTENCES[code] ?? code}.`,
  }
}

/**
 * `/bin/sh` could not be started.
 * @category constructors
 */
export const spawnFailed = (cause: unknown): ToolFailure => ({
  _tag: 'SpawnFailed',
  code: errorCode(cause),
  message: `Could not start the shell: ${FS_CODE_SENTENCES[errorCode(cause)] ?? errorCode(cause)}.`,
})

/**
 * A shell run could not be recorded: a background command is not started, or stopped at once, because
 * a process nobody recorded is invisible to recovery and to the resume gates; a supervised foreground
 * command is never started (it starts only after its record is durable).
 * @category constructors
 */
export const shellRunNotRecorded = (
  reason: string,
  stage: 'not_started' | 'stopped',
  kind: 'background' | 'foreground' = 'background',
): ToolFailure => ({
  _tag: 'ShellRunNotRecorded',
  message: `The ${kind === 'background' ? 'background ' : ''}command was ${stage === 'stopped' ? 'stopped' : 'not started'} because it could not be recorded: ${reason}`,
})

/**
 * A supervised command's supervisor ended without a readable report of how the command ended.
 * @category constructors
 */
export const supervisorFailed = (reason: string): ToolFailure => ({
  _tag: 'SupervisorFailed',
  message: `The command's end is unknown: ${reason}`,
})

/**
 * The call was cancelled before the tool started anything.
 * @category constructors
 */
export const cancelled = (tool: string): ToolFailure => ({
  _tag: 'Cancelled',
  tool,
  message: `${tool} was cancelled before it started.`,
})

/**
 * A bug inside a tool, caught at its edge so the turn can still answer the call.
 * @category constructors
 */
export const unexpected = (tool: string, cause: unknown): ToolFailure => ({
  _tag: 'Unexpected',
  tool,
  message: `${tool} failed unexpectedly: ${cause instanceof Error ? cause.message : String(cause)}`,
})

/**
 * The outcome the model sees for a failure: the sentence, flagged as an error.
 * @category constructors
 */
export const failureOutcome = (failure: ToolFailure): ToolOutcome => ({ result: failure.message, isError: true })
