/**
 * @maka/events/testing — ledger fixture builders for tests of every package. Ids are built without
 * checks (the `Unsafe` way) and timestamps count up from a fixed start, so fixtures are
 * deterministic.
 */
import type { AgentRun, ContinuationSource } from './AgentRun.js'
import { decodeAgentRun } from './decode.js'
import { makeFiniteNumberUnsafe, makeNonEmptyStringUnsafe } from './ids.js'
import { makeDispatchEvent, makeToolOutcome, withProtocolMarker } from './journalRows.js'
import {
  type AdjudicationActor,
  type AdjudicationVerdict,
  type RecoveryMode,
  type SettlementOrigin,
  argsDigest,
  operationIdOf,
} from './ToolJournal.js'
import {
  type ContinuationJournal,
  makeContinuationStartEvent,
  makeInitialUserEvent,
  makeTerminalEvent,
  type RunIdentity,
  type TerminalOutcome,
} from './lifecycleEvents.js'
import type { RuntimeEvent } from './RuntimeEvent.js'

/**
 * The identity fixtures use unless told otherwise.
 * @category unsafe
 */
export const fixtureIdentity: FixtureIdentity = {
  sessionId: 'session-1',
  invocationId: 'invocation-1',
  runId: 'run-1',
  turnId: 'turn-1',
}

/**
 * A fixture's run identity as plain strings; the builder brands it without checks.
 * @category unsafe
 */
export type FixtureIdentity = { readonly [K in keyof RunIdentity]: string }

const unsafe = makeNonEmptyStringUnsafe

const brandIdentityUnsafe = (identity: FixtureIdentity): RunIdentity => ({
  sessionId: unsafe(identity.sessionId),
  invocationId: unsafe(identity.invocationId),
  runId: unsafe(identity.runId),
  turnId: unsafe(identity.turnId),
})

/**
 * Builds rows of one run with sequential ids (`<runId>-e1`, `<runId>-e2`, …).
 * @category unsafe
 */
export interface LedgerBuilder {
  readonly identity: FixtureIdentity
  userText(text: string): RuntimeEvent
  modelText(text: string): RuntimeEvent
  thinking(text: string): RuntimeEvent
  functionCall(toolCallId: string, name: string, args?: unknown): RuntimeEvent
  functionResponse(toolCallId: string, name: string, result?: unknown, isError?: boolean): RuntimeEvent
  permissionRequest(requestId: string, toolName: string, toolCallId?: string): RuntimeEvent
  permissionDecision(requestId: string, decision: 'allow' | 'deny'): RuntimeEvent
  errorFact(message: string): RuntimeEvent
  terminal(outcome?: TerminalOutcome): RuntimeEvent
  continuationStart(source: ContinuationSource, journal?: ContinuationJournal): RuntimeEvent
  partial(event: RuntimeEvent): RuntimeEvent
  /** Row 1 of a protocol run: the user's message with the marker. */
  protocolUserText(text: string): RuntimeEvent
  /** A protocol call: `refs.operationId` is its positional id. */
  protocolCall(toolCallId: string, name: string, args?: unknown): RuntimeEvent
  /** A dispatch (T1) of `call` (a `function_call` row, of this run or an earlier one). */
  dispatch(
    call: RuntimeEvent,
    recoveryMode: RecoveryMode,
    attempt?: number,
    extra?: { readonly reconcileBasis?: string; readonly priorVerdict?: 'not_applied' },
  ): RuntimeEvent
  /** The response (T2) of `call` with its outcome. */
  outcome(
    call: RuntimeEvent,
    origin: SettlementOrigin,
    options?: {
      readonly result?: unknown
      readonly isError?: boolean
      readonly attempt?: number
      readonly adjudication?: { readonly verdict: AdjudicationVerdict; readonly actor: AdjudicationActor }
    },
  ): RuntimeEvent
}

const callParts = (call: RuntimeEvent) => {
  if (call.content?.kind !== 'function_call') throw new TypeError('not a function_call row')
  const operationId =
    call.refs?.operationId ?? operationIdOf(call.runId, Number(call.id.slice(call.id.lastIndexOf('-e') + 2)))
  return { content: call.content, operationId }
}

/**
 * Creates a builder for one run's rows.
 * @category unsafe
 */
export const makeLedgerBuilderUnsafe = (
  identity: FixtureIdentity = fixtureIdentity,
  startTs = 1_767_225_600_000,
): LedgerBuilder => {
  const ids = brandIdentityUnsafe(identity)
  let counter = 0
  const stamp = () => {
    counter += 1
    return { eventId: unsafe(`${identity.runId}-e${counter}`), ts: makeFiniteNumberUnsafe(startTs + counter) }
  }
  const row = (fields: Pick<RuntimeEvent, 'role' | 'author'> & Partial<RuntimeEvent>): RuntimeEvent => {
    const s = stamp()
    return {
      id: s.eventId,
      ...ids,
      ts: s.ts,
      partial: false,
      ...fields,
    }
  }
  return {
    identity,
    userText: (text) => makeInitialUserEvent(ids, stamp(), text),
    modelText: (text) => row({ role: 'model', author: 'agent', status: 'completed', content: { kind: 'text', text } }),
    thinking: (text) => row({ role: 'model', author: 'agent', content: { kind: 'thinking', text } }),
    functionCall: (toolCallId, name, args = {}) =>
      row({
        role: 'model',
        author: 'agent',
        content: { kind: 'function_call', id: unsafe(toolCallId), name: unsafe(name), args },
        refs: { toolCallId },
      }),
    functionResponse: (toolCallId, name, result = { ok: true }, isError) =>
      row({
        role: 'tool',
        author: 'tool',
        content: {
          kind: 'function_response',
          id: unsafe(toolCallId),
          name: unsafe(name),
          result,
          ...(isError === undefined ? {} : { isError }),
        },
        refs: { toolCallId },
      }),
    permissionRequest: (requestId, toolName, toolCallId) =>
      row({
        role: 'system',
        author: 'system',
        actions: {
          permissionRequest: {
            requestId: unsafe(requestId),
            toolName: unsafe(toolName),
            ...(toolCallId === undefined ? {} : { toolCallId: unsafe(toolCallId) }),
          },
        },
      }),
    permissionDecision: (requestId, decision) =>
      row({
        role: 'user',
        author: 'user',
        actions: { permissionDecision: { requestId: unsafe(requestId), decision } },
      }),
    errorFact: (message) => row({ role: 'system', author: 'system', content: { kind: 'error', message } }),
    terminal: (outcome = { status: 'failed', failureClass: 'app_restarted', message: 'the process ended' }) =>
      makeTerminalEvent(ids, stamp(), outcome),
    continuationStart: (source, journal) => makeContinuationStartEvent(ids, stamp(), source, journal),
    partial: (event) => ({ ...event, partial: true }),
    protocolUserText: (text) => withProtocolMarker(makeInitialUserEvent(ids, stamp(), text)),
    protocolCall: (toolCallId, name, args = {}) => {
      const event = row({
        role: 'model',
        author: 'agent',
        content: { kind: 'function_call', id: unsafe(toolCallId), name: unsafe(name), args },
        refs: { toolCallId },
      })
      return { ...event, refs: { toolCallId, operationId: unsafe(operationIdOf(identity.runId, counter)) } }
    },
    dispatch: (call, recoveryMode, attempt = 1, extra = {}) => {
      const { content, operationId } = callParts(call)
      const made = makeDispatchEvent(ids, stamp(), {
        operationId,
        toolCallId: content.id,
        toolName: content.name,
        argsDigest: argsDigest(content.args),
        recoveryMode,
        attempt,
        ...(recoveryMode === 'reconcile' ? { reconcileBasis: extra.reconcileBasis ?? 'absent' } : {}),
        ...(extra.priorVerdict === undefined ? {} : { priorVerdict: extra.priorVerdict }),
      })
      if (made._tag === 'Left') throw new TypeError(made.left)
      return made.right
    },
    outcome: (call, origin, options = {}) => {
      const { content, operationId } = callParts(call)
      const attempt = options.attempt ?? (origin === 'normal_t2' || origin === 'reissue_t2' ? 1 : undefined)
      const toolOutcome = makeToolOutcome({
        operationId,
        settlementOrigin: origin,
        ...(attempt === undefined ? {} : { attempt }),
        ...(options.adjudication === undefined ? {} : { adjudication: options.adjudication }),
      })
      if (toolOutcome._tag === 'Left') throw new TypeError(toolOutcome.left)
      const isError = options.isError ?? origin === 'pre_t1_synthetic'
      return row({
        role: 'tool',
        author: origin === 'operator_adjudication' ? 'user' : 'tool',
        content: {
          kind: 'function_response',
          id: content.id,
          name: content.name,
          result: options.result ?? { ok: true },
          ...(isError ? { isError: true } : {}),
        },
        actions: { toolOutcome: toolOutcome.right },
        refs: { toolCallId: content.id, operationId: unsafe(operationId) },
      })
    },
  }
}

// -------------------------------------------------------------------------------------
// run headers and row specs
// -------------------------------------------------------------------------------------

/**
 * The cwd and workspace identity fixture headers carry.
 * @category unsafe
 */
export const FIXTURE_CWD = '/work/project'
/** @category unsafe */
export const FIXTURE_WORKSPACE = 'fs:64769:1234:/work/project'

/**
 * A valid AgentRun header, built through the real codec so a fixture can never be a shape a store
 * would refuse; `omit` removes optional keys the defaults set. Throws on a bad fixture (tests only).
 * @category unsafe
 */
export const makeRunHeaderUnsafe = (
  overrides: Record<string, unknown> = {},
  omit: ReadonlyArray<string> = [],
): AgentRun => {
  const raw: Record<string, unknown> = {
    runId: 'run-1',
    sessionId: 'session-1',
    turnId: 'turn-1',
    invocationId: 'invocation-1',
    status: 'failed',
    cwd: FIXTURE_CWD,
    providerId: 'provider-1',
    modelId: 'model-1',
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:01:00.000Z',
    workspaceIdentity: FIXTURE_WORKSPACE,
    failureClass: 'app_restarted',
    ...overrides,
  }
  for (const key of omit) delete raw[key]
  const decoded = decodeAgentRun(raw)
  if (decoded._tag === 'Left') throw new Error(`bad fixture header: ${decoded.left}`)
  return decoded.right
}

/**
 * The header of a continuation of `source` pinned at `highWater`.
 * @category unsafe
 */
export const makeContinuationHeaderUnsafe = (
  ids: { readonly runId: string; readonly invocationId: string; readonly turnId: string },
  source: AgentRun,
  highWater: number,
  overrides: Record<string, unknown> = {},
): AgentRun =>
  makeRunHeaderUnsafe({
    ...ids,
    parentRunId: source.runId,
    parentTurnId: source.turnId,
    continuationSource: {
      sourceInvocationId: source.invocationId,
      sourceRunId: source.runId,
      sourceTurnId: source.turnId,
      sourceRuntimeEventHighWater: highWater,
    },
    ...overrides,
  })

/**
 * One row of a generated ledger, as data: property tests draw these (over small id pools, so calls,
 * responses, requests and decisions collide often) and `buildRowsUnsafe` turns them into rows.
 * @category unsafe
 */
export type RowSpec =
  | { readonly kind: 'userText' | 'modelText' | 'thinking' | 'errorFact'; readonly text: string }
  | {
      readonly kind: 'functionCall' | 'functionResponse'
      readonly id: string
      readonly tool: string
      readonly isError: boolean
    }
  | { readonly kind: 'permissionRequest' | 'permissionDecision'; readonly id: string; readonly allow: boolean }
  | { readonly kind: 'terminal'; readonly status: 'completed' | 'failed' | 'aborted' | 'cancelled' }

/**
 * The rows of `specs`, in order, each partial or from another turn when its spec says so.
 * @category unsafe
 */
export const buildRowsUnsafe = (
  specs: ReadonlyArray<{ readonly spec: RowSpec; readonly partial: boolean; readonly foreignTurn: boolean }>,
): ReadonlyArray<RuntimeEvent> => {
  const l = makeLedgerBuilderUnsafe()
  return specs.map(({ spec, partial, foreignTurn }) => {
    const event = ((): RuntimeEvent => {
      switch (spec.kind) {
        case 'userText':
        case 'modelText':
        case 'thinking':
        case 'errorFact':
          return l[spec.kind](spec.text)
        case 'functionCall':
          return l.functionCall(spec.id, spec.tool)
        case 'functionResponse':
          return l.functionResponse(spec.id, spec.tool, 'r', spec.isError)
        case 'permissionRequest':
          return l.permissionRequest(spec.id, 'shell')
        case 'permissionDecision':
          return l.permissionDecision(spec.id, spec.allow ? 'allow' : 'deny')
        case 'terminal':
          return spec.status === 'completed'
            ? l.terminal({ status: 'completed' })
            : spec.status === 'failed'
              ? l.terminal()
              : l.terminal({ status: spec.status })
      }
    })()
    const marked = partial ? l.partial(event) : event
    return foreignTurn ? ({ ...marked, turnId: 'turn-9' } as RuntimeEvent) : marked
  })
}
