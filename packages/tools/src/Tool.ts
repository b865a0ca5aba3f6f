/**
 * The tool port. A tool runs only after its `function_call` row is committed; the executor appends
 * its `function_response` row when it ends. Tools never write the ledger themselves.
 */
import type * as TE from 'fp-ts/lib/TaskEither.js'
import type { ProcessIdentity, ShellRun } from '@maka/events'

/**
 * Why a shell run could not be recorded: one sentence, safe to show (it never holds the command).
 * @category models
 */
export interface RecordFailure {
  readonly message: string
}

/**
 * Where background shell operations are recorded (`shell-runs/<id>.json`), so recovery and the
 * host inspector can see them after a crash. A record that cannot be written is a `RecordFailure`
 * value; a recorder that throws is a bug.
 * @category models
 */
export interface ShellRunRecorder {
  record(run: ShellRun): TE.TaskEither<RecordFailure, void>
}

/**
 * Reads the exact identity (boot id + start ticks) of a process the tool started; the host supplies
 * it (host-inspector reads /proc), and `null` means the host cannot tell.
 * @category models
 */
export interface ProcessIdentityPort {
  identify(pid: number): Promise<ProcessIdentity | null>
}

/**
 * What a tool may know about the call it serves.
 * @category models
 */
export interface ToolContext {
  readonly sessionId: string
  readonly runId: string
  /** The canonical session cwd; every path a tool touches must stay inside it. */
  readonly cwd: string
  readonly toolCallId: string
  readonly shellRuns: ShellRunRecorder
  /** Names every background process in its shell-run record exactly, so no clock can misjudge it. */
  readonly processIdentity: ProcessIdentityPort
  readonly signal?: AbortSignal
  /**
   * The call's operation in a protocol run (`<runId>-o<row>`); absent in a legacy run. With it, a
   * foreground `shell` command runs under a supervisor and is recorded with this id (the supervised start).
   */
  readonly operationId?: string
  /**
   * The folder of one shell run's files on this host, `<data dir>/sessions/<sessionId>/shell-runs/<shellRunId>`
   * (`shellRunDirOf`), for every store kind. A supervised `shell` call needs it and starts nothing without it.
   */
  readonly shellRunDir?: (shellRunId: string) => string
}

/**
 * A tool's outcome: the result the model sees, and whether it is an error.
 * @category models
 */
export interface ToolOutcome {
  readonly result: unknown
  readonly isError: boolean
}

/**
 * A tool the agent may call.
 * @category models
 */
export interface Tool {
  readonly name: string
  readonly description: string
  /** JSON Schema of the arguments object. */
  readonly parameters: Readonly<Record<string, unknown>>
  /** True when a call changes the world (writes, runs commands): it needs permission under `ask`. */
  readonly mutates: boolean
  /** A one-line preview of what a call will do, shown to the person asked for permission. */
  describeCall?(args: unknown): string | undefined
  run(args: unknown, context: ToolContext): Promise<ToolOutcome>
}
