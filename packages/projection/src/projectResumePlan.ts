/**
 * Phase 0: a total, deterministic fold of a committed prefix into tool operations and a
 * ResumePlan. It never mutates its input; the accumulator is private to one call, which keeps a
 * million-row projection linear instead of copying maps per row.
 */
import {
  type RuntimeEvent,
  type StringIndex,
  isFunctionCallEvent,
  isFunctionResponseEvent,
  makeStringIndex,
} from '@maka/events'
import {
  type ProjectionDiagnostic,
  type ProjectionOptions,
  type ProjectionRejectionReason,
  type ResumePlan,
  type ToolOperation,
  rejectionReasonOf,
} from './ResumePlan.js'

// The operations, one per tool call id in the order first seen, kept in typed arrays: a fold over a
// long ledger holds one per call to its end, and as objects they kept V8's young generation growing
// (decision 99). Operation k's call id is `callIds.get(k)`; event ids are numbers into `eventIds`.
const STATUSES: ReadonlyArray<ToolOperation['status']> = ['indeterminate', 'succeeded', 'failed', 'corruption']
const INDETERMINATE = 0
const SUCCEEDED = 1
const FAILED = 2
const CORRUPTION = 3
const NONE = -1

interface OperationTable {
  readonly callIds: StringIndex
  /**
   * The call and response row ids, numbered — only when the operations are listed. Otherwise only
   * the ids of calls still waiting for a result are kept (`openCalls`): the one id a verdict names.
   */
  readonly eventIds: StringIndex | null
  readonly openCalls: Map<number, string> | null
  readonly names: StringIndex
  nameOf: Uint32Array
  status: Uint8Array
  isError: Uint8Array
  callEvent: Int32Array
  responseEvent: Int32Array
  /** Each call's `args`, only when they are kept. */
  readonly args: Array<unknown> | null
}

const makeTable = (retainArgs: boolean, listOperations: boolean): OperationTable => ({
  callIds: makeStringIndex(),
  eventIds: listOperations ? makeStringIndex() : null,
  openCalls: listOperations ? null : new Map(),
  names: makeStringIndex(),
  nameOf: new Uint32Array(256),
  status: new Uint8Array(256),
  isError: new Uint8Array(256),
  callEvent: new Int32Array(256),
  responseEvent: new Int32Array(256),
  args: retainArgs ? [] : null,
})

const larger = <T extends Uint8Array | Uint32Array | Int32Array>(array: T, make: (n: number) => T): T => {
  const grown = make(array.length * 2)
  grown.set(array)
  return grown
}

// A new operation for a call id never seen.
const addOperation = (t: OperationTable, id: string, name: string, status: number): number => {
  const k = t.callIds.intern(id)
  if (k >= t.status.length) {
    t.nameOf = larger(t.nameOf, (n) => new Uint32Array(n))
    t.status = larger(t.status, (n) => new Uint8Array(n))
    t.isError = larger(t.isError, (n) => new Uint8Array(n))
    t.callEvent = larger(t.callEvent, (n) => new Int32Array(n))
    t.responseEvent = larger(t.responseEvent, (n) => new Int32Array(n))
  }
  t.nameOf[k] = t.names.intern(name)
  t.status[k] = status
  t.isError[k] = 0
  t.callEvent[k] = NONE
  t.responseEvent[k] = NONE
  t.args?.push(undefined)
  return k
}

// Without the id list, a row is only known to be there (RECORDED).
const RECORDED = -2
const recordEvent = (t: OperationTable, id: string): number => t.eventIds?.intern(id) ?? RECORDED
const eventIdOf = (t: OperationTable, n: number): string | null =>
  n === NONE || t.eventIds === null ? null : t.eventIds.get(n)
// The call row's id of an operation still waiting for its result.
const openCallIdOf = (t: OperationTable, k: number): string | null =>
  t.openCalls === null ? eventIdOf(t, t.callEvent[k] ?? NONE) : (t.openCalls.get(k) ?? null)

const isCompleteAt = (t: OperationTable, k: number): boolean => t.status[k] === SUCCEEDED || t.status[k] === FAILED

const evolve = (t: OperationTable, diagnostics: Array<ProjectionDiagnostic>, event: RuntimeEvent): void => {
  // Partial rows are streaming snapshots: they never prove a call happened or ended.
  if (event.partial) return
  if (isFunctionCallEvent(event)) {
    const { id, name, args } = event.content
    const existing = t.callIds.find(id)
    if (existing === NONE) {
      const k = addOperation(t, id, name, INDETERMINATE)
      t.callEvent[k] = recordEvent(t, event.id)
      t.openCalls?.set(k, event.id)
      if (t.args !== null) t.args[k] = args
    } else {
      t.status[existing] = CORRUPTION
      t.openCalls?.delete(existing)
      diagnostics.push({
        code: 'tool_recovery_corruption',
        message: `Tool call ${id} was recorded more than once.`,
        eventId: event.id,
        toolCallId: id,
      })
    }
    return
  }
  if (isFunctionResponseEvent(event)) {
    const { id, name } = event.content
    const isError = event.content.isError === true ? 1 : 0
    const k = t.callIds.find(id)
    if (k === NONE) {
      const added = addOperation(t, id, name, CORRUPTION)
      t.responseEvent[added] = recordEvent(t, event.id)
      t.isError[added] = isError
      diagnostics.push({
        code: 'unmatched_tool_result',
        message: `A result for tool call ${id} has no earlier call.`,
        eventId: event.id,
        toolCallId: id,
      })
    } else if (t.responseEvent[k] !== NONE) {
      t.status[k] = CORRUPTION
      diagnostics.push({
        code: 'tool_recovery_corruption',
        message: `Tool call ${id} has more than one result.`,
        eventId: event.id,
        toolCallId: id,
      })
    } else if (t.names.get(t.nameOf[k] ?? 0) !== name) {
      t.status[k] = CORRUPTION
      t.responseEvent[k] = recordEvent(t, event.id)
      t.openCalls?.delete(k)
      t.isError[k] = isError
      diagnostics.push({
        code: 'tool_name_mismatch',
        message: `The result for tool call ${id} names another tool than its call.`,
        eventId: event.id,
        toolCallId: id,
      })
    } else {
      t.responseEvent[k] = recordEvent(t, event.id)
      t.openCalls?.delete(k)
      t.isError[k] = isError
      if (t.status[k] === INDETERMINATE) t.status[k] = isError === 1 ? FAILED : SUCCEEDED
    }
  }
}

const operationAt = (t: OperationTable, k: number): ToolOperation => ({
  toolCallId: t.callIds.get(k),
  toolName: t.names.get(t.nameOf[k] ?? 0),
  args: t.args?.[k],
  status: STATUSES[t.status[k] ?? CORRUPTION] ?? 'corruption',
  callEventId: eventIdOf(t, t.callEvent[k] ?? NONE),
  responseEventId: eventIdOf(t, t.responseEvent[k] ?? NONE),
  isError: t.isError[k] === 1,
})

// A complete operation has exactly one call row and one response row among the projected rows, so
// for those rows the call id alone decides. Built outside the projector, so that the predicate holds
// the operation table only (a closure keeps its whole scope chain).
const replayPredicate =
  (isCompleteCall: (toolCallId: string) => boolean) =>
  (event: RuntimeEvent): boolean => {
    if (event.partial) return false
    if (isFunctionCallEvent(event) || isFunctionResponseEvent(event)) return isCompleteCall(event.content.id)
    return true
  }

/**
 * Phase 0 of a prefix without its replay array: which rows the replay keeps is a predicate, so a
 * caller that streams the rows (and streams them again to print them) never holds the prefix.
 * @category models
 */
export interface ProjectedPrefix extends Omit<ResumePlan, 'replayRuntimeEvents'> {
  /** True when `event`, one of the projected rows, belongs to the replay (only those rows may be asked). */
  readonly isReplayed: (event: RuntimeEvent) => boolean
  /** How many of the projected rows belong to the replay. */
  readonly replayCount: number
  /** True when the call `toolCallId` succeeded or failed: both its rows are in the replay. */
  readonly isCompleteCall: (toolCallId: string) => boolean
  /** The tools the complete calls name, sorted and unique: what the replay calls. */
  readonly completedToolNames: ReadonlyArray<string>
}

/**
 * Options of an incremental projection.
 * @category models
 */
export interface ProjectorOptions {
  /**
   * Keep each call's `args` in its operation (the default). A caller that never reads them (the
   * planner) turns this off, so a long ledger's tool arguments are not held to the end of the fold.
   */
  readonly retainArgs?: boolean
  /**
   * List the operations in `operations` (the default). Off, `operations` is empty and no object per
   * call is made at the end, for a caller that reads only the verdict and the replay.
   */
  readonly listOperations?: boolean
}

/**
 * Phase 0 as an incremental fold: rows in, one at a time, in ledger order; the projection out.
 * @category models
 */
export interface ResumeProjector {
  /** Takes the next committed row. */
  readonly add: (event: RuntimeEvent) => void
  /** Phase 0 of the rows taken so far. */
  readonly finish: (options?: ProjectionOptions) => ProjectedPrefix
}

/**
 * Starts an incremental Phase 0 projection. Same rows, same result as {@link projectResumePlan}.
 * @category constructors
 */
export const makeResumeProjector = (projectorOptions: ProjectorOptions = {}): ResumeProjector => {
  const listOperations = projectorOptions.listOperations !== false
  const table = makeTable(projectorOptions.retainArgs !== false, listOperations)
  const foldDiagnostics: Array<ProjectionDiagnostic> = []
  let rows = 0
  // Rows the replay may keep: the non-partial ones, less the tool rows of incomplete operations.
  let nonPartialRows = 0
  let toolRows = 0
  return {
    add: (event) => {
      rows += 1
      if (event.partial) return
      nonPartialRows += 1
      if (isFunctionCallEvent(event) || isFunctionResponseEvent(event)) toolRows += 1
      evolve(table, foldDiagnostics, event)
    },
    finish: (options = {}) => {
      const diagnostics: Array<ProjectionDiagnostic> = []
      const expected = options.expectedRuntimeEventHighWater
      if (expected !== undefined && expected !== rows) {
        diagnostics.push({
          code: 'runtime_offset_mismatch',
          message: `Expected ${expected} committed events, found ${rows}.`,
        })
      }
      diagnostics.push(...foldDiagnostics)
      const operations: Array<ToolOperation> = []
      const completedNames = new Set<string>()
      let complete = 0
      let indeterminate = 0
      for (let k = 0; k < table.callIds.size(); k += 1) {
        if (listOperations) operations.push(operationAt(table, k))
        if (isCompleteAt(table, k)) {
          complete += 1
          completedNames.add(table.names.get(table.nameOf[k] ?? 0))
        }
        if (table.status[k] === INDETERMINATE) {
          indeterminate += 1
          const callEventId = openCallIdOf(table, k)
          diagnostics.push({
            code: 'pending_tool_result',
            message: `Tool call ${table.callIds.get(k)} (${table.names.get(table.nameOf[k] ?? 0)}) has no recorded result; its effect is unknown.`,
            ...(callEventId === null ? {} : { eventId: callEventId }),
            toolCallId: table.callIds.get(k),
          })
        }
      }
      const reasons = new Set<ProjectionRejectionReason>(diagnostics.map((d) => rejectionReasonOf(d.code)))
      const rejectionReasons = (['runtime_offset_mismatch', 'dangling_tool_state'] as const).filter((r) =>
        reasons.has(r),
      )
      const isCompleteCall = (toolCallId: string): boolean => {
        const k = table.callIds.find(toolCallId)
        return k !== NONE && isCompleteAt(table, k)
      }
      return {
        disposition: rejectionReasons.length === 0 ? 'safe_replay' : 'blocked',
        operations,
        diagnostics,
        rejectionReasons,
        requiresVerification: indeterminate > 0,
        sourceRuntimeEventHighWater: rows,
        isReplayed: replayPredicate(isCompleteCall),
        // A complete operation has exactly one call row and one response row, and the replay keeps both.
        replayCount: nonPartialRows - toolRows + 2 * complete,
        isCompleteCall,
        completedToolNames: [...completedNames].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
      }
    },
  }
}

/**
 * Projects a committed prefix into a ResumePlan. Same input, deep-equal output.
 * @category constructors
 */
export const projectResumePlan = (events: ReadonlyArray<RuntimeEvent>, options: ProjectionOptions = {}): ResumePlan => {
  const projector = makeResumeProjector()
  for (const event of events) projector.add(event)
  const { disposition, operations, diagnostics, rejectionReasons, requiresVerification, isReplayed } =
    projector.finish(options)
  return {
    disposition,
    operations,
    diagnostics,
    rejectionReasons,
    requiresVerification,
    sourceRuntimeEventHighWater: events.length,
    replayRuntimeEvents: events.filter(isReplayed),
  }
}
