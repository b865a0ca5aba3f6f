/**
 * What a `shell` call returns, and the one way a foreground result is built from the bytes a
 * command printed — shared by the unsupervised run (bytes held in memory) and the supervised one
 * (bytes read back from its files, also after a crash), so both give the model the same result.
 */
import { StringDecoder } from 'node:string_decoder'
import type { ToolOutcome } from './Tool.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * How long a foreground command may run when the call gives no `timeoutMs`.
 * @category models
 */
export const SHELL_DEFAULT_TIMEOUT_MS = 60_000

/**
 * The largest `timeoutMs` a call may ask for.
 * @category models
 */
export const SHELL_MAX_TIMEOUT_MS = 3_600_000

/**
 * How many bytes of stdout, and separately of stderr, a foreground call returns at most.
 * @category models
 */
export const SHELL_OUTPUT_CAP_BYTES = 64 * 1024

/**
 * What a finished foreground command returns to the model.
 * @category models
 */
export interface ShellResult {
  readonly exitCode: number | null
  readonly signal: string | null
  readonly stdout: string
  readonly stderr: string
  readonly timedOut?: true
  readonly cancelled?: true
}

/**
 * What a started background command returns to the model.
 * @category models
 */
export interface BackgroundShellResult {
  readonly shellRunId: string
  readonly pid: number
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * The text of one pipe: the kept bytes (at most the cap) decoded as UTF-8, with a note when the
 * command printed more than was kept.
 * @category constructors
 */
export const outputText = (kept: Buffer, totalBytes: number): string => {
  const text = new StringDecoder('utf8').write(kept)
  return totalBytes > kept.length
    ? `${text}\n[truncated: showing the first ${kept.length} of ${totalBytes} bytes]`
    : text
}

/**
 * A foreground result in its fixed key order (the order is part of the response row's bytes).
 * @category constructors
 */
export const shellResult = (fields: {
  readonly exitCode: number | null
  readonly signal: string | null
  readonly stdout: string
  readonly stderr: string
  readonly timedOut: boolean
  readonly cancelled: boolean
}): ShellResult => ({
  exitCode: fields.exitCode,
  signal: fields.signal,
  stdout: fields.stdout,
  stderr: fields.stderr,
  ...(fields.timedOut ? { timedOut: true as const } : {}),
  ...(fields.cancelled ? { cancelled: true as const } : {}),
})

/**
 * The outcome of a foreground result: an error on a non-zero exit, a signal, a timeout or a cancellation.
 * @category constructors
 */
export const shellOutcomeOf = (result: ShellResult): ToolOutcome => ({
  result,
  isError: result.timedOut === true || result.cancelled === true || result.exitCode !== 0,
})
