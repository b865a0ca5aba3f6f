/**
 * Constructors for the rows the runtime itself writes at fixed points of a run's life: the initial
 * user event, the continuation-start fact and the terminal event. They are pure: ids and time come
 * in as data.
 */
import type { ContinuationSource } from './AgentRun.js'
import type { FiniteNumber, NonEmptyString } from './ids.js'
import type { RuntimeEvent, TerminalEventStatus } from './RuntimeEvent.js'
import { type SettlementPlan, type Sha256Digest, TOOL_BOUNDARY_PROTOCOL } from './ToolJournal.js'

/**
 * What a protocol run's continuation-start row adds (Phase 2): the marker always, the digest of the
 * source prefix, and the settlement plan when the source left operations to settle.
 * @category models
 */
export interface ContinuationJournal {
  readonly prefixDigest: Sha256Digest
  readonly settlementPlan?: SettlementPlan
}

/**
 * The identity every row of one run carries.
 * @category models
 */
export interface RunIdentity {
  readonly sessionId: NonEmptyString
  readonly invocationId: NonEmptyString
  readonly runId: NonEmptyString
  readonly turnId: NonEmptyString
}

/**
 * What every constructed row needs besides its identity: its own id and a timestamp.
 * @category models
 */
export interface RowStamp {
  readonly eventId: NonEmptyString
  readonly ts: FiniteNumber
}

const base = (identity: RunIdentity, stamp: RowStamp) => ({
  id: stamp.eventId,
  sessionId: identity.sessionId,
  invocationId: identity.invocationId,
  runId: identity.runId,
  turnId: identity.turnId,
  ts: stamp.ts,
  partial: false,
})

/**
 * The first row of a normal run: the user's message.
 * @category constructors
 */
export const makeInitialUserEvent = (identity: RunIdentity, stamp: RowStamp, text: string): RuntimeEvent => ({
  ...base(identity, stamp),
  role: 'user',
  author: 'user',
  content: { kind: 'text', text },
})

/**
 * The first row of a continuation run: a system fact naming the source boundary. A protocol run's
 * (`journal` given) also carries the marker, the source prefix digest and its settlement plan.
 * @category constructors
 */
export const makeContinuationStartEvent = (
  identity: RunIdentity,
  stamp: RowStamp,
  source: ContinuationSource,
  journal?: ContinuationJournal,
): RuntimeEvent => ({
  ...base(identity, stamp),
  role: 'system',
  author: 'system',
  actions: {
    stateDelta: { continuationStart: true },
    ...(journal === undefined ? {} : { runtimeProtocol: { toolBoundary: TOOL_BOUNDARY_PROTOCOL } }),
    ...(journal?.settlementPlan === undefined ? {} : { settlementPlan: journal.settlementPlan }),
  },
  refs: {
    sourceInvocationId: source.sourceInvocationId,
    sourceRunId: source.sourceRunId,
    sourceTurnId: source.sourceTurnId,
    sourceRuntimeEventHighWater: source.sourceRuntimeEventHighWater,
    ...(journal === undefined ? {} : { sourceRuntimeEventPrefixDigest: journal.prefixDigest }),
  },
})

/**
 * How a run ended, as the terminal row records it.
 * @category models
 */
export type TerminalOutcome =
  | { readonly status: 'completed' }
  | {
      readonly status: Exclude<TerminalEventStatus, 'completed' | 'failed'>
      readonly reason?: string
      /** Why it stopped as a stable class (e.g. `user_interrupted`), recorded like a failed run's. */
      readonly failureClass?: string
    }
  | {
      readonly status: 'failed'
      readonly failureClass: string
      readonly message: string
      readonly stateDelta?: Readonly<Record<string, unknown>>
    }

/**
 * The row that ends an invocation. A failed terminal carries its failure class twice: as the error
 * content's `code` and as `stateDelta.failureClass`.
 * @category constructors
 */
export const makeTerminalEvent = (identity: RunIdentity, stamp: RowStamp, outcome: TerminalOutcome): RuntimeEvent => {
  const row = { ...base(identity, stamp), role: 'system' as const, author: 'system' as const }
  switch (outcome.status) {
    case 'completed':
      return { ...row, status: 'completed', actions: { endInvocation: true } }
    case 'aborted':
    case 'cancelled':
      return {
        ...row,
        status: outcome.status,
        actions: {
          endInvocation: true,
          ...(outcome.failureClass === undefined ? {} : { stateDelta: { failureClass: outcome.failureClass } }),
        },
        ...(outcome.reason === undefined
          ? {}
          : {
              content: {
                kind: 'error',
                message: outcome.reason,
                ...(outcome.failureClass === undefined ? {} : { code: outcome.failureClass }),
              },
            }),
      }
    case 'failed':
      return {
        ...row,
        status: 'failed',
        content: { kind: 'error', message: outcome.message, code: outcome.failureClass },
        actions: {
          endInvocation: true,
          stateDelta: { ...(outcome.stateDelta ?? {}), failureClass: outcome.failureClass },
        },
      }
  }
}
