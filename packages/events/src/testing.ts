/**
 * @maka/events/testing — ledger fixture builders for tests of every package. Ids are built without
 * checks (the `Unsafe` way) and timestamps count up from a fixed start, so fixtures are
 * deterministic.
 */
import type { ContinuationSource } from './AgentRun.js'
import { makeFiniteNumberUnsafe, makeNonEmptyStringUnsafe } from './ids.js'
import {
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
  continuationStart(source: ContinuationSource): RuntimeEvent
  partial(event: RuntimeEvent): RuntimeEvent
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
    continuationStart: (source) => makeContinuationStartEvent(ids, stamp(), source),
    partial: (event) => ({ ...event, partial: true }),
  }
}
