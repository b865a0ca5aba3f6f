/**
 * The Phase 0 model: tool operations, diagnostics and the ResumePlan a committed ledger prefix
 * projects to.
 */
import type { RuntimeEvent } from '@maka/events'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * What the prefix proves about one tool call.
 * @category models
 */
export type ToolOperationStatus = 'succeeded' | 'failed' | 'indeterminate' | 'corruption'

/**
 * One tool call and what became of it, keyed by its tool call id.
 * @category models
 */
export interface ToolOperation {
  readonly toolCallId: string
  readonly toolName: string
  readonly args: unknown
  readonly status: ToolOperationStatus
  /** The event id of the call; null for a response that has no call. */
  readonly callEventId: string | null
  /** The event id of the (first) response; null while none is committed. */
  readonly responseEventId: string | null
  readonly isError: boolean
}

/**
 * Diagnostic codes the projection emits, each mapped to a rejection reason.
 * @category models
 */
export const ProjectionDiagnosticCode = {
  /** An expected high-water was given and differs from the prefix length. */
  runtime_offset_mismatch: 'runtime_offset_mismatch',
  /** A tool call has no committed response. */
  pending_tool_result: 'pending_tool_result',
  /** A response has no earlier call. */
  unmatched_tool_result: 'unmatched_tool_result',
  /** A response's tool name differs from its call's. */
  tool_name_mismatch: 'tool_name_mismatch',
  /** A second call with one id, or a second response. */
  tool_recovery_corruption: 'tool_recovery_corruption',
} as const

/**
 * A projection diagnostic code.
 * @category models
 */
export type ProjectionDiagnosticCode = (typeof ProjectionDiagnosticCode)[keyof typeof ProjectionDiagnosticCode]

/**
 * A fact the projection noticed, with the event or tool call it concerns.
 * @category models
 */
export interface ProjectionDiagnostic {
  readonly code: ProjectionDiagnosticCode
  readonly message: string
  readonly eventId?: string
  readonly toolCallId?: string
}

/**
 * The reasons a Phase 0 projection blocks replay, in their fixed order.
 * @category models
 */
export type ProjectionRejectionReason = 'runtime_offset_mismatch' | 'dangling_tool_state'

/**
 * The Phase 0 answer for a committed prefix.
 * @category models
 */
export interface ResumePlan {
  readonly disposition: 'safe_replay' | 'blocked'
  readonly operations: ReadonlyArray<ToolOperation>
  readonly diagnostics: ReadonlyArray<ProjectionDiagnostic>
  readonly rejectionReasons: ReadonlyArray<ProjectionRejectionReason>
  /** True iff any operation is indeterminate: its side effect must be verified before anything else. */
  readonly requiresVerification: boolean
  /** The number of events projected. */
  readonly sourceRuntimeEventHighWater: number
  /** What a provider may see again. */
  readonly replayRuntimeEvents: ReadonlyArray<RuntimeEvent>
}

/**
 * Options of a projection.
 * @category models
 */
export interface ProjectionOptions {
  /** When given, a prefix of another length is rejected with `runtime_offset_mismatch`. */
  readonly expectedRuntimeEventHighWater?: number
}

/**
 * The rejection reason each diagnostic implies.
 * @category models
 */
export const rejectionReasonOf = (code: ProjectionDiagnosticCode): ProjectionRejectionReason =>
  code === 'runtime_offset_mismatch' ? 'runtime_offset_mismatch' : 'dangling_tool_state'
