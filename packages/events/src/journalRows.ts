/**
 * Constructors for the tool journal's rows (Phase 2): the marker on a protocol run's row 1, the
 * dispatch row (T1) and the outcome a response carries (T2). Pure, like the lifecycle rows: ids and
 * time come in as data. A dispatch or an outcome is checked against its exact codec, so a value the
 * reader would refuse is never built.
 */
import * as E from 'fp-ts/lib/Either.js'
import { decodeGuardFirst } from './decode.js'
import type { RowStamp, RunIdentity } from './lifecycleEvents.js'
import type { RuntimeEvent } from './RuntimeEvent.js'
import {
  type AdjudicationActor,
  type AdjudicationVerdict,
  type RecoveryMode,
  type RuntimeProtocol,
  type SettlementOrigin,
  TOOL_BOUNDARY_PROTOCOL,
  ToolDispatch,
  ToolOutcome,
} from './ToolJournal.js'

/**
 * The marker's one value.
 * @category constants
 */
export const PROTOCOL_MARKER: RuntimeProtocol = { toolBoundary: TOOL_BOUNDARY_PROTOCOL }

/**
 * Row 1 of a protocol run: the same row with the marker among its actions.
 * @category constructors
 */
export const withProtocolMarker = (event: RuntimeEvent): RuntimeEvent => ({
  ...event,
  actions: { ...event.actions, runtimeProtocol: PROTOCOL_MARKER },
})

/**
 * True when a run's first row carries the marker: the run is a protocol run.
 * @category guards
 */
export const isProtocolMarked = (first: RuntimeEvent | undefined): boolean =>
  first?.actions?.runtimeProtocol !== undefined

/**
 * True when a row carries a key of the tool journal (the marker, a dispatch, an outcome, a
 * settlement plan, an operation id or a prefix digest): the chain it belongs to has a journal.
 * @category guards
 */
export const carriesJournalKey = (event: RuntimeEvent): boolean =>
  event.actions?.runtimeProtocol !== undefined ||
  event.actions?.toolDispatch !== undefined ||
  event.actions?.toolOutcome !== undefined ||
  event.actions?.settlementPlan !== undefined ||
  event.refs?.operationId !== undefined ||
  event.refs?.sourceRuntimeEventPrefixDigest !== undefined

/**
 * What a dispatch names: the fields of `actions.toolDispatch` but the protocol.
 * @category models
 */
export interface DispatchFields {
  readonly operationId: string
  readonly toolCallId: string
  readonly toolName: string
  readonly argsDigest: string
  readonly recoveryMode: RecoveryMode
  readonly attempt: number
  readonly reconcileBasis?: string | undefined
  readonly priorVerdict?: 'not_applied' | undefined
}

/**
 * What an outcome names: the fields of `actions.toolOutcome` but the protocol.
 * @category models
 */
export interface OutcomeFields {
  readonly operationId: string
  readonly settlementOrigin: SettlementOrigin
  readonly attempt?: number | undefined
  readonly adjudication?: { readonly verdict: AdjudicationVerdict; readonly actor: AdjudicationActor } | undefined
}

// Absent and undefined are one thing to a caller; the exact codec wants the key gone.
const defined = (fields: object): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) out[key] = value
  return out
}

// A running agent builds one of each per tool call, in a process too short for io-ts' decoder to
// warm up: their guards answer first.
const decodeDispatch = decodeGuardFirst(ToolDispatch)
const decodeOutcome = decodeGuardFirst(ToolOutcome)

/**
 * The dispatch row (T1): a committed system fact with no content, whose refs repeat its ids. Left
 * with the codec's sentence when the fields break the exact shape (an attempt below 1, a basis over
 * 256 bytes, a basis without `reconcile`…).
 * @category constructors
 */
export const makeDispatchEvent = (
  identity: RunIdentity,
  stamp: RowStamp,
  fields: DispatchFields,
): E.Either<string, RuntimeEvent> =>
  E.map((toolDispatch: ToolDispatch): RuntimeEvent => ({
    id: stamp.eventId,
    sessionId: identity.sessionId,
    invocationId: identity.invocationId,
    runId: identity.runId,
    turnId: identity.turnId,
    ts: stamp.ts,
    partial: false,
    role: 'system',
    author: 'system',
    actions: { toolDispatch },
    refs: { toolCallId: toolDispatch.toolCallId, operationId: toolDispatch.operationId },
  }))(decodeDispatch({ protocol: TOOL_BOUNDARY_PROTOCOL, ...defined(fields) }))

/**
 * The outcome a protocol response carries (T2). Left when the fields break its exact shape.
 * @category constructors
 */
export const makeToolOutcome = (fields: OutcomeFields): E.Either<string, ToolOutcome> =>
  decodeOutcome({ protocol: TOOL_BOUNDARY_PROTOCOL, ...defined(fields) })
