/**
 * Phase 0: a total, deterministic fold of a committed prefix into tool operations and a
 * ResumePlan. It never mutates its input; the accumulator is private to one call, which keeps a
 * million-row projection linear instead of copying maps per row.
 */
import { type RuntimeEvent, isFunctionCallEvent, isFunctionResponseEvent } from '@maka/events'
import {
  type ProjectionDiagnostic,
  type ProjectionOptions,
  type ProjectionRejectionReason,
  type ResumePlan,
  type ToolOperation,
  rejectionReasonOf,
} from './ResumePlan.js'

interface MutableOperation {
  toolCallId: string
  toolName: string
  args: unknown
  status: ToolOperation['status']
  callEventId: string | null
  responseEventId: string | null
  isError: boolean
}

interface Accumulator {
  readonly operations: Map<string, MutableOperation>
  readonly diagnostics: Array<ProjectionDiagnostic>
}

const evolve = (acc: Accumulator, event: RuntimeEvent, retainArgs: boolean): Accumulator => {
  // Partial rows are streaming snapshots: they never prove a call happened or ended.
  if (event.partial) return acc
  if (isFunctionCallEvent(event)) {
    const { id, name, args } = event.content
    const existing = acc.operations.get(id)
    if (existing === undefined) {
      acc.operations.set(id, {
        toolCallId: id,
        toolName: name,
        args: retainArgs ? args : undefined,
        status: 'indeterminate',
        callEventId: event.id,
        responseEventId: null,
        isError: false,
      })
    } else {
      existing.status = 'corruption'
      acc.diagnostics.push({
        code: 'tool_recovery_corruption',
        message: `Tool call ${id} was recorded more than once.`,
        eventId: event.id,
        toolCallId: id,
      })
    }
    return acc
  }
  if (isFunctionResponseEvent(event)) {
    const { id, name } = event.content
    const isError = event.content.isError === true
    const existing = acc.operations.get(id)
    if (existing === undefined) {
      acc.operations.set(id, {
        toolCallId: id,
        toolName: name,
        args: undefined,
        status: 'corruption',
        callEventId: null,
        responseEventId: event.id,
        isError,
      })
      acc.diagnostics.push({
        code: 'unmatched_tool_result',
        message: `A result for tool call ${id} has no earlier call.`,
        eventId: event.id,
        toolCallId: id,
      })
    } else if (existing.responseEventId !== null) {
      existing.status = 'corruption'
      acc.diagnostics.push({
        code: 'tool_recovery_corruption',
        message: `Tool call ${id} has more than one result.`,
        eventId: event.id,
        toolCallId: id,
      })
    } else if (existing.toolName !== name) {
      existing.status = 'corruption'
      existing.responseEventId = event.id
      existing.isError = isError
      acc.diagnostics.push({
        code: 'tool_name_mismatch',
        message: `The result for tool call ${id} names another tool than its call.`,
        eventId: event.id,
        toolCallId: id,
      })
    } else {
      existing.responseEventId = event.id
      existing.isError = isError
      if (existing.status === 'indeterminate') existing.status = isError ? 'failed' : 'succeeded'
    }
  }
  return acc
}

const isComplete = (op: MutableOperation): boolean => op.status === 'succeeded' || op.status === 'failed'

// Built outside the projector so that the predicate's closure holds the incomplete ids alone: a
// closure keeps its whole scope chain, and the projector's holds every operation.
const replayPredicate =
  (incomplete: ReadonlySet<string>) =>
  (event: RuntimeEvent): boolean => {
    if (event.partial) return false
    if (isFunctionCallEvent(event) || isFunctionResponseEvent(event)) return !incomplete.has(event.content.id)
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
  const retainArgs = projectorOptions.retainArgs !== false
  const acc: Accumulator = { operations: new Map<string, MutableOperation>(), diagnostics: [] }
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
      evolve(acc, event, retainArgs)
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
      diagnostics.push(...acc.diagnostics)
      const operations: Array<ToolOperation> = []
      let complete = 0
      for (const op of acc.operations.values()) {
        operations.push({ ...op })
        if (isComplete(op)) complete += 1
        if (op.status === 'indeterminate') {
          diagnostics.push({
            code: 'pending_tool_result',
            message: `Tool call ${op.toolCallId} (${op.toolName}) has no recorded result; its effect is unknown.`,
            ...(op.callEventId === null ? {} : { eventId: op.callEventId }),
            toolCallId: op.toolCallId,
          })
        }
      }
      const reasons = new Set<ProjectionRejectionReason>(diagnostics.map((d) => rejectionReasonOf(d.code)))
      const rejectionReasons = (['runtime_offset_mismatch', 'dangling_tool_state'] as const).filter((r) =>
        reasons.has(r),
      )
      // A complete operation has exactly one call row and one response row (a second of either, or a
      // name mismatch, is corruption), and the replay keeps both.
      const replayCount = nonPartialRows - toolRows + 2 * complete
      // The operations the replay leaves out. A complete operation has exactly one call row and one
      // response row among the projected rows, so for those rows the tool call id alone decides, and
      // the predicate holds no operation (nor any of the rows' content).
      const incomplete = new Set<string>()
      for (const op of acc.operations.values()) if (!isComplete(op)) incomplete.add(op.toolCallId)
      const isReplayed = replayPredicate(incomplete)
      return {
        disposition: rejectionReasons.length === 0 ? 'safe_replay' : 'blocked',
        operations,
        diagnostics,
        rejectionReasons,
        requiresVerification: operations.some((op) => op.status === 'indeterminate'),
        sourceRuntimeEventHighWater: rows,
        isReplayed,
        replayCount,
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
  const { isReplayed, replayCount: _replayCount, ...projected } = projector.finish(options)
  return { ...projected, replayRuntimeEvents: events.filter(isReplayed) }
}
