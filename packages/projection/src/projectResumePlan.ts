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

const evolve = (acc: Accumulator, event: RuntimeEvent): Accumulator => {
  // Partial rows are streaming snapshots: they never prove a call happened or ended.
  if (event.partial) return acc
  if (isFunctionCallEvent(event)) {
    const { id, name, args } = event.content
    const existing = acc.operations.get(id)
    if (existing === undefined) {
      acc.operations.set(id, {
        toolCallId: id,
        toolName: name,
        args,
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

const isComplete = (op: MutableOperation | undefined): boolean =>
  op !== undefined && (op.status === 'succeeded' || op.status === 'failed')

/**
 * Projects a committed prefix into a ResumePlan. Same input, deep-equal output.
 * @category constructors
 */
export const projectResumePlan = (events: ReadonlyArray<RuntimeEvent>, options: ProjectionOptions = {}): ResumePlan => {
  const diagnostics: Array<ProjectionDiagnostic> = []
  const expected = options.expectedRuntimeEventHighWater
  if (expected !== undefined && expected !== events.length) {
    diagnostics.push({
      code: 'runtime_offset_mismatch',
      message: `Expected ${expected} committed events, found ${events.length}.`,
    })
  }
  const acc = events.reduce(evolve, { operations: new Map<string, MutableOperation>(), diagnostics })
  const operations: Array<ToolOperation> = []
  for (const op of acc.operations.values()) {
    operations.push({ ...op })
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
  const rejectionReasons = (['runtime_offset_mismatch', 'dangling_tool_state'] as const).filter((r) => reasons.has(r))
  const replayRuntimeEvents = events.filter((event) => {
    if (event.partial) return false
    if (isFunctionCallEvent(event)) {
      const op = acc.operations.get(event.content.id)
      return isComplete(op) && op?.callEventId === event.id
    }
    if (isFunctionResponseEvent(event)) {
      const op = acc.operations.get(event.content.id)
      return isComplete(op) && op?.responseEventId === event.id
    }
    return true
  })
  return {
    disposition: rejectionReasons.length === 0 ? 'safe_replay' : 'blocked',
    operations,
    diagnostics,
    rejectionReasons,
    requiresVerification: operations.some((op) => op.status === 'indeterminate'),
    sourceRuntimeEventHighWater: events.length,
    replayRuntimeEvents,
  }
}
