/**
 * A hand-written exact-shape check for a parsed ledger row, the hot path of reading a ledger. The
 * io-ts `RuntimeEvent` codec stays the authority: this check accepts exactly what `RuntimeEvent.is`
 * accepts on JSON values (a property test compares the two over valid and mutated rows), and the
 * reader runs the codec on every row this check rejects, so a disagreement could only ever cost
 * time, never let an invalid row through — as long as this check is never more lenient, which is
 * what the property test pins.
 *
 * Why not just `RuntimeEvent.is`: io-ts walks each struct twice (required, then optional props)
 * plus once more for unknown keys, through generic closures; one `for…in` per object with a
 * `switch` over its keys does the same work in one pass the JIT can inline.
 */
import {
  type RuntimeEvent,
  RuntimeProtocol,
  decodeRuntimeEvent,
  Sha256Digest,
  SettlementPlan,
  ToolDispatch,
  ToolOutcome,
  journalPlacementProblem,
} from '@maka/events'
import * as E from 'fp-ts/lib/Either.js'

// -------------------------------------------------------------------------------------
// guards
// -------------------------------------------------------------------------------------

// io-ts' `UnknownRecord` (2.2.22): any non-null object that is not an array.
const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === 'object' && u !== null && !Array.isArray(u)

// A required `t.unknown` prop of io-ts' `t.type`: any value, but the key must be there (an own key,
// or any defined value).
const hasRequired = (u: Record<string, unknown>, key: string): boolean => u[key] !== undefined || Object.hasOwn(u, key)

const isNonEmptyString = (u: unknown): boolean => typeof u === 'string' && u.length > 0
const isNonNegativeInt = (u: unknown): boolean => typeof u === 'number' && Number.isSafeInteger(u) && u >= 0
// An optional prop of io-ts' `t.partial`: absent or `undefined` is fine, anything else must match.
const optionalString = (u: unknown): boolean => u === undefined || typeof u === 'string'
const optionalBoolean = (u: unknown): boolean => u === undefined || typeof u === 'boolean'

// Own enumerable keys, like io-ts' `Object.keys`; `for…in` also sees inherited enumerable keys,
// which only makes this check stricter (JSON objects inherit none).
const hasOnlyKeys = (u: Record<string, unknown>, known: (key: string) => boolean): boolean => {
  for (const key in u) if (!known(key)) return false
  return true
}

const isRole = (u: unknown): boolean => u === 'user' || u === 'model' || u === 'tool' || u === 'system'
const isAuthor = (u: unknown): boolean => u === 'user' || u === 'agent' || u === 'tool' || u === 'system'
const isStatus = (u: unknown): boolean =>
  u === 'streaming' || u === 'completed' || u === 'failed' || u === 'aborted' || u === 'cancelled'

const eventKey = (key: string): boolean => {
  switch (key) {
    case 'id':
    case 'sessionId':
    case 'invocationId':
    case 'runId':
    case 'turnId':
    case 'ts':
    case 'partial':
    case 'role':
    case 'author':
    case 'branch':
    case 'status':
    case 'content':
    case 'actions':
    case 'refs':
      return true
    default:
      return false
  }
}

const isContent = (u: unknown): boolean => {
  if (!isRecord(u)) return false
  switch (u['kind']) {
    case 'text':
      return hasOnlyKeys(u, (k) => k === 'kind' || k === 'text') && typeof u['text'] === 'string'
    case 'thinking':
      return (
        hasOnlyKeys(u, (k) => k === 'kind' || k === 'text' || k === 'signature') &&
        typeof u['text'] === 'string' &&
        optionalString(u['signature'])
      )
    case 'function_call':
      // `args` is a required `t.unknown`: any value, as long as the key is there. (The decoder is
      // laxer and accepts a missing `args`; the reader falls back to it, so such rows still read.)
      return (
        hasOnlyKeys(u, (k) => k === 'kind' || k === 'id' || k === 'name' || k === 'args') &&
        isNonEmptyString(u['id']) &&
        isNonEmptyString(u['name']) &&
        hasRequired(u, 'args')
      )
    case 'function_response':
      return (
        hasOnlyKeys(u, (k) => k === 'kind' || k === 'id' || k === 'name' || k === 'result' || k === 'isError') &&
        isNonEmptyString(u['id']) &&
        isNonEmptyString(u['name']) &&
        hasRequired(u, 'result') &&
        optionalBoolean(u['isError'])
      )
    case 'error':
      return (
        hasOnlyKeys(u, (k) => k === 'kind' || k === 'message' || k === 'code' || k === 'reason') &&
        typeof u['message'] === 'string' &&
        optionalString(u['code']) &&
        optionalString(u['reason'])
      )
    default:
      return false
  }
}

const isPermissionRequest = (u: unknown): boolean =>
  isRecord(u) &&
  hasOnlyKeys(u, (k) => k === 'requestId' || k === 'toolName' || k === 'toolCallId' || k === 'summary') &&
  isNonEmptyString(u['requestId']) &&
  isNonEmptyString(u['toolName']) &&
  (u['toolCallId'] === undefined || isNonEmptyString(u['toolCallId'])) &&
  optionalString(u['summary'])

const isPermissionDecision = (u: unknown): boolean =>
  isRecord(u) &&
  hasOnlyKeys(u, (k) => k === 'requestId' || k === 'decision') &&
  isNonEmptyString(u['requestId']) &&
  (u['decision'] === 'allow' || u['decision'] === 'deny')

const isTokenUsage = (u: unknown): boolean =>
  isRecord(u) &&
  hasOnlyKeys(u, (k) => k === 'input' || k === 'output') &&
  isNonNegativeInt(u['input']) &&
  isNonNegativeInt(u['output'])

const isActions = (u: unknown): boolean =>
  isRecord(u) &&
  hasOnlyKeys(
    u,
    (k) =>
      k === 'stateDelta' ||
      k === 'permissionRequest' ||
      k === 'permissionDecision' ||
      k === 'tokenUsage' ||
      k === 'endInvocation' ||
      k === 'runtimeProtocol' ||
      k === 'toolDispatch' ||
      k === 'toolOutcome' ||
      k === 'settlementPlan',
  ) &&
  (u['stateDelta'] === undefined || isRecord(u['stateDelta'])) &&
  (u['permissionRequest'] === undefined || isPermissionRequest(u['permissionRequest'])) &&
  (u['permissionDecision'] === undefined || isPermissionDecision(u['permissionDecision'])) &&
  (u['tokenUsage'] === undefined || isTokenUsage(u['tokenUsage'])) &&
  optionalBoolean(u['endInvocation']) &&
  // The tool journal's keys (Phase 2) are rare next to the rest, so their codecs judge them.
  (u['runtimeProtocol'] === undefined || RuntimeProtocol.is(u['runtimeProtocol'])) &&
  (u['toolDispatch'] === undefined || ToolDispatch.is(u['toolDispatch'])) &&
  (u['toolOutcome'] === undefined || ToolOutcome.is(u['toolOutcome'])) &&
  (u['settlementPlan'] === undefined || SettlementPlan.is(u['settlementPlan']))

const refKey = (key: string): boolean => {
  switch (key) {
    case 'toolCallId':
    case 'stepId':
    case 'providerEventId':
    case 'sourceInvocationId':
    case 'sourceRunId':
    case 'sourceTurnId':
    case 'sourceRuntimeEventHighWater':
    case 'operationId':
    case 'sourceRuntimeEventPrefixDigest':
      return true
    default:
      return false
  }
}

const isRefs = (u: unknown): boolean =>
  isRecord(u) &&
  hasOnlyKeys(u, refKey) &&
  optionalString(u['toolCallId']) &&
  optionalString(u['stepId']) &&
  optionalString(u['providerEventId']) &&
  optionalString(u['sourceInvocationId']) &&
  optionalString(u['sourceRunId']) &&
  optionalString(u['sourceTurnId']) &&
  (u['sourceRuntimeEventHighWater'] === undefined || isNonNegativeInt(u['sourceRuntimeEventHighWater'])) &&
  (u['operationId'] === undefined || isNonEmptyString(u['operationId'])) &&
  (u['sourceRuntimeEventPrefixDigest'] === undefined || Sha256Digest.is(u['sourceRuntimeEventPrefixDigest']))

/**
 * True when a parsed row has exactly the RuntimeEvent shape; agrees with `RuntimeEvent.is` on
 * every JSON value.
 * @category guards
 */
export const isRuntimeEventShape = (u: unknown): u is RuntimeEvent => {
  if (!isRecord(u) || !hasOnlyKeys(u, eventKey)) return false
  const ts = u['ts']
  return (
    isNonEmptyString(u['id']) &&
    isNonEmptyString(u['sessionId']) &&
    isNonEmptyString(u['invocationId']) &&
    isNonEmptyString(u['runId']) &&
    isNonEmptyString(u['turnId']) &&
    typeof ts === 'number' &&
    Number.isFinite(ts) &&
    typeof u['partial'] === 'boolean' &&
    isRole(u['role']) &&
    isAuthor(u['author']) &&
    optionalString(u['branch']) &&
    (u['status'] === undefined || isStatus(u['status'])) &&
    (u['content'] === undefined || isContent(u['content'])) &&
    (u['actions'] === undefined || isActions(u['actions'])) &&
    (u['refs'] === undefined || isRefs(u['refs'])) &&
    journalPlacementProblem(u as RuntimeEvent) === null
  )
}

/**
 * A parsed row decoded as a reader takes it: the exact-shape check answers first, and the codec runs
 * only for a row it rejects, for its sentence (or, should the codec ever upcast old rows or accept
 * more than its guard, for that value). The row encoder and the last-row reader call it, and the
 * ledger reader writes it out (no `Either` per row there), so a row is written exactly when a reader
 * would take it back.
 * @category codecs
 */
export const decodeParsedRow = (u: unknown): E.Either<string, RuntimeEvent> =>
  isRuntimeEventShape(u) ? E.right(u) : decodeRuntimeEvent(u)
