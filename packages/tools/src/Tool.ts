/**
 * The tool port. A tool runs only after its `function_call` row is committed; the executor appends
 * its `function_response` row when it ends. Tools never write the ledger themselves.
 */
import type * as TE from 'fp-ts/lib/TaskEither.js'
import type { ProcessIdentity, RecoveryMode, ShellRun } from '@maka/events'

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
   * The call's operation (`<runId>-o<row>`). Set by the executor only in a protocol run (one that
   * writes the tool journal); absent otherwise. With it, a foreground `shell` command runs under a
   * supervisor and is recorded with this id (the supervised start).
   */
  readonly operationId?: string
  /** Which attempt of the operation this run is, from 1. Protocol runs only. */
  readonly attempt?: number
  /**
   * `"maka:" + operationId`, the same for every attempt of one operation. An `idempotent` tool passes
   * it to the system it changes, so a second attempt has no further effect. Protocol runs only.
   */
  readonly idempotencyKey?: string
  /**
   * The folder of one shell run's files on this host, `<data dir>/sessions/<sessionId>/shell-runs/<shellRunId>`
   * (`shellRunDirOf`), for every store kind. A supervised `shell` call needs it and starts nothing without it.
   */
  readonly shellRunDir?: (shellRunId: string) => string
}

/**
 * What a reconcile basis or probe may know: the workspace and the session, and a signal that aborts
 * when its time limit is over. Nothing else: a probe reads the world, it never changes it.
 * @category models
 */
export interface ProbeContext {
  /** The canonical session cwd, as in `ToolContext`. */
  readonly cwd: string
  readonly sessionId: string
  readonly signal?: AbortSignal
}

/**
 * What a probe learned about a dispatched call. `applied` carries the output the call's response
 * would have held; `not_applied` asserts the dispatched attempt can no longer take effect;
 * `diverged` means the world holds neither the call's effect nor the state before it; `unreadable`
 * means the probe cannot tell (also its answer when it cannot prove `not_applied`).
 * @category models
 */
export type ProbeVerdict =
  | { readonly verdict: 'applied'; readonly output: unknown }
  | { readonly verdict: 'not_applied' | 'diverged' | 'unreadable' }

/**
 * The read-only checks of a `reconcile` tool. `basis` runs before the call is dispatched and returns
 * at most 256 UTF-8 bytes describing the state the call would change; `probe` runs after a crash and
 * compares the world with that basis and with the call's intended effect. Both only read, and both
 * are cut off after 10 s (`computeReconcileBasis`, `runProbe`).
 * @category models
 */
export interface ReconcileProbe {
  basis(args: unknown, context: ProbeContext): Promise<string>
  probe(args: unknown, context: ProbeContext, basis: string): Promise<ProbeVerdict>
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
 * Where a tool that is not built in comes from: the MCP server that declared it, and a digest of what
 * it declared (name, input schema, annotations). The catalog gate compares the digest a call was made
 * under with the one the host sees now, so a tool that changed is never taken for the one that ran.
 * @category models
 */
export interface ToolSource {
  readonly server: string
  /** `sha256:<hex>` of the declaration. */
  readonly digest: string
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
  /**
   * How a call may be recovered after a crash: one mode for every call, or a mode per call's args
   * (args that fail validation should give `never_auto_retry`). Absent means `never_auto_retry`.
   * Read it through `recoveryModeOf`, which applies the catalog's rules.
   */
  readonly recovery?: RecoveryMode | ((args: unknown) => RecoveryMode)
  /** The basis and probe of a tool whose mode is `reconcile`; a `reconcile` mode without them counts as `never_auto_retry`. */
  readonly reconcile?: ReconcileProbe
  /** Absent for a built-in tool; an MCP tool names its server and the digest of its declaration. */
  readonly source?: ToolSource
  run(args: unknown, context: ToolContext): Promise<ToolOutcome>
}
