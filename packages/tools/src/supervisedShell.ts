/**
 * The supervised start of a foreground `shell` command in a protocol run (docs/contract.md,
 * "reattach"). The command must outlive a crash of the agent and its end must still be known, so
 * the tool does not run it as its own child:
 *
 * 1. it spawns the supervisor (`shellSupervisor.js`, with `process.execPath`) in a session of its
 *    own, with a control pipe; the supervisor creates the output files and waits;
 * 2. it writes the shell-run record (`operationId`, the supervisor's pid and exact identity,
 *    `running`) through `context.shellRuns`, durably, and only then sends "go" — so a command with
 *    no record never ran; if the record cannot be written, the pipe is closed and nothing starts;
 * 3. it waits for the supervisor's `exit` file and builds the result from the files, exactly as the
 *    unsupervised tool builds it, then records how the command ended.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { watch, type FSWatcher } from 'node:fs'
import { lstat, mkdir, readFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { decodeWith, ShellRun } from '@maka/events'
import * as E from 'fp-ts/lib/Either.js'
import { shellRunStatusOf, shellResultFromFiles } from './shellRunFiles.js'
import { SHELL_OUTPUT_CAP_BYTES, shellOutcomeOf, shellResult } from './ShellResult.js'
import { CONTROL_CANCEL, CONTROL_GO, SUPERVISOR_EXIT, type SupervisorConfig } from './supervisorProtocol.js'
import type { ToolContext, ToolOutcome } from './Tool.js'
import { errorCode, shellRunNotRecorded, spawnFailed, supervisorFailed, type ToolFailure } from './ToolFailure.js'

// -------------------------------------------------------------------------------------
// internals
// -------------------------------------------------------------------------------------

const decodeShellRun = decodeWith(ShellRun)

// Beside this module in the built output; run from the sources (the package's own tests), the built copy.
const supervisorScript = (): string => {
  const here = fileURLToPath(import.meta.url)
  return here.endsWith('.ts')
    ? join(dirname(here), '..', 'dist', 'shellSupervisor.js')
    : join(dirname(here), 'shellSupervisor.js')
}

// How long past the command's own timeout the tool waits for `exit` before it asks for a cancel: the
// supervisor kills the group at the timeout and has 500 ms of pipe grace, so this is only reached
// when the supervisor itself is stuck.
const EXIT_CEILING_MARGIN_MS = 30_000
// After that cancel, how long the tool still waits before it gives up on the supervisor.
const CANCEL_CEILING_MS = 10_000
// Polling backs up `fs.watch`, which may miss an event or be unavailable: from 10 ms, doubling to 1 s.
const FIRST_POLL_MS = 10
const LAST_POLL_MS = 1000

type Waited =
  | { readonly _tag: 'Exit' }
  | { readonly _tag: 'SupervisorEnded'; readonly code: number | null }
  | { readonly _tag: 'Ceiling' }

const exitPresent = async (dir: string): Promise<boolean> => {
  try {
    return (await lstat(join(dir, 'exit'))).isFile()
  } catch {
    return false
  }
}

// Resolves when `exit` is there, when the supervisor ended without writing it, or at the ceiling.
const waitForExit = (
  dir: string,
  supervisorEnded: () => number | null | undefined,
  onSupervisorEnd: (listener: () => void) => void,
  ceilingMs: number,
): Promise<Waited> =>
  new Promise((resolve) => {
    let done = false
    let pollMs = FIRST_POLL_MS
    let poll: NodeJS.Timeout | undefined
    let watcher: FSWatcher | undefined
    const finish = (waited: Waited): void => {
      if (done) return
      done = true
      clearTimeout(poll)
      clearTimeout(ceiling)
      watcher?.close()
      resolve(waited)
    }
    const check = async (): Promise<void> => {
      // Read before the look at the folder: a supervisor that ended had written `exit` before it did.
      const ended = supervisorEnded()
      const present = await exitPresent(dir)
      if (present) finish({ _tag: 'Exit' })
      else if (ended !== undefined) finish({ _tag: 'SupervisorEnded', code: ended })
    }
    const tick = (): void => {
      poll = setTimeout(() => {
        void check().then(() => {
          pollMs = Math.min(pollMs * 2, LAST_POLL_MS)
          if (!done) tick()
        })
      }, pollMs)
    }
    const ceiling = setTimeout(() => finish({ _tag: 'Ceiling' }), ceilingMs)
    try {
      watcher = watch(dir, () => void check())
      watcher.on('error', () => watcher?.close())
    } catch {
      // No watch here (e.g. out of inotify watches): polling alone still finds it.
    }
    onSupervisorEnd(() => void check())
    tick()
    void check()
  })

interface Supervisor {
  readonly child: ChildProcess
  readonly pid: number
  readonly ended: () => number | null | undefined
  readonly onEnd: (listener: () => void) => void
  readonly send: (byte: string) => void
  readonly release: () => void
}

const startSupervisor = async (config: SupervisorConfig): Promise<E.Either<ToolFailure, Supervisor>> => {
  const child = spawn(process.execPath, [supervisorScript(), JSON.stringify(config)], {
    cwd: config.cwd,
    // A session of its own (setsid): no signal to the agent's group or terminal reaches it.
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
  })
  let endCode: number | null | undefined
  const listeners: Array<() => void> = []
  child.once('exit', (code) => {
    endCode = code
    for (const listener of listeners) listener()
  })
  // Writing to a supervisor that is gone fails with EPIPE; its end is then seen by the waiter.
  child.stdin?.on('error', () => undefined)
  const spawned = await new Promise<E.Either<unknown, number>>((resolve) => {
    child.once('spawn', () => resolve(child.pid === undefined ? E.left(new Error('no pid')) : E.right(child.pid)))
    child.once('error', (cause) => resolve(E.left(cause)))
  })
  if (E.isLeft(spawned)) return E.left(spawnFailed(spawned.left))
  return E.right({
    child,
    pid: spawned.right,
    ended: () => endCode,
    onEnd: (listener) => {
      listeners.push(listener)
    },
    send: (byte) => {
      if (child.stdin?.writable === true) child.stdin.write(byte)
    },
    release: () => {
      child.stdin?.end()
      child.unref()
    },
  })
}

const reasonOfEnd = async (dir: string, code: number | null): Promise<ToolFailure> => {
  if (code === SUPERVISOR_EXIT.spawn_failed) {
    const errno = await readFile(join(dir, 'spawn-error'), 'utf8').catch(() => 'UNKNOWN')
    return spawnFailed({ code: errno.trim() })
  }
  return supervisorFailed(
    `its supervisor ended (${code === null ? 'by a signal' : `code ${code}`}) without reporting it.`,
  )
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Runs a foreground command under a supervisor, recorded as the shell run of `operationId`.
 * @category constructors
 */
export const runSupervised = async (
  command: string,
  cwd: string,
  timeoutMs: number,
  context: ToolContext,
  operationId: string,
): Promise<E.Either<ToolFailure, ToolOutcome>> => {
  const notStarted = (reason: string) => E.left(shellRunNotRecorded(reason, 'not_started', 'foreground'))
  if (context.shellRunDir === undefined) return notStarted('this host names no folder for its files.')
  const shellRunId = `sh-${randomBytes(8).toString('hex')}`
  const draft = {
    shellRunId,
    sessionId: context.sessionId,
    runId: context.runId,
    command,
    status: 'running',
    pid: 0,
    startedAt: new Date().toISOString(),
    operationId,
  }
  // Checked before anything exists: a record that cannot be written must not leave a supervisor behind.
  const checked = decodeShellRun(draft)
  if (E.isLeft(checked)) return notStarted(checked.left)
  let dir: string
  try {
    dir = context.shellRunDir(shellRunId)
    await mkdir(dirname(dir), { recursive: true, mode: 0o700 })
    // Not recursive: the folder is new, or this is not our run.
    await mkdir(dir, { mode: 0o700 })
  } catch (cause) {
    return notStarted(`its folder could not be created (${errorCode(cause)}).`)
  }

  const started = await startSupervisor({
    dir,
    cwd,
    command,
    timeoutMs,
    capBytes: SHELL_OUTPUT_CAP_BYTES,
    agentPid: process.pid,
  })
  if (E.isLeft(started)) return started
  const supervisor = started.right
  // The supervisor waits for "go", so it is alive and its identity readable now.
  const identity = await context.processIdentity.identify(supervisor.pid).catch(() => null)
  const running = decodeShellRun({
    ...draft,
    pid: supervisor.pid,
    startedAt: new Date().toISOString(),
    ...(identity === null ? {} : { bootId: identity.bootId, startTicks: identity.startTicks }),
  })
  if (E.isLeft(running)) {
    supervisor.release()
    return notStarted(running.left)
  }
  const recorded = await context.shellRuns
    .record(running.right)()
    // A recorder that throws is a bug, but the command must still not start.
    .catch((cause: unknown) => E.left({ message: cause instanceof Error ? cause.message : String(cause) }))
  if (E.isLeft(recorded)) {
    // The pipe's end before "go" tells the supervisor to start nothing.
    supervisor.release()
    return notStarted(recorded.left.message)
  }

  supervisor.send(CONTROL_GO)
  let cancelled = false
  const onAbort = (): void => {
    cancelled = true
    supervisor.send(CONTROL_CANCEL)
  }
  if (context.signal?.aborted === true) onAbort()
  else context.signal?.addEventListener('abort', onAbort, { once: true })

  let waited = await waitForExit(dir, supervisor.ended, supervisor.onEnd, timeoutMs + EXIT_CEILING_MARGIN_MS)
  if (waited._tag === 'Ceiling') {
    supervisor.send(CONTROL_CANCEL)
    waited = await waitForExit(dir, supervisor.ended, supervisor.onEnd, CANCEL_CEILING_MS)
  }
  context.signal?.removeEventListener('abort', onAbort)
  supervisor.release()

  const outcome: E.Either<ToolFailure, ToolOutcome> =
    waited._tag === 'Exit'
      ? await shellResultFromFiles(dir)().then(
          E.match(
            (error): E.Either<ToolFailure, ToolOutcome> => E.left(supervisorFailed(error.message)),
            (result) =>
              E.right(
                shellOutcomeOf(
                  cancelled ? shellResult({ ...result, timedOut: result.timedOut === true, cancelled }) : result,
                ),
              ),
          ),
        )
      : E.left(
          waited._tag === 'SupervisorEnded'
            ? await reasonOfEnd(dir, waited.code)
            : supervisorFailed('its supervisor did not report it in time.'),
        )
  if (waited._tag === 'Ceiling') {
    try {
      process.kill(supervisor.pid, 'SIGKILL')
    } catch {
      // already gone
    }
  }

  // How it ended, after the running record. A record that cannot be written is left to recovery,
  // which reads the same `exit` file.
  const result = E.isRight(outcome)
    ? (outcome.right.result as { exitCode: number | null; signal: string | null })
    : null
  const ended = decodeShellRun({
    ...running.right,
    status: result === null ? 'failed' : shellRunStatusOf(result),
    endedAt: new Date().toISOString(),
    ...(result === null ? {} : { exitCode: result.exitCode }),
  })
  if (E.isRight(ended))
    await context.shellRuns
      .record(ended.right)()
      .catch(() => undefined)
  return outcome
}
