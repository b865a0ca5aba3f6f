/**
 * The Phase 2 projection: the journal segments of a continuation chain, oldest first, joined into
 * the status of every tool operation and the corruptions that make the journal untrustworthy. An
 * operation's rows may lie in several runs of the chain (its call in one, a re-dispatch and the
 * settlement in a later continuation), so no segment can judge alone.
 *
 * Only open operations are listed: a settled one needs nothing more, and a long chain must not cost
 * an object per call. Any corruption makes the caller park (`tool_journal_corrupt`), so the replay
 * rule below only has to be right for a journal without one.
 */
import type { RecoveryMode, SettlementAction, SettlementOrigin } from '@maka/events'
import type { JournalCall, JournalDispatch, JournalResponse, SegmentJournal } from './segmentJournal.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * The corruption kinds of the tool journal, each a `detail.kind` of `tool_journal_corruption`.
 * @category models
 */
export type JournalCorruptionKind =
  | 'orphan_dispatch'
  | 'identity_conflict'
  | 'duplicate_call'
  | 'attempt_gap'
  | 'dispatch_after_response'
  | 'duplicate_response'
  | 'orphan_response'
  | 'undispatched_success'
  | 'unplanned_settlement'
  | 'settlement_after_model_row'
  | 'protocol_marker_invalid'
  | 'legacy_dispatch'

/**
 * One corruption: its kind, the run and row that show it, and the operation or call it concerns.
 * @category models
 */
export interface JournalCorruption {
  readonly kind: JournalCorruptionKind
  readonly runId: string
  readonly eventId: string | null
  readonly operationId: string | null
  readonly toolCallId: string | null
}

/**
 * What the chain proves about an operation that has no response.
 * @category models
 */
export type OpenOperationStatus = 'definitely_not_dispatched' | 'dispatched_outcome_unknown' | 'indeterminate'

/**
 * An operation without a response in the chain.
 * @category models
 */
export interface OpenOperation {
  readonly operationId: string
  readonly toolCallId: string
  readonly toolName: string
  /** The run whose ledger holds the call. */
  readonly runId: string
  /** The call's 1-based row in that run. */
  readonly row: number
  readonly callEventId: string
  readonly status: OpenOperationStatus
  /** Dispatches written for it (the last attempt), 0 when none. */
  readonly attempts: number
  /** The mode the last dispatch recorded, null when none. */
  readonly recordedMode: RecoveryMode | null
  /** The last dispatch's pre-image, for a `reconcile` probe. */
  readonly reconcileBasis: string | null
  /** The digest of the call's args (protocol calls), which a reissue must match. */
  readonly argsDigest: string | null
  /** Settlement-plan entries with an automatic action that named it (the adoption budget's count). */
  readonly adoptions: number
  /** The call's args, kept for the decision that depends on them. */
  readonly args: unknown
}

/**
 * The Phase 2 projection of a chain.
 * @category models
 */
export interface ChainProjection {
  /** Some segment carries the marker or a journal key: Phase 2 applies to the chain. */
  readonly journaled: boolean
  readonly openOperations: ReadonlyArray<OpenOperation>
  readonly corruptions: ReadonlyArray<JournalCorruption>
  /** True when the operation has no response in the chain and no corruption. */
  readonly isOpen: (operationId: string) => boolean
  /** How many operations were settled (a response in the chain). */
  readonly settledCount: number
}

// -------------------------------------------------------------------------------------
// internals
// -------------------------------------------------------------------------------------

const AUTOMATIC: ReadonlySet<SettlementAction> = new Set(['reissue', 'settle_applied', 'settle_reattached'])

// The origins a continuation's response may have for an earlier run's operation, by plan action.
const ORIGINS_OF: Readonly<Record<SettlementAction, ReadonlyArray<SettlementOrigin>>> = {
  reissue: ['reissue_t2', 'pre_t1_synthetic'],
  settle_applied: ['reconcile_applied'],
  settle_reattached: ['reattached'],
  adjudicate: ['operator_adjudication'],
}

// The origins a run's own operation may be answered with.
const OWN_ORIGINS: ReadonlySet<SettlementOrigin | undefined> = new Set(['normal_t2', 'pre_t1_synthetic'])

interface Operation {
  readonly call: JournalCall
  readonly segment: number
  readonly protocol: boolean
  readonly args: unknown
  attempts: number
  lastDispatch: JournalDispatch | null
  responded: boolean
  corrupt: boolean
  adoptions: number
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Projects the journal segments of a chain, oldest first (the source last). Same segments, deep-equal
 * result (`isOpen` aside).
 * @category constructors
 */
export const projectChain = (segments: ReadonlyArray<SegmentJournal>): ChainProjection => {
  const journaled = segments.some((s) => s.protocol || s.hasJournalKey)
  const operations = new Map<string, Operation>()
  const corruptions: Array<JournalCorruption> = []
  let settledCount = 0

  const corrupt = (
    kind: JournalCorruptionKind,
    runId: string,
    eventId: string | null,
    operation: { readonly operationId?: string | undefined; readonly toolCallId?: string | undefined },
    op?: Operation,
  ): void => {
    if (op !== undefined) op.corrupt = true
    corruptions.push({
      kind,
      runId,
      eventId,
      operationId: operation.operationId ?? null,
      toolCallId: operation.toolCallId ?? null,
    })
  }

  segments.forEach((segment, index) => {
    const { runId } = segment
    if (!segment.protocol) {
      if (segment.hasJournalKey || segment.misplacedMarker !== null) {
        corrupt('protocol_marker_invalid', runId, segment.misplacedMarker, {})
      }
      // A legacy run's open calls are Phase 0's indeterminate operations; its rows carry no journal.
      for (const call of segment.calls) {
        operations.set(call.operationId, {
          call,
          segment: index,
          protocol: false,
          args: segment.openArgs.get(call.operationId),
          attempts: 0,
          lastDispatch: null,
          responded: false,
          corrupt: false,
          adoptions: 0,
        })
      }
      return
    }
    if (segment.misplacedMarker !== null) corrupt('protocol_marker_invalid', runId, segment.misplacedMarker, {})

    // The plan row 1 lists: each entry must name an operation an earlier run left open.
    const planned = new Map<string, SettlementAction>()
    for (const entry of segment.settlementPlan) {
      const op = operations.get(entry.operationId)
      if (op === undefined || op.segment >= index || op.responded || planned.has(entry.operationId)) {
        corrupt('unplanned_settlement', runId, null, entry, op)
        continue
      }
      if (op.call.toolCallId !== entry.toolCallId) corrupt('identity_conflict', runId, null, entry, op)
      planned.set(entry.operationId, entry.action)
      if (AUTOMATIC.has(entry.action)) op.adoptions += 1
    }

    // Calls, dispatches and responses in row order: a dispatch or response is judged against the
    // operation as it stood at that row.
    type Row =
      | { readonly tag: 'call'; readonly value: JournalCall }
      | { readonly tag: 'dispatch'; readonly value: JournalDispatch }
      | { readonly tag: 'response'; readonly value: JournalResponse }
    const rows: Array<Row> = [
      ...segment.calls.map((value): Row => ({ tag: 'call', value })),
      ...segment.dispatches.map((value): Row => ({ tag: 'dispatch', value })),
      ...segment.responses.map((value): Row => ({ tag: 'response', value })),
    ].sort((a, b) => a.value.row - b.value.row)
    const callIds = new Set<string>()

    for (const row of rows) {
      if (row.tag === 'call') {
        const call = row.value
        const op: Operation = {
          call,
          segment: index,
          protocol: true,
          args: segment.openArgs.get(call.operationId),
          attempts: 0,
          lastDispatch: null,
          responded: false,
          corrupt: false,
          adoptions: 0,
        }
        operations.set(call.operationId, op)
        if (call.writtenOperationId !== call.operationId) corrupt('identity_conflict', runId, call.eventId, call, op)
        if (callIds.has(call.toolCallId)) corrupt('duplicate_call', runId, call.eventId, call, op)
        callIds.add(call.toolCallId)
        continue
      }
      if (row.tag === 'dispatch') {
        const dispatch = row.value
        const op = operations.get(dispatch.operationId)
        if (op === undefined) {
          corrupt('orphan_dispatch', runId, dispatch.eventId, dispatch)
          continue
        }
        if (!op.protocol) {
          corrupt('legacy_dispatch', runId, dispatch.eventId, dispatch, op)
          continue
        }
        if (
          dispatch.toolCallId !== op.call.toolCallId ||
          dispatch.toolName !== op.call.toolName ||
          dispatch.argsDigest !== op.call.argsDigest
        ) {
          corrupt('identity_conflict', runId, dispatch.eventId, dispatch, op)
        }
        if (op.responded) corrupt('dispatch_after_response', runId, dispatch.eventId, dispatch, op)
        if (dispatch.attempt !== op.attempts + 1) corrupt('attempt_gap', runId, dispatch.eventId, dispatch, op)
        if (op.segment < index) {
          if (planned.get(dispatch.operationId) !== 'reissue') {
            corrupt('unplanned_settlement', runId, dispatch.eventId, dispatch, op)
          }
          if (dispatch.afterModelRow) corrupt('settlement_after_model_row', runId, dispatch.eventId, dispatch, op)
        }
        op.attempts = Math.max(op.attempts, dispatch.attempt)
        op.lastDispatch = dispatch
        continue
      }
      const response = row.value
      if (response.operationId === undefined) {
        // Every response of a protocol run is its operation's outcome: one without is not of this protocol.
        corrupt('identity_conflict', runId, response.eventId, response)
        continue
      }
      const op = operations.get(response.operationId)
      if (op === undefined) {
        corrupt('orphan_response', runId, response.eventId, response)
        continue
      }
      if (response.toolCallId !== op.call.toolCallId || response.toolName !== op.call.toolName) {
        corrupt('identity_conflict', runId, response.eventId, response, op)
      }
      if (op.responded) {
        corrupt('duplicate_response', runId, response.eventId, response, op)
        continue
      }
      const origin = response.settlementOrigin
      if (origin === 'normal_t2' || origin === 'reissue_t2') {
        if (op.lastDispatch === null || op.lastDispatch.attempt !== response.attempt) {
          corrupt('undispatched_success', runId, response.eventId, response, op)
        }
      }
      if (origin === 'pre_t1_synthetic' && !response.isError) {
        corrupt('undispatched_success', runId, response.eventId, response, op)
      }
      if (op.segment < index) {
        const action = planned.get(response.operationId)
        if (action === undefined || origin === undefined || !ORIGINS_OF[action].includes(origin)) {
          corrupt('unplanned_settlement', runId, response.eventId, response, op)
        }
        if (response.afterModelRow) corrupt('settlement_after_model_row', runId, response.eventId, response, op)
      } else if (!OWN_ORIGINS.has(origin)) {
        corrupt('unplanned_settlement', runId, response.eventId, response, op)
      }
      op.responded = true
      settledCount += 1
    }
  })

  const openOperations: Array<OpenOperation> = []
  const open = new Set<string>()
  for (const op of operations.values()) {
    if (op.responded || op.corrupt) continue
    open.add(op.call.operationId)
    const status: OpenOperationStatus = !op.protocol
      ? 'indeterminate'
      : op.lastDispatch === null
        ? 'definitely_not_dispatched'
        : 'dispatched_outcome_unknown'
    openOperations.push({
      operationId: op.call.operationId,
      toolCallId: op.call.toolCallId,
      toolName: op.call.toolName,
      runId: segments[op.segment]?.runId ?? '',
      row: op.call.row,
      callEventId: op.call.eventId,
      status,
      attempts: op.attempts,
      recordedMode: op.lastDispatch?.recoveryMode ?? null,
      reconcileBasis: op.lastDispatch?.reconcileBasis ?? null,
      argsDigest: op.call.argsDigest,
      adoptions: op.adoptions,
      args: op.args,
    })
  }
  return {
    journaled,
    openOperations,
    corruptions,
    isOpen: (operationId) => open.has(operationId),
    settledCount,
  }
}
