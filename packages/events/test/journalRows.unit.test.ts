/**
 * The tool journal's rows in the ledger (Phase 2): the RuntimeEvent codec reads every journal key,
 * and only where it may stand; the constructors build rows the codec reads back.
 */
import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import {
  RuntimeEvent,
  TOOL_BOUNDARY_PROTOCOL,
  ToolDispatch,
  decodeGuardFirst,
  decodeRuntimeEvent,
  decodeWith,
  isProtocolMarked,
  journalPlacementProblem,
} from '../src/index.js'
import { makeLedgerBuilderUnsafe } from '../src/testing.js'

const source = {
  sourceInvocationId: 'invocation-0',
  sourceRunId: 'run-0',
  sourceTurnId: 'turn-0',
  sourceRuntimeEventHighWater: 4,
} as never

const digest = `sha256:${'a'.repeat(64)}` as never

const protocolRows = () => {
  const l = makeLedgerBuilderUnsafe()
  const user = l.protocolUserText('hi')
  const call = l.protocolCall('call-1', 'write_file', { path: 'a', content: 'b' })
  const dispatch = l.dispatch(call, 'reconcile', 1, { reconcileBasis: 'absent' })
  const response = l.outcome(call, 'normal_t2', { result: { path: 'a', bytes: 1 } })
  return { l, user, call, dispatch, response }
}

describe('the RuntimeEvent codec and the tool journal', () => {
  it('reads back every row a protocol run writes', () => {
    const { l, user, call, dispatch, response } = protocolRows()
    const start = l.continuationStart(source, {
      prefixDigest: digest,
      settlementPlan: [{ operationId: 'run-0-o2', toolCallId: 'call-0', action: 'reissue' }] as never,
    })
    for (const row of [user, call, dispatch, response, start]) {
      expect(decodeRuntimeEvent(JSON.parse(JSON.stringify(row)))).toEqual(E.right(row))
    }
    expect(isProtocolMarked(user)).toBe(true)
    expect(isProtocolMarked(start)).toBe(true)
    expect(call.refs?.operationId).toBe('run-1-o2')
    expect(dispatch.refs).toEqual({ toolCallId: 'call-1', operationId: 'run-1-o2' })
  })

  it('refuses each journal key where it may not stand, with a sentence naming it', () => {
    const { l, user, call, dispatch, response } = protocolRows()
    const text = l.modelText('done')
    const misplaced: ReadonlyArray<[string, unknown]> = [
      ['runtimeProtocol', { ...text, actions: { runtimeProtocol: user.actions?.runtimeProtocol } }],
      ['toolDispatch', { ...dispatch, role: 'model' }],
      ['toolDispatch', { ...dispatch, content: { kind: 'text', text: 'x' } }],
      ['toolDispatch', { ...dispatch, status: 'completed' }],
      ['toolDispatch', { ...dispatch, refs: { toolCallId: 'call-1', operationId: 'run-1-o9' } }],
      ['toolOutcome', { ...text, actions: { toolOutcome: response.actions?.toolOutcome } }],
      ['toolOutcome', { ...response, refs: { toolCallId: 'call-1', operationId: 'run-1-o9' } }],
      ['toolOutcome', { ...response, partial: true }],
      [
        'settlementPlan',
        { ...user, actions: { settlementPlan: [{ operationId: 'o', toolCallId: 'c', action: 'reissue' }] } },
      ],
      ['sourceRuntimeEventPrefixDigest', { ...user, refs: { sourceRuntimeEventPrefixDigest: digest } }],
      ['operationId', { ...text, refs: { operationId: 'run-1-o2' } }],
    ]
    for (const [key, row] of misplaced) {
      expect(RuntimeEvent.is(row)).toBe(false)
      const decoded = decodeRuntimeEvent(row)
      expect(E.isLeft(decoded) && decoded.left.includes(key)).toBe(true)
    }
    expect(journalPlacementProblem(call)).toBeNull()
  })

  it('refuses journal values outside their exact shapes', () => {
    const { dispatch, response } = protocolRows()
    const toolDispatch = { ...dispatch.actions?.toolDispatch }
    const toolOutcome = { ...response.actions?.toolOutcome }
    const bad: ReadonlyArray<unknown> = [
      { ...dispatch, actions: { toolDispatch: { ...toolDispatch, attempt: 0 } } },
      { ...dispatch, actions: { toolDispatch: { ...toolDispatch, recoveryMode: 'outcome_unknown' } } },
      { ...dispatch, actions: { toolDispatch: { ...toolDispatch, reconcileBasis: 'x'.repeat(257) } } },
      { ...dispatch, actions: { toolDispatch: { ...toolDispatch, extra: 1 } } },
      { ...response, actions: { toolOutcome: { ...toolOutcome, attempt: undefined } } },
      { ...response, actions: { toolOutcome: { ...toolOutcome, settlementOrigin: 'retry' } } },
    ]
    for (const row of bad) expect(E.isLeft(decodeRuntimeEvent(JSON.parse(JSON.stringify(row))))).toBe(true)
  })
})

describe('decodeGuardFirst', () => {
  const dispatch = {
    protocol: TOOL_BOUNDARY_PROTOCOL,
    operationId: 'run-1-o2',
    toolCallId: 'call-1',
    toolName: 'read_file',
    argsDigest: `sha256:${'a'.repeat(64)}`,
    recoveryMode: 'replay_safe',
    attempt: 1,
  }
  const values: ReadonlyArray<unknown> = [
    dispatch,
    { ...dispatch, recoveryMode: 'reconcile', reconcileBasis: 'absent' },
    { ...dispatch, attempt: 0 },
    { ...dispatch, reconcileBasis: 'absent' },
    { ...dispatch, extra: true },
    { ...dispatch, argsDigest: 'sha256:short' },
    [dispatch],
    null,
    'dispatch',
  ]

  it('accepts and refuses what decodeWith does, with the same value and the same sentence', () => {
    const guarded = decodeGuardFirst(ToolDispatch)
    const decoded = decodeWith(ToolDispatch)
    for (const value of values) {
      const a = guarded(value)
      expect(a).toEqual(decoded(value))
      if (E.isRight(a)) expect(a.right).toBe(value)
    }
    expect(values.map((value) => E.isRight(guarded(value)))).toEqual([true, true, ...values.slice(2).map(() => false)])
  })
})
