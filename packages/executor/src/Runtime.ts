/**
 * The runtime's interface and the results of its operations.
 */
import type { RuntimeEvent, TerminalRunStatus } from '@maka/events'
import type { ContinuationPlan, OutlinedPlan, RecoveryRefusal, ReplaySegment } from '@maka/planner'
import type * as E from 'fp-ts/lib/Either.js'
import type { StoreError } from '@maka/stores'
import type { RecoveryReport } from './RecoveryAction.js'
import type { ContinuationRejectionCode } from './RuntimeDeps.js'

/**
 * A normal turn's request.
 * @category models
 */
export interface TurnRequest {
  /** An existing session, or the id of a new one; a fresh id when omitted. */
  readonly sessionId?: string
  /** The workspace of a new session; an existing session keeps its recorded cwd. */
  readonly cwd: string
  readonly prompt: string
}

/**
 * How a normal turn ended.
 * @category models
 */
export type TurnResult =
  | {
      readonly _tag: 'Finished'
      readonly sessionId: string
      readonly runId: string
      readonly status: TerminalRunStatus
      readonly failureClass?: string
      /** The failure's human sentence (secret-free, as in the terminal event). */
      readonly failureMessage?: string
      /** The model failed in a way a later try may not and its retries ran out: a later resume may pass. */
      readonly retryLater?: true
    }
  | {
      readonly _tag: 'Refused'
      readonly code: string
      readonly message: string
      /** The store failure that refused the turn (`store_failed`), kept typed for the host. */
      readonly error?: StoreError
    }
  | {
      readonly _tag: 'Interrupted'
      readonly sessionId: string
      readonly runId: string
      readonly message: string
      /** The write that failed mid-run; the run stays non-terminal until recovery closes it. */
      readonly error?: StoreError
    }

/**
 * How the execution of a plan ended.
 * @category models
 */
export type ContinuationResult =
  | { readonly _tag: 'Parked'; readonly plan: ContinuationPlan }
  | {
      readonly _tag: 'Rejected'
      readonly codes: ReadonlyArray<ContinuationRejectionCode>
      readonly messages: ReadonlyArray<string>
    }
  | {
      /**
       * `resume` only: the host's resolver could not build the model the continuation needs. Asked
       * before the guard, the owner lock and the claim, so nothing was written and the boundary is
       * still there to resume once the host can build a model.
       */
      readonly _tag: 'ProviderUnavailable'
      readonly sourceRunId: string
      /** The resolver's sentence. */
      readonly message: string
    }
  | {
      readonly _tag: 'Failed'
      /** `ownership`: owner.lock could not be taken for a reason other than a live owner. */
      readonly stage: 'ownership' | 'claim' | 'continuation_start' | 'run'
      readonly targetRunId: string
      readonly errorClass: string
      readonly message: string
      /** The store failure behind it, kept typed for the host (`IoFailed` names operation and errno). */
      readonly error?: StoreError
    }
  | {
      readonly _tag: 'Finished'
      readonly sessionId: string
      readonly sourceRunId: string
      readonly targetRunId: string
      readonly targetTurnId: string
      readonly status: TerminalRunStatus
      readonly failureClass?: string
      /** The failure's human sentence (secret-free, as in the terminal event). */
      readonly failureMessage?: string
      /** The model failed in a way a later try may not and its retries ran out: a later resume may pass. */
      readonly retryLater?: true
    }

/**
 * What `resume` continues: the session's latest top-level run, or `runId`.
 * @category models
 */
export interface ResumeRequest {
  readonly sessionId: string
  readonly runId?: string
  /**
   * Startup recovery could not repair the session because the data directory refused it: the plan
   * parks with `recovery_unwritable` (after the flag) without reading the session.
   */
  readonly recoveryRefusal?: RecoveryRefusal
  /**
   * While the only reasons to park are commands still running (`tool_still_running`, Phase 2),
   * wait for them and plan again — holding no lock, writing nothing — until each command's
   * deadline (its start + its timeout + 5 s), or until `signal` aborts; then answer the last plan.
   * Absent: park at once.
   */
  readonly wait?: { readonly signal?: AbortSignal; readonly pollMs?: number }
}

/**
 * What a host hears while `resume` works, in this order, each awaited before resume goes on: the
 * plan (parked or not), then — for a continue plan whose model was resolved — the resolver's note,
 * then the start of the execution. A hook that throws ends `resume` with its error, before anything
 * of the continuation is written.
 * @category models
 */
export interface ResumeObserver {
  /** The plan as made, before anything else happens (a host prints it). */
  readonly onPlanned?: (plan: ContinuationPlan) => void | Promise<void>
  /** The resolver chose another model than the source run recorded, in one sentence. */
  readonly onProviderNote?: (note: string) => void | Promise<void>
  /** The model is resolved and the approved plan is about to be executed (nothing written yet). */
  readonly onExecuting?: (plan: ContinuationPlan) => void | Promise<void>
  /**
   * Waiting for commands still running (see `ResumeRequest.wait`): which ones and for how long they
   * have run, once per poll. Identities and times only — never a command or its args.
   */
  readonly onWaiting?: (operations: ReadonlyArray<WaitingOperation>) => void | Promise<void>
}

/**
 * A command a resume waits for.
 * @category models
 */
export interface WaitingOperation {
  readonly operationId: string
  readonly toolCallId: string
  readonly toolName: string
  /** Since the command started, or null when its record gives no start. */
  readonly elapsedMs: number | null
}

/**
 * Why a segment of a planned history could not be streamed again: its rows changed since they were
 * planned (the store's digest of their bytes, or their count), or could not be read. Nothing handed
 * over before it may be trusted.
 * @category models
 */
export interface ReplayFailure {
  readonly _tag: 'ReplayFailed'
  readonly runId: string
  /** A sentence safe for a log line: never a row's content. */
  readonly message: string
}

/**
 * A plan that holds no ledger: its history as segments, and a way to stream a segment's events.
 * @category models
 */
export interface PlanOutline {
  readonly plan: OutlinedPlan
  /**
   * Streams the events of one segment of `plan`'s history, in order and in batches, awaiting each
   * `onEvents`: the run's committed rows read again, checked against what planning read, filtered
   * to the replay. Resolves Right only when every event was handed over and the rows were unchanged.
   */
  replay(
    segment: ReplaySegment,
    onEvents: (events: ReadonlyArray<RuntimeEvent>) => void | Promise<void>,
  ): Promise<E.Either<ReplayFailure, void>>
}

/**
 * What a person records about an open tool call: it took effect, it did not, or it failed.
 * @category models
 */
export type ResolveVerdict = 'applied' | 'not_applied' | 'failed'

/**
 * The host through which the person recorded it.
 * @category models
 */
export type ResolveActor = 'cli' | 'tui' | 'desktop' | 'browser'

/**
 * Which call: by its tool call id, or (when a tool call id names several) by its operation id.
 * @category models
 */
export type ResolveTarget = { readonly callId: string } | { readonly operationId: string }

/**
 * A person's adjudication of one open tool call of a session's latest interrupted turn.
 * @category models
 */
export interface ResolveRequest {
  readonly sessionId: string
  readonly target: ResolveTarget
  readonly verdict: ResolveVerdict
  /** The call's result as the model will read it, instead of the verdict's sentence (at most 64 KiB of UTF-8). Never logged. */
  readonly output?: string
  readonly actor: ResolveActor
}

/**
 * How a resolve ended. `Unavailable` and `Invalid`: bad input, nothing written (exit 2). `Refused`:
 * the session or the call does not allow it, nothing written (exit 3). `Failed`: a write failed
 * (exit 1); recovery closes what was started. `Resolved`: the adjudication run holds the call's one
 * response; resuming continues from it.
 * @category models
 */
export type ResolveResult =
  | {
      readonly _tag: 'Resolved'
      readonly sessionId: string
      readonly sourceRunId: string
      readonly targetRunId: string
      readonly operationId: string
      readonly toolCallId: string
      readonly verdict: ResolveVerdict
    }
  | { readonly _tag: 'Unavailable'; readonly code: 'resolve_unavailable'; readonly message: string }
  | { readonly _tag: 'Invalid'; readonly code: string; readonly message: string }
  | {
      readonly _tag: 'Refused'
      readonly codes: ReadonlyArray<string>
      readonly messages: ReadonlyArray<string>
      /** What the refusal names (for `resolve_call_ambiguous`, the operations); identities only. */
      readonly detail?: unknown
    }
  | { readonly _tag: 'Failed'; readonly stage: string; readonly message: string; readonly error?: unknown }

/**
 * The runtime's operations.
 * @category models
 */
export interface Runtime {
  runTurn(request: TurnRequest): Promise<TurnResult>
  plan(request: { readonly sessionId: string; readonly runId?: string }): Promise<ContinuationPlan>
  /**
   * The same plan without holding a ledger (planning folds every ledger as it streams): for a
   * caller that prints the history, not one that executes it.
   */
  planOutline(request: { readonly sessionId: string; readonly runId?: string }): Promise<PlanOutline>
  execute(plan: ContinuationPlan): Promise<ContinuationResult>
  /**
   * The resume use case, whole: plans the latest safe boundary (or `runId`), resolves the
   * continuation's model from the source header planning read (`resolveContinuationProvider`),
   * then executes as `execute` does. Nothing is read between the plan and the execution but
   * what execution itself revalidates.
   */
  resume(request: ResumeRequest, observer?: ResumeObserver): Promise<ContinuationResult>
  recover(options?: { readonly sessionIds?: ReadonlyArray<string> }): Promise<RecoveryReport>
  /**
   * Records a person's verdict on one open tool call of the session's latest interrupted turn, in an
   * adjudication run of its own (a continuation that never calls a model): checks the input, runs
   * the recovery pass, plans, takes the owner lock and re-reads the source, refuses with stable codes,
   * then writes the claim and header, the start row, the call's one response and the terminal rows.
   */
  resolve(request: ResolveRequest): Promise<ResolveResult>
  /**
   * Cancels the active run (a normal turn or a continuation), e.g. on Ctrl+C: the model stream is
   * aborted, a running shell command's process group is killed (other tools finish), then the
   * terminal event (`cancelled`, `user_interrupted`) and the terminal header are written durably
   * and the owner lock is released when the pending `runTurn`/`execute` call returns. Returns the
   * cancelled run's id, or null when no run is active.
   */
  cancel(): string | null
}
