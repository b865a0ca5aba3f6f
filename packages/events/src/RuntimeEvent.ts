/**
 * The RuntimeEvent: one canonical row of a run's ledger (`runtime-events.jsonl`). Rows have an exact
 * shape; an unknown key anywhere makes the row invalid so that nothing we do not understand is
 * ever trusted as a recovery fact.
 */
import * as t from 'io-ts'
import { FiniteNumber, NonEmptyString, NonNegativeInt } from './ids.js'
import { discriminatedByKind, strictStruct } from './strictStruct.js'
import { RuntimeProtocol, Sha256Digest, SettlementPlan, ToolDispatch, ToolOutcome } from './ToolJournal.js'

// -------------------------------------------------------------------------------------
// codecs: content
// -------------------------------------------------------------------------------------

/**
 * Plain text from a user or a model.
 * @category codecs
 */
export const TextContent = strictStruct('TextContent', { kind: t.literal('text'), text: t.string }, {})
/**
 * Plain text from a user or a model.
 * @category models
 */
export type TextContent = t.TypeOf<typeof TextContent>

/**
 * Model reasoning text, with an optional provider signature.
 * @category codecs
 */
export const ThinkingContent = strictStruct(
  'ThinkingContent',
  { kind: t.literal('thinking'), text: t.string },
  { signature: t.string },
)
/**
 * Model reasoning text.
 * @category models
 */
export type ThinkingContent = t.TypeOf<typeof ThinkingContent>

/**
 * A tool call the model asked for; `id` is the tool call id.
 * @category codecs
 */
export const FunctionCallContent = strictStruct(
  'FunctionCallContent',
  { kind: t.literal('function_call'), id: NonEmptyString, name: NonEmptyString, args: t.unknown },
  {},
)
/**
 * A tool call the model asked for.
 * @category models
 */
export type FunctionCallContent = t.TypeOf<typeof FunctionCallContent>

/**
 * A tool's outcome; `id` equals the call's id.
 * @category codecs
 */
export const FunctionResponseContent = strictStruct(
  'FunctionResponseContent',
  { kind: t.literal('function_response'), id: NonEmptyString, name: NonEmptyString, result: t.unknown },
  { isError: t.boolean },
)
/**
 * A tool's outcome.
 * @category models
 */
export type FunctionResponseContent = t.TypeOf<typeof FunctionResponseContent>

/**
 * An error fact; never shown to a model.
 * @category codecs
 */
export const ErrorContent = strictStruct(
  'ErrorContent',
  { kind: t.literal('error'), message: t.string },
  { code: t.string, reason: t.string },
)
/**
 * An error fact.
 * @category models
 */
export type ErrorContent = t.TypeOf<typeof ErrorContent>

/**
 * Any content kind, discriminated by `kind`.
 * @category codecs
 */
export const RuntimeEventContent = discriminatedByKind('RuntimeEventContent', {
  text: TextContent,
  thinking: ThinkingContent,
  function_call: FunctionCallContent,
  function_response: FunctionResponseContent,
  error: ErrorContent,
})
/**
 * Any content kind, discriminated by `kind`.
 * @category models
 */
export type RuntimeEventContent = t.TypeOf<typeof RuntimeEventContent>

// -------------------------------------------------------------------------------------
// codecs: actions and refs
// -------------------------------------------------------------------------------------

/**
 * A request for the user's permission to run a tool.
 * @category codecs
 */
export const PermissionRequest = strictStruct(
  'PermissionRequest',
  { requestId: NonEmptyString, toolName: NonEmptyString },
  { toolCallId: NonEmptyString, summary: t.string },
)
/**
 * A request for the user's permission to run a tool.
 * @category models
 */
export type PermissionRequest = t.TypeOf<typeof PermissionRequest>

/**
 * The user's answer to a permission request.
 * @category codecs
 */
export const PermissionDecision = strictStruct(
  'PermissionDecision',
  { requestId: NonEmptyString, decision: t.union([t.literal('allow'), t.literal('deny')]) },
  {},
)
/**
 * The user's answer to a permission request.
 * @category models
 */
export type PermissionDecision = t.TypeOf<typeof PermissionDecision>

/**
 * Token usage reported by a provider for one model step.
 * @category codecs
 */
export const TokenUsage = strictStruct('TokenUsage', { input: NonNegativeInt, output: NonNegativeInt }, {})
/**
 * Token usage reported by a provider.
 * @category models
 */
export type TokenUsage = t.TypeOf<typeof TokenUsage>

/**
 * Side facts an event carries besides its content.
 * @category codecs
 */
export const RuntimeEventActions = strictStruct(
  'RuntimeEventActions',
  {},
  {
    stateDelta: t.UnknownRecord,
    permissionRequest: PermissionRequest,
    permissionDecision: PermissionDecision,
    tokenUsage: TokenUsage,
    endInvocation: t.boolean,
    runtimeProtocol: RuntimeProtocol,
    toolDispatch: ToolDispatch,
    toolOutcome: ToolOutcome,
    settlementPlan: SettlementPlan,
  },
)
/**
 * Side facts an event carries besides its content.
 * @category models
 */
export type RuntimeEventActions = t.TypeOf<typeof RuntimeEventActions>

/**
 * References from an event to other identities (tool calls, steps, a continuation's source).
 * @category codecs
 */
export const RuntimeEventRefs = strictStruct(
  'RuntimeEventRefs',
  {},
  {
    toolCallId: t.string,
    stepId: t.string,
    providerEventId: t.string,
    sourceInvocationId: t.string,
    sourceRunId: t.string,
    sourceTurnId: t.string,
    sourceRuntimeEventHighWater: NonNegativeInt,
    operationId: NonEmptyString,
    sourceRuntimeEventPrefixDigest: Sha256Digest,
  },
)
/**
 * References from an event to other identities.
 * @category models
 */
export type RuntimeEventRefs = t.TypeOf<typeof RuntimeEventRefs>

// -------------------------------------------------------------------------------------
// codecs: the event
// -------------------------------------------------------------------------------------

/**
 * Who produced an event, as the provider sees it.
 * @category codecs
 */
export const EventRole = t.keyof({ user: null, model: null, tool: null, system: null }, 'EventRole')
/**
 * Who produced an event, as the provider sees it.
 * @category models
 */
export type EventRole = t.TypeOf<typeof EventRole>

/**
 * Which party wrote an event.
 * @category codecs
 */
export const EventAuthor = t.keyof({ user: null, agent: null, tool: null, system: null }, 'EventAuthor')
/**
 * Which party wrote an event.
 * @category models
 */
export type EventAuthor = t.TypeOf<typeof EventAuthor>

/**
 * The status an event may carry; the last four are terminal.
 * @category codecs
 */
export const EventStatus = t.keyof(
  { streaming: null, completed: null, failed: null, aborted: null, cancelled: null },
  'EventStatus',
)
/**
 * The status an event may carry.
 * @category models
 */
export type EventStatus = t.TypeOf<typeof EventStatus>

const RuntimeEventFields = strictStruct(
  'RuntimeEvent',
  {
    id: NonEmptyString,
    sessionId: NonEmptyString,
    invocationId: NonEmptyString,
    runId: NonEmptyString,
    turnId: NonEmptyString,
    ts: FiniteNumber,
    partial: t.boolean,
    role: EventRole,
    author: EventAuthor,
  },
  {
    branch: t.string,
    status: EventStatus,
    content: RuntimeEventContent,
    actions: RuntimeEventActions,
    refs: RuntimeEventRefs,
  },
)

type RuntimeEventShape = t.TypeOf<typeof RuntimeEventFields>

const isStartShape = (event: RuntimeEventShape): boolean =>
  !event.partial && event.role === 'system' && event.actions?.stateDelta?.['continuationStart'] === true

/**
 * Why a row's tool-journal keys (Phase 2) stand where they may not, or `null` when they are in place:
 * the marker only on an initial user row or a continuation-start row; a dispatch row only as a
 * committed system fact with no content and no status, whose refs repeat its ids; an outcome only
 * on a committed `function_response` whose refs name its operation; a settlement plan and a prefix
 * digest only on a continuation-start row; `refs.operationId` only on a call, a dispatch or an
 * outcome. What needs other rows (row 1 only, attempts, one response per operation) is the
 * projection's to judge.
 * @category guards
 */
export const journalPlacementProblem = (event: RuntimeEventShape): string | null => {
  const actions = event.actions
  const refs = event.refs
  const kind = event.content?.kind
  if (actions?.runtimeProtocol !== undefined) {
    const initialUser = !event.partial && event.role === 'user' && event.author === 'user' && kind === 'text'
    if (!initialUser && !isStartShape(event)) return 'actions.runtimeProtocol stands on a row that cannot open a run'
  }
  const dispatch = actions?.toolDispatch
  if (dispatch !== undefined) {
    if (event.partial || event.role !== 'system' || event.author !== 'system') {
      return 'actions.toolDispatch stands on a row that is not a committed system fact'
    }
    if (event.content !== undefined || event.status !== undefined) {
      return 'actions.toolDispatch stands on a row with content or a status'
    }
    if (refs?.toolCallId !== dispatch.toolCallId || refs.operationId !== dispatch.operationId) {
      return 'actions.toolDispatch and the row refs name different operations'
    }
  }
  const outcome = actions?.toolOutcome
  if (outcome !== undefined) {
    if (event.partial || kind !== 'function_response') {
      return 'actions.toolOutcome stands on a row that is not a committed function_response'
    }
    if (refs?.operationId !== outcome.operationId)
      return 'actions.toolOutcome and the row refs name different operations'
  }
  if (actions?.settlementPlan !== undefined && !isStartShape(event)) {
    return 'actions.settlementPlan stands on a row that is not a continuation start'
  }
  if (refs?.sourceRuntimeEventPrefixDigest !== undefined && !isStartShape(event)) {
    return 'refs.sourceRuntimeEventPrefixDigest stands on a row that is not a continuation start'
  }
  if (refs?.operationId !== undefined && kind !== 'function_call' && dispatch === undefined && outcome === undefined) {
    return 'refs.operationId stands on a row that is neither a call, a dispatch nor an outcome'
  }
  return null
}

/**
 * One canonical ledger row, exact shape; tool-journal keys only where they may stand
 * ({@link journalPlacementProblem}).
 * @category codecs
 */
export const RuntimeEvent = new t.Type<RuntimeEventShape, RuntimeEventShape, unknown>(
  'RuntimeEvent',
  (u): u is RuntimeEventShape => RuntimeEventFields.is(u) && journalPlacementProblem(u) === null,
  (u, c) => {
    const decoded = RuntimeEventFields.validate(u, c)
    if (decoded._tag === 'Left') return decoded
    const problem = journalPlacementProblem(decoded.right)
    return problem === null ? decoded : t.failure(u, c, problem)
  },
  t.identity,
)
/**
 * One canonical ledger row.
 * @category models
 */
export type RuntimeEvent = t.TypeOf<typeof RuntimeEvent>

/**
 * The status values that end an invocation.
 * @category models
 */
export type TerminalEventStatus = 'completed' | 'failed' | 'aborted' | 'cancelled'

// -------------------------------------------------------------------------------------
// guards
// -------------------------------------------------------------------------------------

const TERMINAL_STATUSES: ReadonlySet<string> = new Set(['completed', 'failed', 'aborted', 'cancelled'])

/**
 * True for a terminal status value.
 * @category guards
 */
export const isTerminalEventStatus = (status: string | undefined): status is TerminalEventStatus =>
  status !== undefined && TERMINAL_STATUSES.has(status)

/**
 * A terminal event: non-partial, a terminal status, and `actions.endInvocation: true`.
 * @category guards
 */
export const isTerminalEvent = (event: RuntimeEvent): event is RuntimeEvent & { status: TerminalEventStatus } =>
  !event.partial && isTerminalEventStatus(event.status) && event.actions?.endInvocation === true

/**
 * A continuation-start event: the system fact that opens a continuation run's ledger.
 * @category guards
 */
export const isContinuationStartEvent = (event: RuntimeEvent): boolean =>
  !event.partial && event.role === 'system' && event.actions?.stateDelta?.['continuationStart'] === true

/**
 * True when a provider may see this event: committed, with content, and not an error fact.
 * @category guards
 */
export const isModelVisible = (
  event: RuntimeEvent,
): event is RuntimeEvent & { content: Exclude<RuntimeEventContent, ErrorContent> } =>
  !event.partial && event.content !== undefined && event.content.kind !== 'error'

/**
 * Narrows an event to one carrying a `function_call`.
 * @category guards
 */
export const isFunctionCallEvent = (event: RuntimeEvent): event is RuntimeEvent & { content: FunctionCallContent } =>
  event.content?.kind === 'function_call'

/**
 * Narrows an event to one carrying a `function_response`.
 * @category guards
 */
export const isFunctionResponseEvent = (
  event: RuntimeEvent,
): event is RuntimeEvent & { content: FunctionResponseContent } => event.content?.kind === 'function_response'
