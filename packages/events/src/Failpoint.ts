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
