/**
 * The pure planner: already-loaded data in, a plan out. Early exits 6–9 (and the ancestor walk)
 * run as a short-circuiting pipeline; once they pass, gates 0–13 are evaluated together and every
 * failure is collected. No I/O, no clock, no randomness: the same input gives a deep-equal plan.
 *
 * The planner reads folded ledgers (`foldLedger.ts`), never rows: `planFolded` answers with the
 * history as segments of each run's rows, and `planContinuation` — given whole ledgers — folds
 * them and fills the segments in from the same rows. One set of rules either way.
 */
import { type AgentRun, type RuntimeEvent, makeNonNegativeIntUnsafe } from '@maka/events'
import type { TornTail } from '@maka/stores'
import * as E from 'fp-ts/lib/Either.js'
import { pipe } from 'fp-ts/lib/function.js'
import {
  type ContinuationIds,
  type ContinuationOutline,
  type ContinuationPlan,
  type OpenToolOperation,
  type OutlinedPlan,
  type PlanDiagnostic,
  makeContinuePlan,
  makeParkedPlan,
  makeWarning,
  materializePlan,
} from './ContinuationPlan.js'
import {
  boundaryUnclaimed,
  chainDigestsHold,
  ledgerRowsOwned,
  sourceLedgerReadable,
  workspaceIdentityRecorded,
} from './internal/earlyExits.js'
import { type FoldedLedger, type LedgerFoldOptions, foldEvents } from './internal/foldLedger.js'
import { type GateView, describeOperation, evaluateGates, reaskedPermissions } from './internal/gates.js'
import { type JournalView, journalReplay, makeJournalView } from './internal/journalView.js'
import { withoutChangedTools } from './internal/toolCatalog.js'
import type { HostFacts, OperationFacts } from './HostFacts.js'
import { sameCwd } from './normalizeCwd.js'
import type { OpenOperation } from '@maka/projection'
import { type LedgerCounts, countsOf } from './internal/ledgerChecks.js'
import type { BoundaryHolders, PlanningInput } from './PlanningInput.js'
import { type FoldedAncestorLookup, foldedLookup, walkChain } from './walkAncestors.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * The pure planner's input with every ledger folded: the source's read counts, torn tail and fold
 * (made with {@link sourceFoldOptions} of the same facts), and its ancestors folded on request.
 * @category models
 */
export interface FoldedPlanningInput {
  readonly source: AgentRun
  readonly ledger: LedgerCounts & { readonly tornTail: TornTail | null; readonly digest?: string | undefined }
  readonly folded: FoldedLedger
  readonly ancestors: FoldedAncestorLookup
  /** When absent, early exit 9 is not evaluated. */
  readonly boundaryHolders?: BoundaryHolders
  readonly facts: HostFacts
  /** What the host read for the chain's open operations (Phase 2), by operation id. */
  readonly operationFacts?: ReadonlyMap<string, OperationFacts>
}

// -------------------------------------------------------------------------------------
// internals
// -------------------------------------------------------------------------------------

const expectedHighWaterOf = (facts: HostFacts): GateView['expectedHighWater'] => {
  if (facts.workspaceCheckpoint !== undefined) {
    return { value: facts.workspaceCheckpoint.runtimeEventHighWater, from: 'checkpoint' }
  }
  if (facts.expectedRuntimeEventHighWater !== undefined) {
    return { value: facts.expectedRuntimeEventHighWater, from: 'caller' }
  }
  return undefined
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * How the source ledger is folded under `facts`: Phase 0 against the expected high-water.
 * @category constructors
 */
export const sourceFoldOptions = (facts: HostFacts): LedgerFoldOptions => {
  const expected = expectedHighWaterOf(facts)
  return expected === undefined ? {} : { projection: { expectedRuntimeEventHighWater: expected.value } }
}

/**
 * The non-blocking diagnostics of a source ledger: a torn final row the store reported.
 * @category constructors
 */
export const ledgerWarnings = (
  source: AgentRun,
  ledger: { readonly tornTail: TornTail | null },
): ReadonlyArray<PlanDiagnostic> =>
  ledger.tornTail === null
    ? []
    : [
        makeWarning('ledger_torn_tail', {
          runId: source.runId,
          offset: ledger.tornTail.offset,
          length: ledger.tornTail.length,
        }),
      ]

// Early exits 6–9 and the ancestor walk.
const walkedChain = (input: FoldedPlanningInput) => {
  const { source, ledger, folded } = input
  return pipe(
    workspaceIdentityRecorded(source),
    E.flatMap(() => sourceLedgerReadable(source.runId)(ledger)),
    E.flatMap(() => walkChain({ header: source, counts: ledger, folded }, input.ancestors)),
    E.tap((chain) => ledgerRowsOwned({ source, ledger, folded, chain })),
    E.tap((chain) => chainDigestsHold(chain)),
    E.tap(() => boundaryUnclaimed({ source, highWater: ledger.rows, holders: input.boundaryHolders })),
  )
}

/**
 * The open operations of the chain whose decision needs the host to read the world — the mode its
 * tool gives the call's args today, a `reconcile` probe, a `reattach` observation — and may: the
 * early exits pass and the workspace is the one the calls ran in (gates 6 and 7). Planning again
 * with what the host read ({@link FoldedPlanningInput.operationFacts}) decides them.
 * @category constructors
 */
export const operationsToObserve = (input: FoldedPlanningInput): ReadonlyArray<OpenOperation> => {
  const chained = walkedChain(input)
  if (E.isLeft(chained)) return []
  const journal = makeJournalView(
    chained.right.segments,
    withoutChangedTools(input.facts, chained.right.segments),
    undefined,
  )
  const { source, facts } = input
  const sameWorkspace =
    sameCwd(source.cwd, facts.currentCwd) &&
    source.workspaceIdentity !== undefined &&
    source.workspaceIdentity === facts.currentWorkspaceIdentity
  return journal === null || !sameWorkspace ? [] : journal.decided.awaitingFacts
}

/**
 * {@link operationsToObserve} for already-loaded data.
 * @category constructors
 */
export const operationsToObserveIn = (input: PlanningInput): ReadonlyArray<OpenOperation> =>
  operationsToObserve(foldedInput(input, new Map()))

const foldedInput = (input: PlanningInput, rowsOf: Map<string, ReadonlyArray<RuntimeEvent>>): FoldedPlanningInput => {
  const { source, ledger, facts } = input
  rowsOf.set(source.runId, ledger.events)
  return {
    source,
    ledger: {
      ...countsOf(ledger),
      tornTail: ledger.tornTail,
      ...(input.sourceDigest === undefined ? {} : { digest: input.sourceDigest }),
    },
    folded: foldEvents(source, ledger.events, sourceFoldOptions(facts)),
    ancestors: foldedLookup(input.ancestors, rowsOf),
    ...(input.boundaryHolders === undefined ? {} : { boundaryHolders: input.boundaryHolders }),
    facts,
    ...(input.operationFacts === undefined ? {} : { operationFacts: input.operationFacts }),
  }
}

/**
 * Plans a continuation of folded ledgers: early exits 6–9, the ancestor walk and gates 0–13. The
 * continuation's history is an outline: segments of the chain's rows.
 * @category constructors
 */
export const planFolded = (input: FoldedPlanningInput, ids: ContinuationIds): OutlinedPlan => {
  const { source, ledger, folded, facts } = input
  const highWater = ledger.problem?._tag === 'Unreadable' ? null : ledger.rows
  const warnings = ledgerWarnings(source, ledger)
  const expectedHighWater = expectedHighWaterOf(facts)
  const digest = ledger.digest === undefined || highWater === null ? null : `sha256:${ledger.digest}`
  const boundary = {
    sourceRunId: source.runId,
    sourceRuntimeEventHighWater: highWater,
    sourceRuntimeEventPrefixDigest: digest,
  }
  const chained = walkedChain(input)
  if (E.isLeft(chained)) return makeParkedPlan(chained.left, boundary, warnings)
  const chain = chained.right
  const journal = makeJournalView(chain.segments, withoutChangedTools(facts, chain.segments), input.operationFacts)
  const view: GateView = {
    source,
    ledger: folded,
    ...(expectedHighWater === undefined ? {} : { expectedHighWater }),
    chain,
    facts,
    ids,
    journal,
  }
  const open = journal === null ? [] : openToolOperations(journal)
  const allWarnings = journal === null ? warnings : [...warnings, ...journalWarnings(view, journal)]
  return pipe(
    evaluateGates(view),
    E.map((passed): ContinuationOutline => {
      const settlementPlan = journal?.decided.settlementPlan ?? []
      const probeVerdicts = probeVerdictsOf(journal)
      return {
        sessionId: source.sessionId,
        invocationId: ids.invocationId,
        runId: ids.runId,
        turnId: ids.turnId,
        sourceInvocationId: source.invocationId,
        sourceRunId: source.runId,
        sourceTurnId: source.turnId,
        // A row count is a non-negative integer by construction.
        sourceRuntimeEventHighWater: makeNonNegativeIntUnsafe(ledger.rows),
        replay:
          journal === null ? chain.segments.map(({ segment }) => segment) : journalReplay(chain.segments, journal),
        ...(settlementPlan.length === 0 ? {} : { settlementPlan }),
        safetySnapshot: {
          workspaceIdentity: passed.workspaceIdentity,
          backgroundOperationsSettled: true,
          availableToolNames: passed.availableToolNames,
          ...(passed.workspaceCheckpoint === null ? {} : { workspaceCheckpoint: passed.workspaceCheckpoint }),
          ...(facts.toolRecoveryModes === undefined ? {} : { toolRecoveryModes: sortedModes(facts.toolRecoveryModes) }),
          ...(facts.toolCatalog === undefined || Object.keys(facts.toolCatalog).length === 0
            ? {}
            : { toolCatalog: sortedModes(facts.toolCatalog) }),
          ...(probeVerdicts.length === 0 ? {} : { probeVerdicts }),
        },
      }
    }),
    E.match(
      (findings): OutlinedPlan => makeParkedPlan(findings, boundary, allWarnings, open),
      (continuation): OutlinedPlan => makeContinuePlan(continuation, allWarnings, open, digest),
    ),
  )
}

const sortedModes = <V>(modes: Readonly<Record<string, V>>): Readonly<Record<string, V>> =>
  Object.fromEntries(Object.entries(modes).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))

const probeVerdictsOf = (journal: JournalView | null) =>
  (journal?.decided.decisions ?? []).flatMap((d) =>
    d.probe === null || d.probe === undefined ? [] : [{ operationId: d.operation.operationId, verdict: d.probe }],
  )

const openToolOperations = (journal: JournalView): ReadonlyArray<OpenToolOperation> =>
  journal.decided.decisions.map((d) => ({ ...describeOperation(d), action: d.action, reason: d.reason }))

// The journal's warnings: calls that never started and will run, questions asked again, probe verdicts.
const journalWarnings = (view: GateView, journal: JournalView): ReadonlyArray<PlanDiagnostic> => [
  ...journal.decided.decisions
    .filter((d) => d.operation.status === 'definitely_not_dispatched' && d.action === 'reissue')
    .map((d) =>
      makeWarning('tool_not_dispatched', { operationId: d.operation.operationId, toolCallId: d.operation.toolCallId }),
    ),
  ...reaskedPermissions(view).map((requestId) => makeWarning('permission_reasked', { requestId })),
  ...probeVerdictsOf(journal).map((v) => makeWarning('reconcile_verdict', v)),
]

/**
 * Plans a continuation of already-loaded data: early exits 6–9, the ancestor walk and gates 0–13.
 * @category constructors
 */
export const planContinuation = (input: PlanningInput, ids: ContinuationIds): ContinuationPlan => {
  const rowsOf = new Map<string, ReadonlyArray<RuntimeEvent>>()
  const outlined = planFolded(foldedInput(input, rowsOf), ids)
  return materializePlan(outlined, (runId) => rowsOf.get(runId) ?? [])
}
