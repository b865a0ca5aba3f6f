/**
 * The files of a supervised shell run, `<data dir>/sessions/<sessionId>/shell-runs/<shellRunId>/`:
 * `stdout` and `stderr` (at most `SHELL_OUTPUT_CAP_BYTES` each) and `exit`, written last and
 * atomically by the supervisor once both are closed. The tool builds its result from them, and so
 * does the executor after a crash (a `settle_reattached` response): the same bytes give the same result.
 */
import { constants } from 'node:fs'
import { open } from 'node:fs/promises'
import { join } from 'node:path'
import { decodeWith, isSafeId, ShellRunExit, type ShellRunStatus } from '@maka/events'
import * as E from 'fp-ts/lib/Either.js'
import type * as TE from 'fp-ts/lib/TaskEither.js'
import { outputText, SHELL_OUTPUT_CAP_BYTES, shellResult, type ShellResult } from './ShellResult.js'
import { errorCode } from './ToolFailure.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * One of a supervised run's files.
 * @category models
 */
export type ShellRunFile = 'exit' | 'stdout' | 'stderr'

/**
 * A supervised run's files cannot give a result: missing, unreadable, malformed or inconsistent.
 * `message` is one sentence without the path.
 * @category errors
 */
export interface ShellFilesError {
  readonly _tag: 'ShellFilesUnreadable'
  readonly file: ShellRunFile
  readonly message: string
}

// `exit` is a few dozen bytes; anything near this is not one.
const EXIT_MAX_BYTES = 4096

// -------------------------------------------------------------------------------------
// internals
// -------------------------------------------------------------------------------------

const decodeExit = decodeWith(ShellRunExit)

const unreadableFile = (file: ShellRunFile, reason: string): ShellFilesError => ({
  _tag: 'ShellFilesUnreadable',
  file,
  message: `The shell run's ${file} file cannot be used: ${reason}.`,
})

// Reads at most `limit + 1` bytes of a regular file, without following a link; `null` when absent.
const readRegular = async (path: string, limit: number): Promise<E.Either<string, Buffer | null>> => {
  let handle
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  } catch (cause) {
    const code = errorCode(cause)
    return code === 'ENOENT' ? E.right(null) : E.left(code === 'ELOOP' ? 'it is a symbolic link' : code)
  }
  try {
    if (!(await handle.stat()).isFile()) return E.left('it is not a regular file')
    const buffer = Buffer.alloc(limit + 1)
    let length = 0
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null)
      if (bytesRead === 0) break
      length += bytesRead
      if (length === buffer.length) break
    }
    return E.right(buffer.subarray(0, length))
  } catch (cause) {
    return E.left(errorCode(cause))
  } finally {
    await handle.close()
  }
}

const readOutput = async (
  dir: string,
  file: 'stdout' | 'stderr',
  total: number,
): Promise<E.Either<ShellFilesError, string>> => {
  const read = await readRegular(join(dir, file), SHELL_OUTPUT_CAP_BYTES)
  if (E.isLeft(read)) return E.left(unreadableFile(file, read.left))
  if (read.right === null) return E.left(unreadableFile(file, 'it is missing'))
  // The supervisor keeps exactly the first min(total, cap) bytes: any other length is not its file.
  const expected = Math.min(total, SHELL_OUTPUT_CAP_BYTES)
  if (read.right.length !== expected) {
    return E.left(unreadableFile(file, `it holds ${read.right.length} bytes where the exit file names ${expected}`))
  }
  return E.right(outputText(read.right, total))
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * `<dataDir>/sessions/<sessionId>/shell-runs/<shellRunId>`: where a supervised run's files live, for
 * every store kind. Throws on an id that is not path-safe (ids reach here validated; one that is not is a bug).
 * @category constructors
 */
export const shellRunDirOf = (dataDir: string, sessionId: string, shellRunId: string): string => {
  if (!isSafeId(sessionId) || !isSafeId(shellRunId)) throw new Error('a shell-run folder needs path-safe ids')
  return join(dataDir, 'sessions', sessionId, 'shell-runs', shellRunId)
}

/**
 * The status a shell run ends with: exit code 0 → `completed`, a signal → `killed`, anything else → `failed`.
 * @category constructors
 */
export const shellRunStatusOf = (end: {
  readonly exitCode: number | null
  readonly signal: string | null
}): ShellRunStatus => (end.signal !== null ? 'killed' : end.exitCode === 0 ? 'completed' : 'failed')

/**
 * The supervisor's `exit` file, decoded exactly; `null` when it is not there (yet).
 * @category constructors
 */
export const readShellRunExit =
  (dir: string): TE.TaskEither<ShellFilesError, ShellRunExit | null> =>
  async () => {
    const read = await readRegular(join(dir, 'exit'), EXIT_MAX_BYTES)
    if (E.isLeft(read)) return E.left(unreadableFile('exit', read.left))
    if (read.right === null) return E.right(null)
    if (read.right.length > EXIT_MAX_BYTES) return E.left(unreadableFile('exit', 'it is too large'))
    let parsed: unknown
    try {
      parsed = JSON.parse(read.right.toString('utf8'))
    } catch {
      return E.left(unreadableFile('exit', 'it is not JSON'))
    }
    const decoded = decodeExit(parsed)
    return E.isLeft(decoded) ? E.left(unreadableFile('exit', decoded.left)) : E.right(decoded.right)
  }

/**
 * The foreground result a supervised run's files give, built as the unsupervised tool builds it
 * (the output cap and its truncation note included); `cancelled` is never set, since only the agent
 * that cancelled knows it did. Fails when `exit` is absent or a file does not match it.
 * @category constructors
 */
export const shellResultFromFiles =
  (dir: string): TE.TaskEither<ShellFilesError, ShellResult> =>
  async () => {
    const exit = await readShellRunExit(dir)()
    if (E.isLeft(exit)) return exit
    if (exit.right === null) return E.left(unreadableFile('exit', 'it is missing'))
    const { exitCode, signal, timedOut, stdoutBytes, stderrBytes } = exit.right
    const stdout = await readOutput(dir, 'stdout', stdoutBytes)
    if (E.isLeft(stdout)) return stdout
    const stderr = await readOutput(dir, 'stderr', stderrBytes)
    if (E.isLeft(stderr)) return stderr
    return E.right(
      shellResult({
        exitCode,
        signal,
        stdout: stdout.right,
        stderr: stderr.right,
        timedOut: timedOut === true,
        cancelled: false,
      }),
    )
  }
