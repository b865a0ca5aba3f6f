/**
 * The Phase 0 failpoints P0–P11: where a process can die during a tool step, which ledger prefix is
 * then committed, and what the projection must decide. Ids are never renumbered.
 */

/**
 * The committed prefixes of the four-event reference ledger
 * `user text → function_call → function_response → failed terminal`.
 * @category models
 */
export const CommittedPrefix = {
  /** Only the user message is committed. */
  before_function_call: 1,
  /** The tool call is committed, its response is not. */
  after_function_call: 2,
  /** The tool call and its response are committed. */
  after_function_response: 3,
  /** Everything up to and including the terminal event is committed. */
  after_terminal_event: 4,
} as const

/**
 * A committed prefix name.
 * @category models
 */
export type CommittedPrefix = keyof typeof CommittedPrefix

/**
 * The decision the projection must reach for a failpoint's prefix.
 * @category models
 */
export interface FailpointDecision {
  readonly disposition: 'safe_replay' | 'blocked'
  readonly operationStatus: 'none' | 'indeterminate' | 'completed'
  readonly rejectionReasons: ReadonlyArray<'dangling_tool_state'>
  readonly callInReplay: boolean
}

/**
 * One failpoint.
 * @category models
 */
export interface Failpoint {
  readonly id: string
  readonly boundary: string
  readonly prefix: CommittedPrefix
  readonly decision: FailpointDecision
}

const beforeCall: FailpointDecision = {
  disposition: 'safe_replay',
  operationStatus: 'none',
  rejectionReasons: [],
  callInReplay: false,
}
const dangling: FailpointDecision = {
  disposition: 'blocked',
  operationStatus: 'indeterminate',
  rejectionReasons: ['dangling_tool_state'],
  callInReplay: false,
}
const completed: FailpointDecision = {
  disposition: 'safe_replay',
  operationStatus: 'completed',
  rejectionReasons: [],
  callInReplay: true,
}

/**
 * The stable failpoint table.
 * @category models
 */
export const FAILPOINTS: ReadonlyArray<Failpoint> = [
  { id: 'P0', boundary: 'before tool preparation', prefix: 'before_function_call', decision: beforeCall },
  {
    id: 'P1',
    boundary: 'function call committed, prepared journal not committed',
    prefix: 'after_function_call',
    decision: dangling,
  },
  {
    id: 'P2',
    boundary: 'prepared journal committed, implementation not started',
    prefix: 'after_function_call',
    decision: dangling,
  },
  { id: 'P3', boundary: 'tool implementation in progress', prefix: 'after_function_call', decision: dangling },
  {
    id: 'P4',
    boundary: 'side effect finished, outcome not committed',
    prefix: 'after_function_call',
    decision: dangling,
  },
  {
    id: 'P5',
    boundary: 'function response committed, outcome journal not committed',
    prefix: 'after_function_response',
    decision: completed,
  },
  {
    id: 'P6',
    boundary: 'outcome committed, result not delivered to the model',
    prefix: 'after_function_response',
    decision: completed,
  },
  {
    id: 'P7',
    boundary: 'result delivered, next provider step not started',
    prefix: 'after_function_response',
    decision: completed,
  },
  { id: 'P8', boundary: 'terminal RuntimeEvent commit', prefix: 'after_function_response', decision: completed },
  { id: 'P9', boundary: 'terminal run-header commit', prefix: 'after_terminal_event', decision: completed },
  { id: 'P10', boundary: 'recovery-decision commit', prefix: 'after_terminal_event', decision: completed },
  { id: 'P11', boundary: 'continuation-run creation', prefix: 'after_terminal_event', decision: completed },
]

// -------------------------------------------------------------------------------------
// the same failpoints in a protocol run (Phase 2)
// -------------------------------------------------------------------------------------

/**
 * The committed prefixes of the protocol reference ledger
 * `user text + marker → function_call → dispatch (T1) → function_response (T2) → failed terminal`.
 * @category models
 */
export const CommittedPrefixT1 = {
  /** Only the user message (with the protocol marker) is committed. */
  before_function_call: 1,
  /** The tool call is committed, its dispatch is not. */
  after_function_call: 2,
  /** The dispatch is committed, the response is not. */
  after_tool_dispatch: 3,
  /** The call, its dispatch and its response are committed. */
  after_function_response: 4,
  /** Everything up to and including the terminal event is committed. */
  after_terminal_event: 5,
} as const

/**
 * A committed prefix name of the protocol reference ledger.
 * @category models
 */
export type CommittedPrefixT1 = keyof typeof CommittedPrefixT1

/**
 * What a plan does with the reference call (or parks with), for one recovery mode.
 * @category models
 */
export type FailpointPlanT1 =
  | { readonly disposition: 'continue'; readonly action: null | 'reissue' | 'settle_applied' }
  | {
      readonly disposition: 'park'
      readonly reason: 'tool_outcome_unknown' | 'reconcile_diverged' | 'reconcile_unreadable'
    }

/**
 * The decision for a protocol failpoint: the projection's status of the reference operation, and the
 * plan per recovery mode — for `reconcile`, per verdict of the probe (`null` where no probe runs,
 * because the call was never dispatched or is already settled). A `reattach` shell plans by its
 * observation instead, which the end-to-end matrix covers.
 * @category models
 */
export interface FailpointDecisionT1 {
  readonly operationStatus: 'none' | 'definitely_not_dispatched' | 'dispatched_outcome_unknown' | 'succeeded'
  readonly plan: {
    readonly replay_safe: FailpointPlanT1
    readonly idempotent: FailpointPlanT1
    readonly reconcile:
      FailpointPlanT1 | Readonly<Record<'applied' | 'not_applied' | 'diverged' | 'unreadable', FailpointPlanT1>>
    readonly never_auto_retry: FailpointPlanT1
  }
}

/**
 * One failpoint of a protocol run: the same id and boundary as in `FAILPOINTS`.
 * @category models
 */
export interface FailpointT1 {
  readonly id: string
  readonly boundary: string
  readonly prefix: CommittedPrefixT1
  readonly decision: FailpointDecisionT1
}

const proceed: FailpointPlanT1 = { disposition: 'continue', action: null }
const reissue: FailpointPlanT1 = { disposition: 'continue', action: 'reissue' }
const noOperation: FailpointDecisionT1 = {
  operationStatus: 'none',
  plan: { replay_safe: proceed, idempotent: proceed, reconcile: proceed, never_auto_retry: proceed },
}
// Never dispatched: the implementation never started, so every mode runs it (again asking permission).
const notDispatched: FailpointDecisionT1 = {
  operationStatus: 'definitely_not_dispatched',
  plan: { replay_safe: reissue, idempotent: reissue, reconcile: reissue, never_auto_retry: reissue },
}
// Dispatched, no outcome: replay-safe and keyed tools run again, a reconcile tool asks its probe,
// and an effect no one can judge waits for a person.
const outcomeUnknown: FailpointDecisionT1 = {
  operationStatus: 'dispatched_outcome_unknown',
  plan: {
    replay_safe: reissue,
    idempotent: reissue,
    reconcile: {
      applied: { disposition: 'continue', action: 'settle_applied' },
      not_applied: reissue,
      diverged: { disposition: 'park', reason: 'reconcile_diverged' },
      unreadable: { disposition: 'park', reason: 'reconcile_unreadable' },
    },
    never_auto_retry: { disposition: 'park', reason: 'tool_outcome_unknown' },
  },
}
const settled: FailpointDecisionT1 = {
  operationStatus: 'succeeded',
  plan: { replay_safe: proceed, idempotent: proceed, reconcile: proceed, never_auto_retry: proceed },
}

const boundaryOf = (id: string): string => {
  const failpoint = FAILPOINTS.find((f) => f.id === id)
  if (failpoint === undefined) throw new Error(`no failpoint ${id}`)
  return failpoint.boundary
}

const rowsT1: ReadonlyArray<Omit<FailpointT1, 'boundary'>> = [
  { id: 'P0', prefix: 'before_function_call', decision: noOperation },
  { id: 'P1', prefix: 'after_function_call', decision: notDispatched },
  { id: 'P2', prefix: 'after_tool_dispatch', decision: outcomeUnknown },
  { id: 'P3', prefix: 'after_tool_dispatch', decision: outcomeUnknown },
  { id: 'P4', prefix: 'after_tool_dispatch', decision: outcomeUnknown },
  { id: 'P5', prefix: 'after_function_response', decision: settled },
  { id: 'P6', prefix: 'after_function_response', decision: settled },
  { id: 'P7', prefix: 'after_function_response', decision: settled },
  { id: 'P8', prefix: 'after_function_response', decision: settled },
  { id: 'P9', prefix: 'after_terminal_event', decision: settled },
  { id: 'P10', prefix: 'after_terminal_event', decision: settled },
  { id: 'P11', prefix: 'after_terminal_event', decision: settled },
]

/**
 * The stable failpoint table of a protocol run: Phase 0's ids and boundaries over the protocol
 * reference ledger. P5 and P6 are one write here (the response is the outcome).
 * @category models
 */
export const FAILPOINTS_T1: ReadonlyArray<FailpointT1> = rowsT1.map((row) => ({ ...row, boundary: boundaryOf(row.id) }))
