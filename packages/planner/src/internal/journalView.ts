/**
 * A chain with a tool journal, as the gates read it: the Phase 2 projection of its segments, the
 * decision per open operation, and the replay rule that follows from them — a call is kept when its
 * operation is settled in the chain or is in the plan's settlement plan, and a response is kept with
 * its call. A chain with no marker and no journal key has no view: Phase 0 and Phase 1 rule it,
 * unchanged.
 */
import { type RuntimeEvent, isFunctionCallEvent, isFunctionResponseEvent } from '@maka/events'
import { projectChain } from '@maka/projection'
import type { ChainProjection } from '@maka/projection'
import type { ReplaySegment } from '../ContinuationPlan.js'
import type { HostFacts, OperationFacts } from '../HostFacts.js'
import type { FoldedSegment } from '../walkAncestors.js'
import { type JournalDecisions, decideOperations } from './journalDecision.js'
import type { FoldedLedger, RowMention } from './foldLedger.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * The journal of a walked chain.
 * @category models
 */
export interface JournalView {
  readonly projection: ChainProjection
  readonly decided: JournalDecisions
  /** The operations the settlement plan lists. */
  readonly planned: ReadonlySet<string>
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * The journal view of a chain's segments (oldest first), or null for a chain without a journal.
 * @category constructors
 */
export const makeJournalView = (
  segments: ReadonlyArray<FoldedSegment>,
  host: Pick<HostFacts, 'toolJournal' | 'availableToolNames' | 'toolRecoveryModes'>,
  operationFacts: ReadonlyMap<string, OperationFacts> | undefined,
): JournalView | null => {
  const projection = projectChain(segments.map(({ folded }) => folded.journal))
  if (!projection.journaled) return null
  const decided = decideOperations(projection, host, operationFacts)
  return { projection, decided, planned: new Set(decided.settlementPlan.map((entry) => entry.operationId)) }
}

/**
 * True when a protocol segment's tool row with this operation id belongs to the replay.
 * @category constructors
 */
export const keepsOperation =
  (view: JournalView) =>
  (operationId: string | undefined): boolean =>
    operationId !== undefined && (!view.projection.isOpen(operationId) || view.planned.has(operationId))

// A protocol segment's replay: committed rows, less the tool rows of operations that stay open.
const protocolReplay = (segment: ReplaySegment, folded: FoldedLedger, view: JournalView): ReplaySegment => {
  const keep = keepsOperation(view)
  const journal = folded.journal
  const droppedCalls = journal.calls.filter((call) => !keep(call.writtenOperationId)).length
  const droppedResponses = journal.responses.filter((response) => !keep(response.operationId)).length
  return {
    runId: segment.runId,
    rows: segment.rows,
    count: journal.committedRows - droppedCalls - droppedResponses,
    isReplayed: (event: RuntimeEvent): boolean =>
      !event.partial &&
      (!(isFunctionCallEvent(event) || isFunctionResponseEvent(event)) || keep(event.refs?.operationId)),
  }
}

/**
 * The replay segments of a chain with a journal: a protocol segment's by the journal's rule, a legacy
 * segment's by Phase 0's, as before.
 * @category constructors
 */
export const journalReplay = (
  segments: ReadonlyArray<FoldedSegment>,
  view: JournalView,
): ReadonlyArray<ReplaySegment> =>
  segments.map(({ segment, folded }) => (folded.journal.protocol ? protocolReplay(segment, folded, view) : segment))

/**
 * The first and last model-visible rows of a segment under the journal's replay rule.
 * @category constructors
 */
export const visibleRows = (
  folded: FoldedLedger,
  view: JournalView,
): { readonly firstVisible: RowMention | undefined; readonly lastVisible: RowMention | undefined } => {
  if (!folded.journal.protocol) return { firstVisible: folded.firstVisible, lastVisible: folded.lastVisible }
  const keep = keepsOperation(view)
  return folded.visibleUnder((_toolCallId, operationId) => keep(operationId))
}

/**
 * The tools the replay calls and the open operations need, sorted and unique (gate 11).
 * @category constructors
 */
export const journalToolNames = (segments: ReadonlyArray<FoldedSegment>, view: JournalView): ReadonlyArray<string> => {
  const keep = keepsOperation(view)
  const names = new Set<string>()
  for (const { folded } of segments) {
    if (!folded.journal.protocol) {
      for (const name of folded.calledToolNames) names.add(name)
      continue
    }
    for (const call of folded.journal.calls) if (keep(call.writtenOperationId)) names.add(call.toolName)
  }
  for (const operation of view.projection.openOperations) names.add(operation.toolName)
  return [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
}
