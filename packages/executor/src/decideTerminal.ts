/**
 * How a run ends, decided as data from the loop's outcome: the terminal event, the terminal status
 * and the header fields that go with it. The performer appends the event before it updates the
 * header, so a header never claims an end the ledger does not hold.
 */
import {
  type AgentRun,
  type IsoTimestamp,
  NonEmptyString,
  type RowStamp,
  type RuntimeEvent,
  type TerminalRunStatus,
  FailureClass,
  makeTerminalEvent,
} from '@maka/events'
import type { LoopOutcome } from './agentLoop.js'

/**
 * The writes that close a run.
 * @category models
 */
export interface RunTerminal {
  readonly event: RuntimeEvent
  readonly status: TerminalRunStatus
  readonly headerFields: Partial<AgentRun>
}

/**
 * The failure class an outcome records; none for a completed run.
 * @category constructors
 */
export const failureClassOfOutcome = (outcome: LoopOutcome): string | undefined =>
  outcome._tag === 'Failed'
    ? outcome.failureClass
    : outcome._tag === 'Cancelled'
      ? FailureClass.user_interrupted
      : undefined

/**
 * What a Finished result says of a run that did not complete: its class, and the failure's sentence.
 * @category constructors
 */
export const failureOf = (
  outcome: LoopOutcome,
): { failureClass?: string; failureMessage?: string; retryLater?: true } => {
  const failureClass = failureClassOfOutcome(outcome)
  if (failureClass === undefined) return {}
  return outcome._tag === 'Failed'
    ? { failureClass, failureMessage: outcome.message, ...(outcome.retryLater === true ? { retryLater: true } : {}) }
    : { failureClass }
}

/**
 * Decides the terminal event and header of a run whose loop ended with `outcome`.
 * @category constructors
 */
export const decideTerminal = (
  header: AgentRun,
  outcome: LoopOutcome,
  stamp: RowStamp,
  completedAt: IsoTimestamp,
): RunTerminal => {
  const event = makeTerminalEvent(
    header,
    stamp,
    outcome._tag === 'Completed'
      ? { status: 'completed' }
      : outcome._tag === 'Cancelled'
        ? { status: 'cancelled', failureClass: FailureClass.user_interrupted, reason: 'The run was interrupted.' }
        : {
            status: 'failed',
            failureClass: outcome.failureClass,
            message: outcome.message,
            ...(outcome.detail === undefined ? {} : { stateDelta: outcome.detail }),
          },
  )
  const status: TerminalRunStatus =
    outcome._tag === 'Completed' ? 'completed' : outcome._tag === 'Cancelled' ? 'cancelled' : 'failed'
  const failureClass = failureClassOfOutcome(outcome)
  return {
    event,
    status,
    headerFields: {
      completedAt,
      ...(NonEmptyString.is(failureClass) ? { failureClass } : {}),
      ...(outcome._tag === 'Cancelled' ? { abortSource: 'user' } : {}),
    },
  }
}
