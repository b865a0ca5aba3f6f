/**
 * @maka/events/testing — ledger fixture builders for tests of every package. Ids are built without
 * checks (the `Unsafe` way) and timestamps count up from a fixed start, so fixtures are
 * deterministic.
 */
import type { ContinuationSource } from './AgentRun.js'
import type { FiniteNumber, NonEmptyString } from './ids.js'
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
export const fixtureIdentity: RunIdentity = {
  sessionId: 'session-1',
  invocationId: 'invocation-1',
  runId: 'run-1',
  turnId: 'turn-1',
}

/**
 * Builds rows of one run with sequential ids (`<runId>-e1`, `<runId>-e2`, …).
 * @category unsafe
 */
export interface LedgerBuilder {
  readonly identity: RunIdentity
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
  identity: RunIdentity = fixtureIdentity,
  startTs = 1_767_225_600_000,
): LedgerBuilder => {
  let counter = 0
  const stamp = () => {
    counter += 1
    return { eventId: `${identity.runId}-e${counter}`, ts: startTs + counter }
  }
  const row = (fields: Pick<RuntimeEvent, 'role' | 'author'> & Partial<RuntimeEvent>): RuntimeEvent => {
    const s = stamp()
    return {
      id: s.eventId as NonEmptyString,
      sessionId: identity.sessionId as NonEmptyString,
      invocationId: identity.invocationId as NonEmptyString,
      runId: identity.runId as NonEmptyString,
      turnId: identity.turnId as NonEmptyString,
      ts: s.ts as FiniteNumber,
      partial: false,
      ...fields,
    }
  }
  return {
    identity,
    userText: (text) => makeInitialUserEvent(identity, stamp(), text),
    modelText: (text) => row({ role: 'model', author: 'agent', status: 'completed', content: { kind: 'text', text } }),
    thinking: (text) => row({ role: 'model', author: 'agent', content: { kind: 'thinking', text } }),
    functionCall: (toolCallId, name, args = {}) =>
      row({
        role: 'model',
        author: 'agent',
        content: { kind: 'function_call', id: toolCallId as NonEmptyString, name: name as NonEmptyString, args },
        refs: { toolCallId },
      }),
    functionResponse: (toolCallId, name, result = { ok: true }, isError) =>
      row({
        role: 'tool',
        author: 'tool',
        content: {
          kind: 'function_response',
          id: toolCallId as NonEmptyString,
          name: name as NonEmptyString,
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
            requestId: requestId as NonEmptyString,
            toolName: toolName as NonEmptyString,
            ...(toolCallId === undefined ? {} : { toolCallId: toolCallId as NonEmptyString }),
          },
        },
      }),
    permissionDecision: (requestId, decision) =>
      row({
        role: 'user',
        author: 'user',
        actions: { permissionDecision: { requestId: requestId as NonEmptyString, decision } },
      }),
    errorFact: (message) => row({ role: 'system', author: 'system', content: { kind: 'error', message } }),
    terminal: (outcome = { status: 'failed', failureClass: 'app_restarted', message: 'the process ended' }) =>
      makeTerminalEvent(identity, stamp(), outcome),
    continuationStart: (source) => makeContinuationStartEvent(identity, stamp(), source),
    partial: (event) => ({ ...event, partial: true }),
  }
}
