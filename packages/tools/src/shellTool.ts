/**
 * `shell`: runs `/bin/sh -c command` in the workspace root.
 *
 * Every command runs in its own process group so that a timeout, a cancellation or the end of a
 * foreground call can stop everything it started, not just the shell. A foreground call therefore
 * leaves nothing behind; work meant to outlive the call must ask for `background: true`, which is
 * recorded as a shell run before the tool returns — recovery and the resume gates can only account
 * for background work they can see. In a protocol run (the context names an `operationId`) a foreground
 * command runs under a supervisor instead (`supervisedShell.ts`), so a crash of the agent neither
 * kills it nor loses how it ended.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import type { Readable } from 'node:stream'
import { decodeWith, ShellRun } from '@maka/events'
import * as E from 'fp-ts/lib/Either.js'
import { pipe } from 'fp-ts/lib/function.js'
import { defineTool } from './defineTool.js'
import { resolveInsideWorkspace } from './resolveInsideWorkspace.js'
import {
  outputText,
  SHELL_DEFAULT_TIMEOUT_MS,
  SHELL_MAX_TIMEOUT_MS,
  SHELL_OUTPUT_CAP_BYTES,
  shellOutcomeOf,
  shellResult,
  type BackgroundShellResult,
} from './ShellResult.js'
import { runSupervised } from './supervisedShell.js'
import type { Tool, ToolContext, ToolOutcome } from './Tool.js'
import { argumentsObject, optionalBoolean, optionalInteger, requiredString } from './ToolArguments.js'
import { cancelled, shellRunNotRecorded, spawnFailed, type ToolFailure } from './ToolFailure.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

// How long output may keep arriving after the shell itself exited.
const PIPE_GRACE_MS = 500

interface ShellArgs {
  readonly command: string
  readonly background: boolean | undefined
  readonly timeoutMs: number | undefined
}

// -------------------------------------------------------------------------------------
// internals
// -------------------------------------------------------------------------------------

const decodeArgs = (args: unknown): E.Either<ToolFailure, ShellArgs> =>
  pipe(
    argumentsObject('shell', args, ['command', 'background', 'timeoutMs']),
    E.flatMap((a) =>
      pipe(
        E.Do,
        E.apS('command', requiredString(a, 'command', { nonEmpty: true })),
        E.apS('background', optionalBoolean(a, 'background')),
        E.apS('timeoutMs', optionalInteger(a, 'timeoutMs', 1, SHELL_MAX_TIMEOUT_MS)),
      ),
    ),
  )

const decodeShellRun = decodeWith(ShellRun)

// The group may already be gone (ESRCH); that is the state we wanted.
const killGroup = (pid: number | undefined): void => {
  if (pid === undefined) return
  try {
    process.kill(-pid, 'SIGKILL')
  } catch {
    // already gone
  }
}

interface Capture {
  readonly text: () => string
}

// Keeps the first `cap` bytes and counts the rest, so a chatty command cannot exhaust memory.
const capture = (stream: Readable | null): Capture => {
  const kept: Array<Buffer> = []
  let keptBytes = 0
  let totalBytes = 0
  stream?.on('data', (chunk: Buffer) => {
    totalBytes += chunk.length
    if (keptBytes >= SHELL_OUTPUT_CAP_BYTES) return
    const slice = chunk.subarray(0, SHELL_OUTPUT_CAP_BYTES - keptBytes)
    kept.push(slice)
    keptBytes += slice.length
  })
  return { text: () => outputText(Buffer.concat(kept), totalBytes) }
}

const startShell = (command: string, cwd: string, stdio: 'pipe' | 'ignore'): ChildProcess =>
  spawn('/bin/sh', ['-c', command], {
    cwd,
    // Own process group: `kill(-pid)` then reaches every process the command started.
    detached: true,
    stdio: ['ignore', stdio, stdio],
  })

const runForeground = (
  command: string,
  cwd: string,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<E.Either<ToolFailure, ToolOutcome>> =>
  new Promise((resolve) => {
    const child = startShell(command, cwd, 'pipe')
    const stdout = capture(child.stdout)
    const stderr = capture(child.stderr)
    let timedOut = false
    let cancelled = false
    let settled = false
    const onAbort = (): void => {
      cancelled = true
      killGroup(child.pid)
    }
    const timer = setTimeout(() => {
      timedOut = true
      killGroup(child.pid)
    }, timeoutMs)
    const settle = (value: E.Either<ToolFailure, ToolOutcome>): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
      resolve(value)
    }
    if (signal?.aborted === true) onAbort()
    else signal?.addEventListener('abort', onAbort, { once: true })
    child.once('error', (cause) => {
      killGroup(child.pid)
      settle(E.left(spawnFailed(cause)))
    })
    child.once('exit', () => {
      // Anything the command left running in its group would be unrecorded background work; it ends
      // with the call, which also closes the pipes such leftovers hold so 'close' can arrive.
      killGroup(child.pid)
      // A leftover that escaped the group (setsid) may still hold a pipe: stop waiting for it.
      setTimeout(() => {
        child.stdout?.destroy()
        child.stderr?.destroy()
      }, PIPE_GRACE_MS).unref()
    })
    child.once('close', (exitCode: number | null, exitSignal: NodeJS.Signals | null) => {
      settle(
        E.right(
          shellOutcomeOf(
            shellResult({
              exitCode,
              signal: exitSignal,
              stdout: stdout.text(),
              stderr: stderr.text(),
              timedOut,
              cancelled,
            }),
          ),
        ),
      )
    })
  })

const finalStatus = (exitCode: number | null, signal: NodeJS.Signals | null): ShellRun['status'] =>
  signal !== null ? 'killed' : exitCode === 0 ? 'completed' : 'failed'

const runBackground = async (
  command: string,
  cwd: string,
  timeoutMs: number | undefined,
  context: ToolContext,
): Promise<E.Either<ToolFailure, ToolOutcome>> => {
  // A detached command would outlive the cancellation that was meant to prevent it.
  if (context.signal?.aborted === true) return E.left(cancelled('shell'))
  const shellRunId = `sh-${randomBytes(8).toString('hex')}`
  const draft = {
    shellRunId,
    sessionId: context.sessionId,
    runId: context.runId,
    command,
    status: 'running',
    pid: 0,
    startedAt: new Date().toISOString(),
  }
  // Checked before spawning: a record that cannot be written must not leave a process behind.
  const checked = decodeShellRun(draft)
  if (E.isLeft(checked)) return E.left(shellRunNotRecorded(checked.left, 'not_started'))

  const child = startShell(command, cwd, 'ignore')
  // Listened for at once: a command as short as `exit 3` may end before the running record is written.
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  )
  const spawned = await new Promise<E.Either<unknown, number>>((resolve) => {
    child.once('spawn', () => resolve(child.pid === undefined ? E.left(new Error('no pid')) : E.right(child.pid)))
    child.once('error', (cause) => resolve(E.left(cause)))
  })
  if (E.isLeft(spawned)) return E.left(spawnFailed(spawned.left))
  const pid = spawned.right
  // The child must not keep this process alive; it is detached and outlives us by design.
  child.unref()

  // A command that already ended has no identity to read (null); its final record follows at once.
  const identity = await context.processIdentity.identify(pid).catch(() => null)
  const running = decodeShellRun({
    ...draft,
    pid,
    startedAt: new Date().toISOString(),
    ...(identity === null ? {} : { bootId: identity.bootId, startTicks: identity.startTicks }),
  })
  if (E.isLeft(running)) {
    killGroup(pid)
    return E.left(shellRunNotRecorded(running.left, 'stopped'))
  }
  const recorded = await context.shellRuns
    .record(running.right)()
    // A recorder that throws is a bug, but the process it was about to name must still be stopped.
    .catch((cause: unknown) => E.left({ message: cause instanceof Error ? cause.message : String(cause) }))
  if (E.isLeft(recorded)) {
    killGroup(pid)
    return E.left(shellRunNotRecorded(recorded.left.message, 'stopped'))
  }

  const timer = timeoutMs === undefined ? undefined : setTimeout(() => killGroup(pid), timeoutMs)
  timer?.unref()
  // Chained after the running record, so the final record can never be overwritten by it.
  void exited
    .then(async ({ code, signal }) => {
      clearTimeout(timer)
      const ended = decodeShellRun({
        ...running.right,
        status: finalStatus(code, signal),
        endedAt: new Date().toISOString(),
        exitCode: code,
      })
      // A final record that cannot be written is left to recovery, like a crash before it.
      if (E.isRight(ended)) await context.shellRuns.record(ended.right)()
    })
    // Best effort: a record left `running` is turned into `failed` by startup recovery once the pid is gone.
    .catch(() => undefined)

  const result: BackgroundShellResult = { shellRunId, pid }
  return E.right({ result, isError: false })
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Builds the `shell` tool.
 * @category constructors
 */
export const makeShellTool = (): Tool =>
  defineTool(
    {
      name: 'shell',
      description:
        'Run a command with /bin/sh in the workspace root. Foreground (default): waits, returns exit code, ' +
        'stdout and stderr, and stops anything the command left running. background: true starts it ' +
        'detached and returns its shellRunId and pid at once.',
      parameters: {
        type: 'object',
        properties: {
          command: { type: 'string', description: 'The command line, run as /bin/sh -c command.' },
          background: { type: 'boolean', description: 'Start detached and return at once (default false).' },
          timeoutMs: {
            type: 'integer',
            minimum: 1,
            maximum: SHELL_MAX_TIMEOUT_MS,
            description: `Kill the command after this many ms (foreground default ${SHELL_DEFAULT_TIMEOUT_MS}; background: none).`,
          },
        },
        required: ['command'],
        additionalProperties: false,
      },
      mutates: true,
      recovery: (args) =>
        E.exists(({ background }: ShellArgs) => background !== true)(decodeArgs(args))
          ? 'reattach'
          : 'never_auto_retry',
      describeCall: (args) =>
        pipe(
          decodeArgs(args),
          E.match(
            () => undefined,
            (a) => `run ${JSON.stringify(a.command)}${a.background === true ? ' in the background' : ''}`,
          ),
        ),
    },
    async (args, context) => {
      const parsed = decodeArgs(args)
      if (E.isLeft(parsed)) return parsed
      const root = await resolveInsideWorkspace(context.cwd, '.')
      if (E.isLeft(root)) return root
      const { command, background, timeoutMs } = parsed.right
      if (background === true) return runBackground(command, root.right, timeoutMs, context)
      // A protocol run's foreground call is supervised, so it outlives a crash of the agent and is watched
      // to its end; a legacy call runs exactly as before.
      return context.operationId === undefined
        ? runForeground(command, root.right, timeoutMs ?? SHELL_DEFAULT_TIMEOUT_MS, context.signal)
        : runSupervised(command, root.right, timeoutMs ?? SHELL_DEFAULT_TIMEOUT_MS, context, context.operationId)
    },
  )
