/**
 * What the gates read of one ledger, gathered in a single pass over its rows. The planner never
 * needs the rows themselves: a gate asks whether every permission was decided, how many terminal
 * facts there are, which row first carries another run's ids, which tools the replay calls, and
 * which replayed rows open and close the model-visible history. All of that is small, so a ledger
 * can be folded as it streams off the disk and forgotten row by row; the replay itself is a
 * predicate over the rows ({@link FoldedLedger.projection}), applied again by whoever prints or sends
 * the history. Folding an array of events and folding the same rows as they stream give the same
 * value.
 */
import {
  type AgentRun,
  type RuntimeEvent,
  type TerminalEventStatus,
  isFunctionCallEvent,
  type RecordedToolSource,
  recordedToolSourceOf,
  isFunctionResponseEvent,
  isModelVisible,
  isTerminalEvent,
} from '@maka/events'
import {
  type ProjectedPrefix,
  type ProjectionOptions,
  type SegmentJournal,
  makeResumeProjector,
  makeSegmentJournalFolder,
} from '@maka/projection'
import { isRowOfRun } from './ledgerChecks.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * A row named in a gate's detail: its role and id.
 * @category models
 */
export interface RowMention {
  readonly role: RuntimeEvent['role']
  readonly eventId: string
}

/**
 * One ledger's rows, folded: the facts every gate, early exit 7 and early exit 8 read.
 * @category models
 */
export interface FoldedLedger {
  /** Every row folded, the ones past {@link LedgerFoldOptions.limit} included. */
  readonly rows: number
  /** The first row and whether every row is a terminal fact (early exit 7's never-started run). */
  readonly firstRow: RuntimeEvent | undefined
  readonly onlyTerminalRows: boolean
  /** The rest covers the prefix only: the first `limit` rows. */
  readonly prefixRows: number
  /**
   * Phase 0 of the prefix, without its operations (nothing the gates read, and one per tool call);
   * its `isReplayed` is the replay.
   */
  readonly projection: Omit<ProjectedPrefix, 'operations'>
  /** Permission requests without a later decision: request id → the request row's id. */
  readonly openPermissions: ReadonlyMap<string, string>
  /** The tool call id each open permission request names, when it names one. */
  readonly openPermissionCalls: ReadonlyMap<string, string>
  /** The prefix's share of the tool journal (Phase 2). */
  readonly journal: SegmentJournal
  /**
   * The replay's first and last model-visible rows when a tool row is kept by `keep` instead of by
   * Phase 0 (a chain with a journal: a call is kept when its operation is settled in the chain or
   * will be). `keep` is asked with the row's tool call id and operation id.
   */
  readonly visibleUnder: (keep: (toolCallId: string, operationId: string | undefined) => boolean) => {
    readonly firstVisible: RowMention | undefined
    readonly lastVisible: RowMention | undefined
  }
  /** Rows whose session, invocation, run or turn id is not the header's (gate 3). */
  readonly identityMismatches: {
    readonly count: number
    readonly rows: ReadonlyArray<{
      readonly line: number
      readonly eventId: string
      readonly fields: ReadonlyArray<string>
    }>
  }
  /** Terminal facts (gate 5): how many, and the first few. */
  readonly terminals: {
    readonly count: number
    readonly listed: ReadonlyArray<{ readonly eventId: string; readonly status: TerminalEventStatus }>
  }
  /** The first row that is not the header's session and run (early exit 8), with its 1-based line. */
  readonly foreignRow: { readonly line: number; readonly eventId: string } | null
  /** Tools named by the replay's function calls, sorted and unique (gate 11). */
  readonly calledToolNames: ReadonlyArray<string>
  /** Each distinct source a prefix `function_call` row recorded for its tool (MCP tools), in row order. */
  readonly recordedToolSources: ReadonlyArray<{ readonly toolName: string } & RecordedToolSource>
  /** The replay's first and last model-visible rows (gates 12 and 13). */
  readonly firstVisible: RowMention | undefined
  readonly lastVisible: RowMention | undefined
}

/**
 * How a ledger is folded.
 * @category models
 */
export interface LedgerFoldOptions {
  /** Only the first `limit` rows are the prefix the gates judge (an ancestor's pinned high-water). */
  readonly limit?: number
  /** Phase 0's expected high-water, compared with the prefix's row count. */
  readonly projection?: ProjectionOptions
}

/**
 * A fold in progress: rows go in one at a time, in ledger order.
 * @category models
 */
export interface LedgerFolder {
  readonly add: (event: RuntimeEvent) => void
  readonly finish: () => FoldedLedger
}

// -------------------------------------------------------------------------------------
// internals
// -------------------------------------------------------------------------------------

// Detail lists are capped so a huge corrupt ledger cannot blow up a plan.
export const DETAIL_LIMIT = 20

const IDENTITY_FIELDS = ['sessionId', 'invocationId', 'runId', 'turnId'] as const

/** @internal */
export const sortedUnique = (names: Iterable<string>): ReadonlyArray<string> =>
  [...new Set(names)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))

// A model-visible tool row is replayed only if its operation turns out complete, which a later row
// decides; it is kept as a candidate until the fold ends.
interface ToolRowCandidate extends RowMention {
  readonly toolCallId: string
  readonly operationId: string | undefined
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Starts folding the ledger of `header`.
 * @category constructors
 */
export const makeLedgerFolder = (header: AgentRun, options: LedgerFoldOptions = {}): LedgerFolder => {
  const limit = options.limit ?? Number.POSITIVE_INFINITY
  const projector = makeResumeProjector({ retainArgs: false, listOperations: false })
  const journal = makeSegmentJournalFolder(header.runId)
  const openPermissions = new Map<string, string>()
  const openPermissionCalls = new Map<string, string>()
  const mismatchRows: Array<{ line: number; eventId: string; fields: ReadonlyArray<string> }> = []
  const terminals: Array<{ eventId: string; status: TerminalEventStatus }> = []
  let rows = 0
  let prefixRows = 0
  let firstRow: RuntimeEvent | undefined
  let onlyTerminalRows = true
  let mismatchCount = 0
  let terminalCount = 0
  let foreignRow: { line: number; eventId: string } | null = null
  // The first replayed visible row is the first unconditional one, unless a tool row before it is
  // replayed; the last is the last unconditional one, unless a tool row after it is.
  let firstPlain: RowMention | undefined
  const toolRowsBeforeFirstPlain: Array<ToolRowCandidate> = []
  let lastPlain: RowMention | undefined
  let toolRowsAfterLastPlain: Array<ToolRowCandidate> = []
  const recordedToolSources = new Map<string, { readonly toolName: string } & RecordedToolSource>()

  const addToPrefix = (event: RuntimeEvent, line: number): void => {
    prefixRows += 1
    projector.add(event)
    journal.add(event)
    const fields = IDENTITY_FIELDS.filter((field) => event[field] !== header[field])
    if (fields.length > 0) {
      mismatchCount += 1
      if (mismatchRows.length < DETAIL_LIMIT) mismatchRows.push({ line, eventId: event.id, fields })
    }
    if (foreignRow === null && !isRowOfRun(event, header)) foreignRow = { line, eventId: event.id }
    if (isTerminalEvent(event)) {
      terminalCount += 1
      if (terminals.length < DETAIL_LIMIT) terminals.push({ eventId: event.id, status: event.status })
    }
    if (event.partial) return
    const request = event.actions?.permissionRequest
    if (request !== undefined) {
      openPermissions.set(request.requestId, event.id)
      if (request.toolCallId !== undefined) openPermissionCalls.set(request.requestId, request.toolCallId)
    }
    const decision = event.actions?.permissionDecision
    if (decision !== undefined) {
      openPermissions.delete(decision.requestId)
      openPermissionCalls.delete(decision.requestId)
    }
    if (isFunctionCallEvent(event)) {
      const recorded = recordedToolSourceOf(event)
      const key = recorded === null ? '' : `${event.content.name}\u0000${recorded.server}\u0000${recorded.digest}`
      if (recorded !== null && !recordedToolSources.has(key)) {
        recordedToolSources.set(key, { toolName: event.content.name, ...recorded })
      }
    }
    if (!isModelVisible(event)) return
    // Only what decides the replay is kept of a tool row: not the row, whose content may be large.
    // (Literal objects: an object spread per row made V8 hold tens of MB more at the peak.)
    const candidate: ToolRowCandidate | null =
      isFunctionCallEvent(event) || isFunctionResponseEvent(event)
        ? { role: event.role, eventId: event.id, toolCallId: event.content.id, operationId: event.refs?.operationId }
        : null
    if (candidate !== null) {
      if (firstPlain === undefined) toolRowsBeforeFirstPlain.push(candidate)
      toolRowsAfterLastPlain.push(candidate)
      return
    }
    const mention: RowMention = { role: event.role, eventId: event.id }
    firstPlain ??= mention
    lastPlain = mention
    toolRowsAfterLastPlain = []
  }

  return {
    add: (event) => {
      rows += 1
      if (rows === 1) firstRow = event
      if (!isTerminalEvent(event)) onlyTerminalRows = false
      if (rows <= limit) addToPrefix(event, rows)
    },
    finish: () => {
      const { operations: _none, ...projection } = projector.finish(options.projection)
      // The replay keeps a tool row exactly when its operation is complete (ProjectedPrefix.isReplayed,
      // without holding the row).
      const replayed = (candidate: ToolRowCandidate): boolean => projection.isCompleteCall(candidate.toolCallId)
      const mentionOf = (candidate: ToolRowCandidate | undefined): RowMention | undefined =>
        candidate === undefined ? undefined : { role: candidate.role, eventId: candidate.eventId }
      const visibleBy = (kept: (candidate: ToolRowCandidate) => boolean) => ({
        firstVisible: mentionOf(toolRowsBeforeFirstPlain.find(kept)) ?? firstPlain,
        lastVisible: mentionOf(toolRowsAfterLastPlain.findLast(kept)) ?? lastPlain,
      })
      const phase0 = visibleBy(replayed)
      return {
        rows,
        firstRow,
        onlyTerminalRows: rows > 0 && onlyTerminalRows,
        prefixRows,
        projection,
        openPermissions,
        openPermissionCalls,
        journal: journal.finish(),
        visibleUnder: (keep) => visibleBy((candidate) => keep(candidate.toolCallId, candidate.operationId)),
        identityMismatches: { count: mismatchCount, rows: mismatchRows },
        terminals: { count: terminalCount, listed: terminals },
        foreignRow,
        calledToolNames: projection.completedToolNames,
        recordedToolSources: [...recordedToolSources.values()],
        firstVisible: phase0.firstVisible,
        lastVisible: phase0.lastVisible,
      }
    },
  }
}

/**
 * Folds an array of rows.
 * @category constructors
 */
export const foldEvents = (
  header: AgentRun,
  events: ReadonlyArray<RuntimeEvent>,
  options: LedgerFoldOptions = {},
): FoldedLedger => {
  const folder = makeLedgerFolder(header, options)
  for (const event of events) folder.add(event)
  return folder.finish()
}
