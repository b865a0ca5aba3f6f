/**
 * One run's share of the tool journal (Phase 2), gathered in a single pass over its committed rows:
 * whether row 1 carries the protocol marker, its calls, dispatch rows and responses, and the
 * settlement plan its continuation-start row lists. The chain projection (`projectChain.ts`) joins
 * the segments of a chain, oldest first; a segment knows nothing of the others.
 *
 * Only what the chain projection and the planner read is kept of a row: ids, names, digests, modes,
 * attempts and positions — never a result. A call's `args` are kept only while it has no response in
 * its own run, because the planner reads an open call's args to compute a mode that depends on them
 * and the executor reissues from them.
 */
import {
  type RecoveryMode,
  type RuntimeEvent,
  type SettlementEntry,
  type SettlementOrigin,
  type Sha256Digest,
  argsDigest,
  carriesJournalKey,
  isFunctionCallEvent,
  isFunctionResponseEvent,
  operationIdOf,
} from '@maka/events'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * A committed `function_call` row of a segment.
 * @category models
 */
export interface JournalCall {
  /** The positional id `<runId>-o<row>`: what the call's `refs.operationId` must say. */
  readonly operationId: string
  /** The call row's `refs.operationId` as written (undefined when absent). */
  readonly writtenOperationId: string | undefined
  readonly toolCallId: string
  readonly toolName: string
  /** 1-based row of the call in its run. */
  readonly row: number
  readonly eventId: string
  /** Of a protocol segment's call only: what a dispatch of it must name. */
  readonly argsDigest: Sha256Digest | null
}

/**
 * A committed dispatch row (T1).
 * @category models
 */
export interface JournalDispatch {
  readonly operationId: string
  readonly toolCallId: string
  readonly toolName: string
  readonly argsDigest: string
  readonly recoveryMode: RecoveryMode
  readonly attempt: number
  readonly reconcileBasis: string | undefined
  readonly priorVerdict: 'not_applied' | undefined
  readonly row: number
  readonly eventId: string
  /** True when an `author:agent` row of the same run stands before it. */
  readonly afterModelRow: boolean
}

/**
 * A committed `function_response` row.
 * @category models
 */
export interface JournalResponse {
  /** `actions.toolOutcome.operationId`; undefined for a response without an outcome. */
  readonly operationId: string | undefined
  readonly toolCallId: string
  readonly toolName: string
  readonly isError: boolean
  readonly settlementOrigin: SettlementOrigin | undefined
  readonly attempt: number | undefined
  readonly row: number
  readonly eventId: string
  readonly afterModelRow: boolean
}

/**
 * One run's journal facts, up to the rows folded.
 * @category models
 */
export interface SegmentJournal {
  readonly runId: string
  /** Row 1 carries the protocol marker. */
  readonly protocol: boolean
  /** A key of the journal appears in the segment (a marker, a dispatch, an outcome, an operation id…). */
  readonly hasJournalKey: boolean
  /** A marker stands on a row other than row 1 (its event id), or null. */
  readonly misplacedMarker: string | null
  /** Every call of a protocol segment; of a legacy segment, only the calls without a response. */
  readonly calls: ReadonlyArray<JournalCall>
  readonly dispatches: ReadonlyArray<JournalDispatch>
  readonly responses: ReadonlyArray<JournalResponse>
  /** The settlement plan row 1 lists (a continuation-start row), or none. */
  readonly settlementPlan: ReadonlyArray<SettlementEntry>
  /** `args` of each call (by operation id) that has no response in this segment. */
  readonly openArgs: ReadonlyMap<string, unknown>
  /** Rows folded. */
  readonly rows: number
  /** Committed (non-partial) rows, and how many of them are calls or responses: a replay's size. */
  readonly committedRows: number
  readonly toolRows: number
}

/**
 * A segment fold in progress: committed rows in, one at a time, in ledger order.
 * @category models
 */
export interface SegmentJournalFolder {
  readonly add: (event: RuntimeEvent) => void
  readonly finish: () => SegmentJournal
}

// -------------------------------------------------------------------------------------
// internals
// -------------------------------------------------------------------------------------

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Starts folding the journal of run `runId`. Partial rows are streaming snapshots and prove
 * nothing; they are counted as rows (a call's id is its row number) and otherwise skipped.
 * @category constructors
 */
export const makeSegmentJournalFolder = (runId: string): SegmentJournalFolder => {
  let rows = 0
  let committedRows = 0
  let toolRows = 0
  let protocol = false
  let hasJournalKey = false
  let misplacedMarker: string | null = null
  let afterModelRow = false
  let settlementPlan: ReadonlyArray<SettlementEntry> = []
  const calls: Array<JournalCall> = []
  const dispatches: Array<JournalDispatch> = []
  const responses: Array<JournalResponse> = []
  // Open calls of this run by tool call id → operation id, and their args by operation id.
  const openByCallId = new Map<string, string>()
  const openArgs = new Map<string, unknown>()
  // A legacy run keeps only its open calls: its answered ones are Phase 0's to judge, and a long
  // legacy ledger must cost what it cost in Phase 1.
  const openLegacyCalls = new Map<string, JournalCall>()

  const add = (event: RuntimeEvent): void => {
    rows += 1
    const row = rows
    if (carriesJournalKey(event)) hasJournalKey = true
    const marker = event.actions?.runtimeProtocol
    if (marker !== undefined) {
      if (row === 1) protocol = true
      else misplacedMarker ??= event.id
    }
    if (event.partial) return
    committedRows += 1
    if (isFunctionCallEvent(event) || isFunctionResponseEvent(event)) toolRows += 1
    if (row === 1 && event.actions?.settlementPlan !== undefined) settlementPlan = event.actions.settlementPlan
    const dispatch = event.actions?.toolDispatch
    if (dispatch !== undefined) {
      dispatches.push({
        operationId: dispatch.operationId,
        toolCallId: dispatch.toolCallId,
        toolName: dispatch.toolName,
        argsDigest: dispatch.argsDigest,
        recoveryMode: dispatch.recoveryMode,
        attempt: dispatch.attempt,
        reconcileBasis: dispatch.reconcileBasis,
        priorVerdict: dispatch.priorVerdict,
        row,
        eventId: event.id,
        afterModelRow,
      })
    } else if (isFunctionCallEvent(event)) {
      const { id, name, args } = event.content
      const operationId = operationIdOf(runId, row)
      const call: JournalCall = {
        operationId,
        writtenOperationId: event.refs?.operationId,
        toolCallId: id,
        toolName: name,
        row,
        eventId: event.id,
        argsDigest: protocol ? argsDigest(args) : null,
      }
      if (protocol) calls.push(call)
      if (!openByCallId.has(id)) {
        if (!protocol) openLegacyCalls.set(id, call)
        openByCallId.set(id, operationId)
        openArgs.set(operationId, args)
      }
    } else if (isFunctionResponseEvent(event)) {
      const { id, name } = event.content
      const outcome = event.actions?.toolOutcome
      if (protocol) {
        responses.push({
          operationId: outcome?.operationId,
          toolCallId: id,
          toolName: name,
          isError: event.content.isError === true,
          settlementOrigin: outcome?.settlementOrigin,
          attempt: outcome?.attempt,
          row,
          eventId: event.id,
          afterModelRow,
        })
      }
      const answered = openByCallId.get(id)
      if (answered !== undefined) {
        openByCallId.delete(id)
        openArgs.delete(answered)
        openLegacyCalls.delete(id)
      }
    }
    if (event.author === 'agent') afterModelRow = true
  }

  return {
    add,
    finish: () => ({
      runId,
      protocol,
      hasJournalKey,
      misplacedMarker,
      calls: protocol ? calls : [...openLegacyCalls.values()],
      dispatches,
      responses,
      settlementPlan,
      openArgs,
      rows,
      committedRows,
      toolRows,
    }),
  }
}

/**
 * Folds an array of committed rows of run `runId`.
 * @category constructors
 */
export const foldSegmentJournal = (runId: string, events: ReadonlyArray<RuntimeEvent>): SegmentJournal => {
  const folder = makeSegmentJournalFolder(runId)
  for (const event of events) folder.add(event)
  return folder.finish()
}
