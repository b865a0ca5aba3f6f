/**
 * One committed RuntimeEvent as one short line: role, kind and a short text. Tool calls and results
 * are shown by tool name and outcome only — never their arguments or results — so streamed output
 * and timelines cannot leak file contents or secrets a tool touched.
 */
import { type RuntimeEvent, isContinuationStartEvent, isTerminalEvent } from '@maka/events'

/**
 * What a line says about one event.
 * @category models
 */
export interface EventSummary {
  readonly role: RuntimeEvent['role']
  readonly kind: string
  readonly text: string
  readonly toolName?: string
  readonly toolCallId?: string
  /** On a `function_response`: the call was refused by a permission decision, so the tool never ran. */
  readonly denied?: true
}

const MAX_TEXT = 160

// How a response that closed an operation came about, in the words `show` prints (Phase 2).
const SETTLED = {
  pre_t1_synthetic: 'not run',
  reissue_t2: 'run again',
  reconcile_applied: 'found applied',
  reattached: 'reattached',
  operator_adjudication: 'recorded by a person',
} as const

/**
 * Collapses whitespace and cuts long text, so one event stays one line.
 * @category combinators
 */
export const oneLine = (text: string, max: number = MAX_TEXT): string => {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}

const failureClassOf = (event: RuntimeEvent): string | undefined => {
  const fromDelta = event.actions?.stateDelta?.['failureClass']
  if (typeof fromDelta === 'string') return fromDelta
  return event.content?.kind === 'error' ? event.content.code : undefined
}

/**
 * How to summarise: which calls were denied earlier in the ledger, and whether model text is kept
 * whole (`--json`) instead of cut to one short line.
 * @category models
 */
export interface SummaryContext {
  readonly deniedCallIds?: ReadonlySet<string>
  readonly fullText?: boolean
}

/**
 * Summarises one event.
 * @category constructors
 */
export const summarizeEvent = (event: RuntimeEvent, context: SummaryContext = {}): EventSummary => {
  const { role } = event
  if (isContinuationStartEvent(event)) {
    const refs = event.refs
    return {
      role,
      kind: 'continuation_start',
      text: `from ${refs?.sourceRunId ?? '?'} @ ${refs?.sourceRuntimeEventHighWater ?? '?'}`,
    }
  }
  if (isTerminalEvent(event)) {
    const failureClass = failureClassOf(event)
    const recovered = event.actions?.stateDelta?.['recovered'] === true ? ', recovered' : ''
    return {
      role,
      kind: 'terminal',
      text: `${event.status ?? '?'}${failureClass === undefined ? '' : ` (${failureClass}${recovered})`}`,
    }
  }
  const permissionRequest = event.actions?.permissionRequest
  if (permissionRequest !== undefined) {
    return {
      role,
      kind: 'permission_request',
      text: permissionRequest.toolName,
      toolName: permissionRequest.toolName,
      ...(permissionRequest.toolCallId === undefined ? {} : { toolCallId: permissionRequest.toolCallId }),
    }
  }
  const permissionDecision = event.actions?.permissionDecision
  if (permissionDecision !== undefined) return { role, kind: 'permission_decision', text: permissionDecision.decision }
  // The tool journal's dispatch (Phase 2): which tool is about to run, under which mode, which attempt.
  const dispatch = event.actions?.toolDispatch
  if (dispatch !== undefined) {
    return {
      role,
      kind: 'tool_dispatch',
      text: `${dispatch.toolName} (${dispatch.recoveryMode}, attempt ${dispatch.attempt}${
        dispatch.priorVerdict === undefined ? '' : ', probe: not applied'
      })`,
      toolName: dispatch.toolName,
      toolCallId: dispatch.toolCallId,
    }
  }
  const content = event.content
  if (content === undefined) return { role, kind: 'note', text: '' }
  switch (content.kind) {
    case 'text':
      return { role, kind: 'text', text: context.fullText === true ? content.text : oneLine(content.text) }
    case 'thinking':
      return { role, kind: 'thinking', text: '' }
    case 'function_call':
      return { role, kind: 'function_call', text: content.name, toolName: content.name, toolCallId: content.id }
    case 'function_response': {
      const denied = context.deniedCallIds?.has(content.id) === true
      // A settlement (Phase 2) says where its response came from.
      const outcome = event.actions?.toolOutcome
      const origin = outcome?.settlementOrigin
      const verdict =
        outcome?.adjudication === undefined
          ? ''
          : `: ${outcome.adjudication.verdict} through ${outcome.adjudication.actor}`
      const settled = origin === undefined || origin === 'normal_t2' || denied ? '' : ` (${SETTLED[origin]}${verdict})`
      return {
        role,
        kind: 'function_response',
        text: `${content.name} ${denied ? 'denied' : content.isError === true ? 'error' : 'ok'}${settled}`,
        toolName: content.name,
        toolCallId: content.id,
        ...(denied ? { denied: true as const } : {}),
      }
    }
    case 'error':
      return { role, kind: 'error', text: content.code ?? '' }
  }
}

/**
 * `role kind text`, padded into columns.
 * @category combinators
 */
export const formatSummary = (summary: EventSummary): string =>
  `${summary.role.padEnd(6)} ${summary.kind.padEnd(19)} ${summary.text}`.trimEnd()

/**
 * Summarises the events of one ledger in order, remembering permission decisions so that the
 * response of a denied call reads as denied (not as a tool that ran and failed).
 * @category models
 */
export interface EventNarrator {
  summarize(event: RuntimeEvent): EventSummary
  /** The names of the tools whose calls were denied so far, in order. */
  denied(): ReadonlyArray<string>
}

/**
 * Creates a narrator for one stream of events (one or more runs).
 * @category constructors
 */
export const makeEventNarrator = (options: { readonly fullText?: boolean } = {}): EventNarrator => {
  const callOfRequest = new Map<string, string>()
  const deniedCallIds = new Set<string>()
  const deniedTools: Array<string> = []
  return {
    summarize: (event) => {
      const request = event.actions?.permissionRequest
      if (request?.toolCallId !== undefined) callOfRequest.set(request.requestId, request.toolCallId)
      const decision = event.actions?.permissionDecision
      if (decision?.decision === 'deny') {
        const callId = callOfRequest.get(decision.requestId)
        if (callId !== undefined) deniedCallIds.add(callId)
      }
      const summary = summarizeEvent(event, { deniedCallIds, ...(options.fullText === true ? { fullText: true } : {}) })
      if (summary.denied === true && summary.toolName !== undefined) deniedTools.push(summary.toolName)
      return summary
    },
    denied: () => deniedTools,
  }
}

/**
 * One committed event as a `--json` line of `run` and `resume` (see apps/cli/README.md).
 * @category models
 */
export interface EventJson extends EventSummary {
  readonly type: 'event'
  readonly sessionId: string
  readonly runId: string
  readonly eventId: string
  readonly status?: string
}

/**
 * Builds the `--json` line of one committed event.
 * @category constructors
 */
export const eventJson = (event: RuntimeEvent, summary: EventSummary): EventJson => ({
  type: 'event' as const,
  sessionId: event.sessionId,
  runId: event.runId,
  eventId: event.id,
  ...summary,
  ...(event.status === undefined ? {} : { status: event.status }),
})

/**
 * The sentence that says which tool calls were refused, or null when none was.
 * @category constructors
 */
export const deniedSentence = (tools: ReadonlyArray<string>): string | null =>
  tools.length === 0
    ? null
    : `${tools.length} tool call${tools.length === 1 ? ' was' : 's were'} denied and did not run (${[...new Set(tools)].join(', ')}).`
