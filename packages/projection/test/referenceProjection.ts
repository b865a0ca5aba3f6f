/**
 * A reference model for the property test: Phase 0 as it was written before the projector kept its
 * operations in typed arrays — plain objects in a Map, the replay a filter over the array.
 */
import { type RuntimeEvent, isFunctionCallEvent, isFunctionResponseEvent } from '@maka/events'
import {
  type ProjectionDiagnostic,
  type ProjectionOptions,
  type ProjectionRejectionReason,
  type ResumePlan,
  type ToolOperation,
  rejectionReasonOf,
} from '../src/ResumePlan.js'

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

const complete = (op: MutableOperation | undefined): op is MutableOperation =>
  op !== undefined && (op.status === 'succeeded' || op.status === 'failed')

export const referenceProjection = (
  events: ReadonlyArray<RuntimeEvent>,
  options: ProjectionOptions = {},
): ResumePlan => {
  const diagnostics: Array<ProjectionDiagnostic> = []
  const expected = options.expectedRuntimeEventHighWater
  if (expected !== undefined && expected !== events.length) {
    diagnostics.push({
      code: 'runtime_offset_mismatch',
      message: `Expected ${expected} committed events, found ${events.length}.`,
    })
  }
  const acc = events.reduce((a, e) => evolve(a, e, true), {
    operations: new Map<string, MutableOperation>(),
    diagnostics,
  })
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
      return complete(op) && op.callEventId === event.id
    }
    if (isFunctionResponseEvent(event)) {
      const op = acc.operations.get(event.content.id)
      return complete(op) && op.responseEventId === event.id
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
