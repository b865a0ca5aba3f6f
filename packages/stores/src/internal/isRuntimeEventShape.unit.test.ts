import { decodeRuntimeEvent, RuntimeEvent } from '@maka/events'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { isRuntimeEventShape } from './isRuntimeEventShape.js'

type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }

// -------------------------------------------------------------------------------------
// arbitraries: rows of the exact shape
// -------------------------------------------------------------------------------------

const nonEmpty = fc.string({ minLength: 1, maxLength: 8 })
const anyString = fc.string({ maxLength: 8 })
const nonNegativeInt = fc.oneof(fc.nat(), fc.constant(Number.MAX_SAFE_INTEGER))
const json = fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>

const content = fc.oneof(
  fc.record({ kind: fc.constant('text'), text: anyString }),
  fc.record(
    { kind: fc.constant('thinking'), text: anyString, signature: anyString },
    { requiredKeys: ['kind', 'text'] },
  ),
  fc.record({ kind: fc.constant('function_call'), id: nonEmpty, name: nonEmpty, args: json }),
  fc.record(
    { kind: fc.constant('function_response'), id: nonEmpty, name: nonEmpty, result: json, isError: fc.boolean() },
    { requiredKeys: ['kind', 'id', 'name', 'result'] },
  ),
  fc.record(
    { kind: fc.constant('error'), message: anyString, code: anyString, reason: anyString },
    { requiredKeys: ['kind', 'message'] },
  ),
)

const actions = fc.record(
  {
    stateDelta: fc.dictionary(fc.string({ maxLength: 6 }), json, { maxKeys: 3 }),
    permissionRequest: fc.record(
      { requestId: nonEmpty, toolName: nonEmpty, toolCallId: nonEmpty, summary: anyString },
      { requiredKeys: ['requestId', 'toolName'] },
    ),
    permissionDecision: fc.record({ requestId: nonEmpty, decision: fc.constantFrom('allow', 'deny') }),
    tokenUsage: fc.record({ input: nonNegativeInt, output: nonNegativeInt }),
    endInvocation: fc.boolean(),
  },
  { requiredKeys: [] },
)

const refs = fc.record(
  {
    toolCallId: anyString,
    stepId: anyString,
    providerEventId: anyString,
    sourceInvocationId: anyString,
    sourceRunId: anyString,
    sourceTurnId: anyString,
    sourceRuntimeEventHighWater: nonNegativeInt,
  },
  { requiredKeys: [] },
)

const validRow = fc.record(
  {
    id: nonEmpty,
    sessionId: nonEmpty,
    invocationId: nonEmpty,
    runId: nonEmpty,
    turnId: nonEmpty,
    ts: fc.double({ noNaN: true, noDefaultInfinity: true }),
    partial: fc.boolean(),
    role: fc.constantFrom('user', 'model', 'tool', 'system'),
    author: fc.constantFrom('user', 'agent', 'tool', 'system'),
    branch: anyString,
    status: fc.constantFrom('streaming', 'completed', 'failed', 'aborted', 'cancelled'),
    content,
    actions,
    refs,
  },
  { requiredKeys: ['id', 'sessionId', 'invocationId', 'runId', 'turnId', 'ts', 'partial', 'role', 'author'] },
)

// Rows with the tool journal's keys (Phase 2), each where it may stand.
const hex64 = fc.stringMatching(/^[0-9a-f]{64}$/)
const digest = hex64.map((h) => `sha256:${h}`)
const ids = fc.record({ id: nonEmpty, sessionId: nonEmpty, invocationId: nonEmpty, runId: nonEmpty, turnId: nonEmpty })
const protocol = 't1_after_preflight_v1'
const mode = fc.constantFrom('replay_safe', 'idempotent', 'reconcile', 'reattach', 'never_auto_retry')
const dispatchRow = fc
  .tuple(ids, nonEmpty, nonEmpty, nonEmpty, digest, mode, fc.integer({ min: 1, max: 9 }), fc.boolean())
  .map(([base, operationId, toolCallId, toolName, argsDigest, recoveryMode, attempt, prior]) => ({
    ...base,
    ts: 1,
    partial: false,
    role: 'system',
    author: 'system',
    actions: {
      toolDispatch: {
        protocol,
        operationId,
        toolCallId,
        toolName,
        argsDigest,
        recoveryMode,
        attempt,
        ...(recoveryMode === 'reconcile' ? { reconcileBasis: 'absent' } : {}),
        ...(prior ? { priorVerdict: 'not_applied' } : {}),
      },
    },
    refs: { toolCallId, operationId },
  }))
const outcomeRow = fc
  .tuple(
    ids,
    nonEmpty,
    nonEmpty,
    fc.constantFrom('normal_t2', 'pre_t1_synthetic', 'reattached', 'operator_adjudication'),
  )
  .map(([base, operationId, toolCallId, settlementOrigin]) => ({
    ...base,
    ts: 1,
    partial: false,
    role: 'tool',
    author: 'tool',
    content: { kind: 'function_response', id: toolCallId, name: 'read_file', result: { ok: 1 } },
    actions: {
      toolOutcome: {
        protocol,
        operationId,
        settlementOrigin,
        ...(settlementOrigin === 'normal_t2' ? { attempt: 1 } : {}),
        ...(settlementOrigin === 'operator_adjudication' ? { adjudication: { verdict: 'failed', actor: 'cli' } } : {}),
      },
    },
    refs: { toolCallId, operationId },
  }))
const startRow = fc.tuple(ids, digest, nonEmpty, nonEmpty).map(([base, prefixDigest, operationId, toolCallId]) => ({
  ...base,
  ts: 1,
  partial: false,
  role: 'system',
  author: 'system',
  actions: {
    stateDelta: { continuationStart: true },
    runtimeProtocol: { toolBoundary: protocol },
    settlementPlan: [{ operationId, toolCallId, action: 'reissue' }],
  },
  refs: { sourceRunId: 'r', sourceRuntimeEventHighWater: 3, sourceRuntimeEventPrefixDigest: prefixDigest },
}))
const callRow = fc.tuple(ids, nonEmpty, nonEmpty).map(([base, operationId, toolCallId]) => ({
  ...base,
  ts: 1,
  partial: false,
  role: 'model',
  author: 'agent',
  content: { kind: 'function_call', id: toolCallId, name: 'shell', args: { command: 'true' } },
  refs: { toolCallId, operationId },
}))
const journalRow = fc.oneof(dispatchRow, outcomeRow, startRow, callRow)

// -------------------------------------------------------------------------------------
// arbitraries: mutated rows
// -------------------------------------------------------------------------------------

// Values that sit right next to valid ones: empty strings, non-integers, other enum members,
// containers of the wrong kind — plus any JSON value.
const nearMiss = fc.oneof(
  fc.constantFrom<Json>('', 'x', 0, -1, 1.5, 2 ** 53, true, false, null, [], {}, 'user', 'agent', 'allow', 'text'),
  fc.constantFrom<Json>('function_call', 'function_response', 'error', 'thinking', 'streaming', 'maybe'),
  json,
)
// Known keys of other structs, so an unknown key is sometimes a plausible one.
const someKey = fc.oneof(
  fc.constantFrom('kind', 'text', 'id', 'name', 'args', 'result', 'extra', '__proto__', 'constructor', 'toString'),
  fc.constantFrom('requestId', 'decision', 'input', 'stateDelta', 'refs', 'status', 'signature', 'toolCallId'),
  fc.constantFrom('operationId', 'toolOutcome', 'toolDispatch', 'settlementPlan', 'runtimeProtocol', 'attempt'),
  fc.string({ maxLength: 6 }),
)

type Mutation =
  | { readonly op: 'set'; readonly pick: number; readonly value: Json }
  | { readonly op: 'delete'; readonly pick: number }
  | { readonly op: 'add'; readonly pick: number; readonly key: string; readonly value: Json }

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constant('set' as const), pick: fc.nat(), value: nearMiss }),
  fc.record({ op: fc.constant('delete' as const), pick: fc.nat() }),
  fc.record({ op: fc.constant('add' as const), pick: fc.nat(), key: someKey, value: nearMiss }),
)

type Node = Record<string, unknown>
const objectsOf = (root: unknown, into: Array<Node> = []): Array<Node> => {
  if (typeof root === 'object' && root !== null) {
    if (!Array.isArray(root)) into.push(root as Node)
    for (const child of Object.values(root)) objectsOf(child, into)
  }
  return into
}

// Mutates a deep copy: picks an object of the row (the row itself, content, actions, args…) and
// sets, deletes or adds one key. Keys are defined, never assigned, so `__proto__` is a plain key.
const mutate = (row: unknown, mutations: ReadonlyArray<Mutation>): unknown => {
  const copy: unknown = JSON.parse(JSON.stringify(row))
  for (const m of mutations) {
    const objects = objectsOf(copy)
    const target = objects[m.pick % objects.length]!
    const keys = Object.keys(target)
    // A fresh copy each time: fast-check hands out the same constant objects again and again.
    const value: unknown = m.op === 'delete' ? undefined : JSON.parse(JSON.stringify(m.value))
    if (m.op === 'add') {
      Object.defineProperty(target, m.key, { value, enumerable: true, writable: true, configurable: true })
    } else if (keys.length > 0) {
      const key = keys[m.pick % keys.length]!
      if (m.op === 'delete') delete target[key]
      else Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
    }
  }
  // What the reader sees: the value JSON.parse makes of the row's text.
  return JSON.parse(JSON.stringify(copy))
}

// -------------------------------------------------------------------------------------
// properties
// -------------------------------------------------------------------------------------

describe('isRuntimeEventShape', () => {
  describe('when given a row of the exact shape', () => {
    it('accepts it, like RuntimeEvent.is', () => {
      fc.assert(
        fc.property(fc.oneof(validRow, journalRow), (row) => {
          const parsed: unknown = JSON.parse(JSON.stringify(row))
          expect(RuntimeEvent.is(parsed)).toBe(true)
          expect(isRuntimeEventShape(parsed)).toBe(true)
        }),
        { numRuns: 1000 },
      )
    })
  })

  describe('when given a row with unknown keys, wrong types or missing fields', () => {
    it('answers exactly what RuntimeEvent.is answers', () => {
      let accepted = 0
      let rejected = 0
      fc.assert(
        fc.property(
          fc.oneof(validRow, journalRow),
          fc.array(mutation, { minLength: 1, maxLength: 3 }),
          (row, mutations) => {
            const parsed = mutate(row, mutations)
            const expected = RuntimeEvent.is(parsed)
            if (expected) accepted += 1
            else rejected += 1
            expect(isRuntimeEventShape(parsed)).toBe(expected)
          },
        ),
        { numRuns: 5000 },
      )
      // Both sides of the property were exercised (a mutation inside args or stateDelta keeps a row valid).
      expect(accepted).toBeGreaterThan(100)
      expect(rejected).toBeGreaterThan(1000)
    })
  })

  describe('when given any JSON value', () => {
    it('answers exactly what RuntimeEvent.is answers', () => {
      fc.assert(
        fc.property(fc.jsonValue(), (value) => {
          expect(isRuntimeEventShape(value)).toBe(RuntimeEvent.is(value))
        }),
        { numRuns: 1000 },
      )
    })
  })

  describe('when given any value at all, JSON or not', () => {
    it('never accepts what RuntimeEvent.is rejects', () => {
      fc.assert(
        fc.property(fc.oneof(fc.anything(), validRow), (value) => {
          if (isRuntimeEventShape(value)) expect(RuntimeEvent.is(value)).toBe(true)
        }),
        { numRuns: 1000 },
      )
    })
  })

  describe('when a function_call row has no args', () => {
    it('rejects it like RuntimeEvent.is, leaving the row to the codec, which accepts it', () => {
      const row = {
        id: 'e1',
        sessionId: 's',
        invocationId: 'i',
        runId: 'r',
        turnId: 't',
        ts: 1,
        partial: false,
        role: 'model',
        author: 'agent',
        content: { kind: 'function_call', id: 'c1', name: 'shell' },
      }
      expect(isRuntimeEventShape(row)).toBe(false)
      expect(RuntimeEvent.is(row)).toBe(false)
      expect(decodeRuntimeEvent(row)._tag).toBe('Right')
    })
  })
})
