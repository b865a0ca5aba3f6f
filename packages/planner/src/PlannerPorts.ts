/**
 * The ports the planner reads the world through. The stores and host-inspector packages satisfy
 * them through thin adapters elsewhere. What a store read yields (a run listing, a ledger snapshot)
 * is the store's own type, named here as a type only, so the planner stays pure: it loads neither
 * package. A store read fails with the stores' `StoreError`, a host observation with an
 * `ObservationError` (host-inspector's `InspectError` is one, and so is a `StoreError`); the planner
 * turns each failure into its park reason.
 */
import type { AgentRun, ContinuationClaim, RecoveryMode, RuntimeEvent } from '@maka/events'
import type { LedgerSnapshot, RunListing, StoreError } from '@maka/stores'
import type * as T from 'fp-ts/lib/Task.js'
import type * as TE from 'fp-ts/lib/TaskEither.js'
import type { ContinuationIds, ContinuationPlan, OutlinedPlan } from './ContinuationPlan.js'
import type { HostFacts, OperationFacts } from './HostFacts.js'
import type { ObservationError } from './PortFailure.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * The store reads the planner needs.
 * @category models
 */
export interface PlannerStorePort {
  /**
   * Every run of the session, readable or not — except a folder whose header was never created (a
   * create that did not complete, decisions #10): that run never existed.
   */
  listRuns(sessionId: string): TE.TaskEither<StoreError, ReadonlyArray<RunListing>>
  /** A run header; any failure means the run is unreadable. */
  readRun(sessionId: string, runId: string): TE.TaskEither<StoreError, AgentRun>
  /** A run's ledger; a problem inside the read is data, a Left means it could not be read at all. */
  readLedger(sessionId: string, runId: string): TE.TaskEither<StoreError, LedgerSnapshot>
  /**
   * A run's ledger handed row by row to `onEvent` and not kept: the rows `readLedger` would hold,
   * in order, and the read's counts. Optional: without it, `outline` reads ledgers whole.
   */
  foldLedger?(
    sessionId: string,
    runId: string,
    onEvent: (event: RuntimeEvent) => void,
    options?: { readonly digestAt?: number },
  ): TE.TaskEither<StoreError, LedgerFoldCounts>
  /** The session's continuation claims. */
  listClaims(sessionId: string): TE.TaskEither<StoreError, ReadonlyArray<ContinuationClaim>>
}

/**
 * Whether a process owns the session: none, a live one, or a stale lock.
 * @category models
 */
export type OwnerLiveness = 'none' | 'alive' | 'stale'

/**
 * The host observations the planner needs.
 * @category models
 */
export interface HostFactsPort {
  /** Whether a live process owns the session now. */
  ownerLiveness(sessionId: string): TE.TaskEither<ObservationError, OwnerLiveness>
  /** The host facts for planning a continuation of `sourceRun`. */
  observe(input: {
    readonly sessionId: string
    readonly sourceRun: AgentRun
  }): TE.TaskEither<ObservationError, HostFacts>
  /**
   * What the world says now about open tool operations of the chain (Phase 2): each call's current
   * mode, and a probe (`reconcile`) or an observation (`reattach`) when the mode is unchanged. Reads
   * only. Absent: such operations park `tool_outcome_unknown`.
   */
  observeOperations?(input: {
    readonly sessionId: string
    readonly sourceRun: AgentRun
    readonly operations: ReadonlyArray<OperationToObserve>
  }): TE.TaskEither<ObservationError, ReadonlyArray<ObservedOperation>>
}

/**
 * An open operation the host is asked about: its identity, the call's args, and what its last
 * dispatch recorded. The args and the basis are for the tool's own check only; never log them.
 * @category models
 */
export interface OperationToObserve {
  readonly operationId: string
  readonly toolCallId: string
  readonly toolName: string
  /** The run whose ledger holds the call. */
  readonly runId: string
  readonly args: unknown
  readonly recordedMode: RecoveryMode | null
  readonly reconcileBasis: string | null
}

/**
 * What the host found about one operation.
 * @category models
 */
export interface ObservedOperation extends OperationFacts {
  readonly operationId: string
}

/**
 * Where fresh continuation ids come from (the shell supplies randomness, the core never does).
 * @category models
 */
export interface IdSource {
  newContinuationIds(): ContinuationIds
}

/**
 * What the planner factory needs.
 * @category models
 */
export interface RuntimeContinuationPlannerDeps {
  readonly store: PlannerStorePort
  readonly host: HostFactsPort
  readonly ids: IdSource
  /** True iff `MAKA_RUNTIME_SAFE_BOUNDARY_RESUME=1`; the caller reads the environment, not the planner. */
  readonly safeBoundaryResumeEnabled: boolean
}

/**
 * A planning request: an explicit run, or (without `runId`) the session's latest top-level run.
 * @category models
 */
export interface PlanRequest {
  readonly sessionId: string
  readonly runId?: string
}

/**
 * The planner service. Planning reads only; it never fails — every failure becomes a parked plan.
 * @category models
 */
export interface RuntimeContinuationPlanner {
  plan(request: PlanRequest): T.Task<ContinuationPlan>
  /**
   * The same plan with its history as segments of the runs' rows: every ledger is folded as it is
   * read (`foldLedger`), so planning holds no ledger in memory.
   */
  outline(request: PlanRequest): T.Task<OutlinedPlan>
}

/**
 * What a fold of a ledger reports besides its rows: the counts of `LedgerSnapshot`.
 * @category models
 */
export interface LedgerFoldCounts {
  /** How many rows were handed over. */
  readonly rows: number
  readonly highWater: number
  readonly tornTail: LedgerSnapshot['tornTail']
  readonly problem: LedgerSnapshot['problem']
  /** Lowercase hex SHA-256 of the committed rows as stored, when the store gives it. */
  readonly digest?: string
  /** The byte length of the committed rows, when the store gives it. */
  readonly committedBytes?: number
  /** The same digest over the first `digestAt` rows, when asked and the store gives it. */
  readonly digestAt?: { readonly rows: number; readonly digest: string }
}
