/**
 * The tool journal's vocabulary (Phase 2): exact shapes, closed enums, the cross-field rules, and the
 * two digests — `argsDigest` is JCS (RFC 8785) then SHA-256, checked against an independent SHA-256
 * (node's) over the canonical text the RFC itself gives.
 */
import { createHash } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import * as O from 'fp-ts/lib/Option.js'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  MAX_SETTLEMENTS,
  RuntimeProtocol,
  SettlementPlan,
  ToolDispatch,
  ToolOutcome,
  argsDigest,
  argsDigestWith,
  operationIdOf,
  prefixDigestOf,
} from '../src/index.js'

// The same JSON value with every object's keys in reverse order.
const reversedKeys = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(reversedKeys)
    : typeof value === 'object' && value !== null
      ? Object.fromEntries(
          Object.entries(value)
            .reverse()
            .map(([k, v]) => [k, reversedKeys(v)]),
        )
      : value

const sha256Of = (text: string) => `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`

const dispatch = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  protocol: 't1_after_preflight_v1',
  operationId: 'run-1-o3',
  toolCallId: 'call-1',
  toolName: 'write_file',
  argsDigest: sha256Of('{}'),
  recoveryMode: 'reconcile',
  attempt: 1,
  reconcileBasis: 'absent',
  ...overrides,
})

describe('argsDigest', () => {
  it('hashes the RFC 8785 canonical form: sorted keys, shortest numbers, minimal escapes', () => {
    // The example of RFC 8785 §3.2.2: its input text, parsed as a model's arguments are, and its output.
    const input: unknown = JSON.parse(
      String.raw`{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],` +
        String.raw` "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/", "literals": [null, true, false]}`,
    )
    const canonical =
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],' +
      '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}'
    expect(argsDigest(input)).toBe(sha256Of(canonical))
  })

  it('is the same for the same args in any key order, and differs when a value differs', () => {
    expect(argsDigest({ path: 'a.txt', content: 'x' })).toBe(argsDigest({ content: 'x', path: 'a.txt' }))
    expect(argsDigest({ path: 'a.txt', content: 'x' })).not.toBe(argsDigest({ path: 'a.txt', content: 'y' }))
  })

  it('takes absent args as null', () => {
    expect(argsDigest(undefined)).toBe(sha256Of('null'))
  })

  it('is a well-formed digest of any JSON value, whatever its key order', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(argsDigest(reversedKeys(value))).toBe(argsDigest(value))
        expect(argsDigest(value)).toMatch(/^sha256:[0-9a-f]{64}$/)
      }),
    )
  })
})

describe('argsDigestWith', () => {
  const nodeArgsDigest = argsDigestWith((text) => createHash('sha256').update(text, 'utf8').digest('hex'))

  it("gives the pure digest for any JSON value when handed node's SHA-256", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(nodeArgsDigest(value)).toBe(argsDigest(value))
      }),
    )
    expect(nodeArgsDigest(undefined)).toBe(argsDigest(undefined))
  })

  it('throws on a hash that does not give 64 lowercase hex digits', () => {
    expect(() => argsDigestWith((text) => text.toUpperCase())({ a: 1 })).toThrow(TypeError)
    expect(() => argsDigestWith(() => 'AB'.repeat(32))({ a: 1 })).toThrow(TypeError)
  })
})

describe('operationIdOf and prefixDigestOf', () => {
  it('names an operation by its run and its call row', () => {
    expect(operationIdOf('run-7', 12)).toBe('run-7-o12')
  })

  it('makes a prefix digest of 64 lowercase hex digits, and nothing else', () => {
    const hex = 'ab'.repeat(32)
    expect(prefixDigestOf(hex)).toEqual(O.some(`sha256:${hex}`))
    expect(prefixDigestOf('AB'.repeat(32))).toEqual(O.none)
    expect(prefixDigestOf('ab'.repeat(31))).toEqual(O.none)
  })
})

describe('the journal rows', () => {
  it('accepts the marker with the one protocol value and refuses any other', () => {
    expect(E.isRight(RuntimeProtocol.decode({ toolBoundary: 't1_after_preflight_v1' }))).toBe(true)
    expect(E.isRight(RuntimeProtocol.decode({ toolBoundary: 't1_after_preflight_v2' }))).toBe(false)
    expect(E.isRight(RuntimeProtocol.decode({ toolBoundary: 't1_after_preflight_v1', extra: 1 }))).toBe(false)
  })

  it('accepts a dispatch of exact shape, with a basis exactly when the mode is reconcile', () => {
    expect(E.isRight(ToolDispatch.decode(dispatch()))).toBe(true)
    expect(E.isRight(ToolDispatch.decode(dispatch({ priorVerdict: 'not_applied', attempt: 2 })))).toBe(true)
    const { reconcileBasis: _basis, ...withoutBasis } = dispatch()
    expect(E.isRight(ToolDispatch.decode(withoutBasis))).toBe(false)
    expect(E.isRight(ToolDispatch.decode({ ...withoutBasis, recoveryMode: 'idempotent' }))).toBe(true)
    expect(E.isRight(ToolDispatch.decode(dispatch({ recoveryMode: 'idempotent' })))).toBe(false)
  })

  it('refuses a dispatch with an unknown key, mode or verdict, a bad digest, attempt 0 or a basis over 256 bytes', () => {
    for (const bad of [
      dispatch({ surprise: true }),
      dispatch({ recoveryMode: 'outcome_unknown' }),
      dispatch({ priorVerdict: 'applied' }),
      dispatch({ argsDigest: 'sha256:XYZ' }),
      dispatch({ attempt: 0 }),
      dispatch({ attempt: 1.5 }),
      dispatch({ reconcileBasis: 'é'.repeat(129) }),
    ]) {
      expect(E.isRight(ToolDispatch.decode(bad))).toBe(false)
    }
    expect(E.isRight(ToolDispatch.decode(dispatch({ reconcileBasis: 'é'.repeat(128) })))).toBe(true)
  })

  it('ties an outcome attempt to the implementation and an adjudication to the operator', () => {
    const outcome = (fields: Record<string, unknown>) =>
      E.isRight(ToolOutcome.decode({ protocol: 't1_after_preflight_v1', operationId: 'run-1-o3', ...fields }))
    expect(outcome({ settlementOrigin: 'normal_t2', attempt: 1 })).toBe(true)
    expect(outcome({ settlementOrigin: 'reissue_t2', attempt: 2 })).toBe(true)
    expect(outcome({ settlementOrigin: 'normal_t2' })).toBe(false)
    expect(outcome({ settlementOrigin: 'pre_t1_synthetic' })).toBe(true)
    expect(outcome({ settlementOrigin: 'reconcile_applied', attempt: 1 })).toBe(false)
    expect(
      outcome({ settlementOrigin: 'operator_adjudication', adjudication: { verdict: 'applied', actor: 'cli' } }),
    ).toBe(true)
    expect(outcome({ settlementOrigin: 'operator_adjudication' })).toBe(false)
    expect(outcome({ settlementOrigin: 'reattached', adjudication: { verdict: 'applied', actor: 'cli' } })).toBe(false)
    expect(
      outcome({ settlementOrigin: 'operator_adjudication', adjudication: { verdict: 'maybe', actor: 'cli' } }),
    ).toBe(false)
  })

  it('holds a settlement plan of 1 to 64 entries', () => {
    const entry = (n: number) => ({ operationId: `run-1-o${n}`, toolCallId: `call-${n}`, action: 'reissue' })
    const plan = (n: number) => Array.from({ length: n }, (_, i) => entry(i + 1))
    expect(E.isRight(SettlementPlan.decode(plan(1)))).toBe(true)
    expect(E.isRight(SettlementPlan.decode(plan(MAX_SETTLEMENTS)))).toBe(true)
    expect(E.isRight(SettlementPlan.decode(plan(0)))).toBe(false)
    expect(E.isRight(SettlementPlan.decode(plan(MAX_SETTLEMENTS + 1)))).toBe(false)
    expect(E.isRight(SettlementPlan.decode([{ ...entry(1), action: 'retry' }]))).toBe(false)
  })
})
