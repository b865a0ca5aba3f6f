/**
 * The plan the planner returns, field for field as docs/contract.md §2 ("The plan") fixes it. It is
 * plain JSON data — no class instances, no functions, no `undefined` values — so hosts can print,
 * persist and compare it, and planning the same input twice gives deep-equal plans.
 */
import type {
  NonEmptyString,
  NonNegativeInt,
  ParkReason,
  RecoveryMode,
  RunId,
  RuntimeEvent,
  SessionId,
  SettlementEntry,
} from '@maka/events'
import { rejectionReasonsOf, sortFindings } from './internal/GateTable.js'
import type { ParkFinding, ParkFindings } from './ParkFinding.js'
import type { ToolCatalogEntry } from './HostFacts.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * Non-blocking facts the planner reports besides park reasons, with their human sentences.
 * @category models
 */
export const PlanWarningSentences = {
  /** The store found an incomplete final row; it is not part of the committed prefix. */
  ledger_torn_tail: 'The ledger ends with an incomplete row that was never committed; it is ignored.',
  /** A protocol call was committed but its tool never started; the continuation runs it. */
  tool_not_dispatched:
    'A tool call was recorded but its tool never started; the continuation runs it after asking again.',
  /** A permission request left open at the boundary is asked again before its call is reissued. */
  permission_reasked: 'A permission question left open when the run stopped will be asked again.',
  /** A probe checked whether a dispatched call took effect. */
  reconcile_verdict:
    'A check of the workspace decided what became of a tool call that was running when the run stopped.',
} as const

/**
 * A warning code.
 * @category models
 */
export type PlanWarningCode = keyof typeof PlanWarningSentences

/**
 * One diagnostic of a plan: every park finding (severity `error`) and every warning.
 * @category models
 */
export interface PlanDiagnostic {
  readonly code: ParkReason | PlanWarningCode
  readonly severity: 'error' | 'warning'
  readonly message: string
  readonly detail: Readonly<Record<string, unknown>>
}

/**
 * The fresh ids a continuation will run under.
 * @category models
 */
export interface ContinuationIds {
  readonly invocationId: NonEmptyString
  readonly runId: RunId
  readonly turnId: NonEmptyString
}

/**
 * The checkpoint a plan relies on.
 * @category models
 */
export interface SnapshotCheckpoint {
  readonly ref: string
  readonly runtimeEventHighWater: number
}

/**
 * The host facts the plan relied on; execution re-reads them and compares.
 * @category models
 */
export interface SafetySnapshot {
  readonly workspaceIdentity: NonEmptyString
  readonly backgroundOperationsSettled: true
  /** Sorted and unique. */
  readonly availableToolNames: ReadonlyArray<string>
  readonly workspaceCheckpoint?: SnapshotCheckpoint
  /** Each tool's recovery mode (`by_args` when a call's args decide it), sorted by name. */
  readonly toolRecoveryModes?: Readonly<Record<string, RecoveryMode | 'by_args'>>
  /** The tools from servers (MCP) the host declared: name → server and declaration digest (left out when none). */
  readonly toolCatalog?: Readonly<Record<string, ToolCatalogEntry>>
  /** The verdicts of the probes the plan relied on (left out when none). */
  readonly probeVerdicts?: ReadonlyArray<{ readonly operationId: string; readonly verdict: string }>
}

/**
 * A tool operation without a response in the chain, as a plan lists it: never its args.
 * @category models
 */
export interface OpenToolOperation {
  readonly operationId: string
  readonly toolCallId: string
  readonly toolName: string
  readonly runId: string
  readonly status: 'definitely_not_dispatched' | 'dispatched_outcome_unknown' | 'indeterminate'
  readonly recoveryMode: RecoveryMode | null
  readonly attempts: number
  readonly adoptions: number
  readonly action: 'reissue' | 'settle_applied' | 'settle_reattached' | null
  readonly reason: ParkReason | null
}

/**
 * What an approved plan hands to the executor.
 * @category models
 */
export interface Continuation {
  readonly sessionId: SessionId
  readonly invocationId: NonEmptyString
  readonly runId: RunId
  readonly turnId: NonEmptyString
  readonly sourceInvocationId: NonEmptyString
  readonly sourceRunId: RunId
  readonly sourceTurnId: NonEmptyString
  readonly sourceRuntimeEventHighWater: NonNegativeInt
  /** The whole provider history to replay, oldest first, ancestors included. */
  readonly runtimeContext: ReadonlyArray<RuntimeEvent>
  /** The source run's own replay segment. */
  readonly sourceRuntimeContext: ReadonlyArray<RuntimeEvent>
  /** What the continuation settles first, in call-row order (left out when nothing). */
  readonly settlementPlan?: ReadonlyArray<SettlementEntry>
  readonly safetySnapshot: SafetySnapshot
}

/**
 * One run's part of a replay history: the rows of `runId`'s ledger before `rows` that
 * `isReplayed` keeps — `count` of them. A run's rows are its ledger's committed rows in order.
 * @category models
 */
export interface ReplaySegment {
  readonly runId: string
  readonly rows: number
  readonly count: number
  readonly isReplayed: (event: RuntimeEvent) => boolean
}

/**
 * An approved plan's continuation with its history as segments instead of events: what a caller
 * that never holds the ledgers (a plan printed as JSON) gets. The segments run oldest first; the
 * last is the source run's own (`sourceRuntimeContext`).
 * @category models
 */
export interface ContinuationOutline extends Omit<Continuation, 'runtimeContext' | 'sourceRuntimeContext'> {
  readonly replay: ReadonlyArray<ReplaySegment>
}

/**
 * A plan whose continuation, if any, is an outline.
 * @category models
 */
export interface OutlinedPlan extends Omit<ContinuationPlan, 'continuation'> {
  readonly continuation?: ContinuationOutline
}

/**
 * The planner's answer: continue with a continuation, or park with every reason.
 * @category models
 */
export interface ContinuationPlan {
  readonly disposition: 'continue' | 'park'
  readonly rejectionReasons: ReadonlyArray<ParkReason>
  readonly diagnostics: ReadonlyArray<PlanDiagnostic>
  readonly sourceRunId: string | null
  readonly sourceRuntimeEventHighWater: number | null
  /**
   * `sha256:` + the SHA-256 of the source's committed rows as stored, when the read gave it (a fold
   * does; a whole read does not): execution refuses a prefix that no longer hashes to it.
   */
  readonly sourceRuntimeEventPrefixDigest: string | null
  /** The chain's open tool operations and what planning decided for each (left out when none). */
  readonly openToolOperations?: ReadonlyArray<OpenToolOperation>
  readonly continuation?: Continuation
}

/**
 * Where a plan points: the source run and the boundary's high-water, when known.
 * @category models
 */
export interface PlanBoundary {
  readonly sourceRunId: string | null
  readonly sourceRuntimeEventHighWater: number | null
  readonly sourceRuntimeEventPrefixDigest?: string | null
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * A warning diagnostic with the sentence from {@link PlanWarningSentences}.
 * @category constructors
 */
export const makeWarning = (code: PlanWarningCode, detail: Readonly<Record<string, unknown>>): PlanDiagnostic => ({
  code,
  severity: 'warning',
  message: PlanWarningSentences[code],
  detail,
})

const toErrorDiagnostic = (finding: ParkFinding): PlanDiagnostic => ({
  code: finding.code,
  severity: 'error',
  message: finding.message,
  detail: finding.detail,
})

/**
 * A parked plan: reasons deduplicated in the fixed order, each finding an error diagnostic.
 * @category constructors
 */
export const makeParkedPlan = (
  findings: ParkFindings,
  boundary: PlanBoundary,
  warnings: ReadonlyArray<PlanDiagnostic> = [],
  openToolOperations: ReadonlyArray<OpenToolOperation> = [],
): Omit<ContinuationPlan, 'continuation'> => ({
  disposition: 'park',
  rejectionReasons: rejectionReasonsOf(findings),
  diagnostics: [...sortFindings(findings).map(toErrorDiagnostic), ...warnings],
  sourceRunId: boundary.sourceRunId,
  sourceRuntimeEventHighWater: boundary.sourceRuntimeEventHighWater,
  sourceRuntimeEventPrefixDigest: boundary.sourceRuntimeEventPrefixDigest ?? null,
  ...(openToolOperations.length === 0 ? {} : { openToolOperations }),
})

/**
 * An approved plan: no reasons, warnings only.
 * @category constructors
 */
export const makeContinuePlan = <C extends Continuation | ContinuationOutline>(
  continuation: C,
  warnings: ReadonlyArray<PlanDiagnostic> = [],
  openToolOperations: ReadonlyArray<OpenToolOperation> = [],
  sourceRuntimeEventPrefixDigest: string | null = null,
): Omit<ContinuationPlan, 'continuation'> & { readonly continuation: C } => ({
  disposition: 'continue',
  rejectionReasons: [],
  diagnostics: warnings,
  sourceRunId: continuation.sourceRunId,
  sourceRuntimeEventHighWater: continuation.sourceRuntimeEventHighWater,
  sourceRuntimeEventPrefixDigest,
  ...(openToolOperations.length === 0 ? {} : { openToolOperations }),
  continuation,
})

/**
 * The events of a segment, given the rows of its run.
 * @category constructors
 */
export const segmentEvents = (segment: ReplaySegment, rows: ReadonlyArray<RuntimeEvent>): Array<RuntimeEvent> => {
  const kept: Array<RuntimeEvent> = []
  const end = Math.min(segment.rows, rows.length)
  for (let i = 0; i < end; i += 1) {
    const event = rows[i]
    if (event !== undefined && segment.isReplayed(event)) kept.push(event)
  }
  return kept
}

/**
 * The plan of an outline, its history taken from the rows of each run (`rowsOf`).
 * @category constructors
 */
export const materializePlan = (
  plan: OutlinedPlan,
  rowsOf: (runId: string) => ReadonlyArray<RuntimeEvent>,
): ContinuationPlan => {
  const { continuation, ...rest } = plan
  if (continuation === undefined) return rest
  const { replay, safetySnapshot, settlementPlan, ...fields } = continuation
  const segments = replay.map((segment) => segmentEvents(segment, rowsOf(segment.runId)))
  const sourceRuntimeContext = segments.at(-1) ?? []
  // The keys keep the contract's order (docs/contract.md §2): the histories stand between the boundary and the snapshot.
  return {
    ...rest,
    continuation: {
      ...fields,
      runtimeContext: segments.flat(),
      sourceRuntimeContext,
      ...(settlementPlan === undefined ? {} : { settlementPlan }),
      safetySnapshot,
    },
  }
}
