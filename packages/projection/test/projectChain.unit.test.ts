/**
 * The Phase 2 projection over a chain: statuses of open operations across runs, adoptions, and
 * every corruption kind, each from the smallest ledger that shows it.
 */
import type { RuntimeEvent } from '@maka/events'
import { makeLedgerBuilderUnsafe } from '@maka/events/testing'
import { describe, expect, it } from 'vitest'
import { type ChainProjection, foldSegmentJournal, projectChain } from '../src/index.js'

const src = { sessionId: 'session-1', invocationId: 'invocation-1', runId: 'run-1', turnId: 'turn-1' }
const next = (n: number) => ({
  sessionId: 'session-1',
  invocationId: `invocation-${n}`,
  runId: `run-${n}`,
  turnId: `turn-${n}`,
})
const boundary = (n: number, highWater: number) =>
  ({
    sourceInvocationId: `invocation-${n}`,
    sourceRunId: `run-${n}`,
    sourceTurnId: `turn-${n}`,
    sourceRuntimeEventHighWater: highWater,
  }) as never
const digest = `sha256:${'0'.repeat(64)}` as never

const project = (...runs: ReadonlyArray<ReadonlyArray<RuntimeEvent>>): ChainProjection =>
  projectChain(runs.map((rows) => foldSegmentJournal(rows[0]?.runId ?? 'run-x', rows)))

const kinds = (projection: ChainProjection) => projection.corruptions.map((c) => c.kind)

const plain = ({ isOpen: _isOpen, ...rest }: ChainProjection) => rest

describe('projectChain', () => {
  it('leaves a chain without the marker or a journal key to Phase 0', () => {
    const l = makeLedgerBuilderUnsafe(src)
    const call = l.functionCall('call-1', 'read_file')
    const p = project([l.userText('hi'), call, l.functionResponse('call-1', 'read_file'), l.modelText('ok')])
    expect(p.journaled).toBe(false)
    expect(p.openOperations).toEqual([])
    expect(p.corruptions).toEqual([])
  })

  it('names a protocol call without a dispatch definitely not dispatched (P1)', () => {
    const l = makeLedgerBuilderUnsafe(src)
    const p = project([l.protocolUserText('hi'), l.protocolCall('call-1', 'write_file', { path: 'a' })])
    expect(p.journaled).toBe(true)
    expect(p.corruptions).toEqual([])
    expect(p.openOperations).toMatchObject([
      {
        operationId: 'run-1-o2',
        toolCallId: 'call-1',
        toolName: 'write_file',
        runId: 'run-1',
        row: 2,
        status: 'definitely_not_dispatched',
        attempts: 0,
        recordedMode: null,
        adoptions: 0,
        args: { path: 'a' },
      },
    ])
  })

  it('names a dispatched call without a response outcome unknown, with its recorded mode and basis (P2–P4)', () => {
    const l = makeLedgerBuilderUnsafe(src)
    const user = l.protocolUserText('hi')
    const call = l.protocolCall('call-1', 'write_file', { path: 'a' })
    const rows = [user, call, l.dispatch(call, 'reconcile', 1, { reconcileBasis: 'absent' })]
    const p = project(rows)
    expect(p.openOperations).toMatchObject([
      { status: 'dispatched_outcome_unknown', attempts: 1, recordedMode: 'reconcile', reconcileBasis: 'absent' },
    ])
    expect(plain(project(rows))).toEqual(plain(p))
  })

  it('settles an operation with its response (P5)', () => {
    const l = makeLedgerBuilderUnsafe(src)
    const user = l.protocolUserText('hi')
    const call = l.protocolCall('call-1', 'read_file')
    const p = project([user, call, l.dispatch(call, 'replay_safe'), l.outcome(call, 'normal_t2')])
    expect(p.openOperations).toEqual([])
    expect(p.corruptions).toEqual([])
    expect(p.settledCount).toBe(1)
    expect(p.isOpen('run-1-o2')).toBe(false)
  })

  it('follows a reissue into the continuation that settles it, counting the adoption', () => {
    const l = makeLedgerBuilderUnsafe(src)
    const user = l.protocolUserText('hi')
    const call = l.protocolCall('call-1', 'read_file')
    const source = [user, call, l.dispatch(call, 'replay_safe'), l.terminal()]
    const c = makeLedgerBuilderUnsafe(next(2))
    const plan = [{ operationId: 'run-1-o2', toolCallId: 'call-1', action: 'reissue' }] as never
    const start = c.continuationStart(boundary(1, 4), { prefixDigest: digest, settlementPlan: plan })
    const crashed = project(source, [start, c.terminal()])
    expect(crashed.openOperations).toMatchObject([{ operationId: 'run-1-o2', adoptions: 1, attempts: 1 }])
    const settled = project(source, [
      start,
      c.dispatch(call, 'replay_safe', 2),
      c.outcome(call, 'reissue_t2', { attempt: 2 }),
      c.modelText('done'),
    ])
    expect(settled.corruptions).toEqual([])
    expect(settled.openOperations).toEqual([])
  })

  it('counts adoptions across every continuation of the chain (the budget)', () => {
    const l = makeLedgerBuilderUnsafe(src)
    const user = l.protocolUserText('hi')
    const call = l.protocolCall('call-1', 'read_file')
    const runs: Array<ReadonlyArray<RuntimeEvent>> = [[user, call, l.dispatch(call, 'replay_safe')]]
    const plan = [{ operationId: 'run-1-o2', toolCallId: 'call-1', action: 'reissue' }] as never
    for (let n = 2; n <= 4; n += 1) {
      const c = makeLedgerBuilderUnsafe(next(n))
      runs.push([c.continuationStart(boundary(n - 1, 1), { prefixDigest: digest, settlementPlan: plan }), c.terminal()])
    }
    expect(project(...runs).openOperations).toMatchObject([{ adoptions: 3 }])
  })

  it('keeps a legacy run’s open call indeterminate', () => {
    const l = makeLedgerBuilderUnsafe(src)
    const legacy = [l.userText('hi'), l.functionCall('call-1', 'shell'), l.terminal()]
    const c = makeLedgerBuilderUnsafe(next(2))
    const p = project(legacy, [c.continuationStart(boundary(1, 3), { prefixDigest: digest }), c.terminal()])
    expect(p.journaled).toBe(true)
    expect(p.openOperations).toMatchObject([{ operationId: 'run-1-o2', status: 'indeterminate', runId: 'run-1' }])
  })

  describe('corruption', () => {
    const setup = () => {
      const l = makeLedgerBuilderUnsafe(src)
      const user = l.protocolUserText('hi')
      const call = l.protocolCall('call-1', 'read_file', { path: 'a' })
      return { l, user, call }
    }

    it('orphan_dispatch: a dispatch with no earlier call', () => {
      const { l, user, call } = setup()
      const dispatch = l.dispatch(call, 'replay_safe')
      expect(kinds(project([user, dispatch, call]))).toContain('orphan_dispatch')
    })

    it('identity_conflict: a dispatch whose args digest differs, a call without its operation id, a response without an outcome', () => {
      const { l, user, call } = setup()
      const other = { ...call, content: { ...call.content, args: { path: 'b' } } } as RuntimeEvent
      expect(kinds(project([user, call, l.dispatch(other, 'replay_safe')]))).toEqual(['identity_conflict'])
      const m = makeLedgerBuilderUnsafe(src)
      expect(kinds(project([m.protocolUserText('hi'), m.functionCall('call-1', 'read_file')]))).toEqual([
        'identity_conflict',
      ])
      const r = makeLedgerBuilderUnsafe(src)
      expect(
        kinds(
          project([r.protocolUserText('hi'), r.protocolCall('c', 'read_file'), r.functionResponse('c', 'read_file')]),
        ),
      ).toEqual(['identity_conflict'])
    })

    it('duplicate_call: two calls with one tool call id in one run', () => {
      const { l, user, call } = setup()
      expect(kinds(project([user, call, l.protocolCall('call-1', 'read_file')]))).toContain('duplicate_call')
    })

    it('attempt_gap: a first dispatch numbered 2', () => {
      const { l, user, call } = setup()
      expect(kinds(project([user, call, l.dispatch(call, 'replay_safe', 2)]))).toContain('attempt_gap')
    })

    it('dispatch_after_response and duplicate_response', () => {
      const { l, user, call } = setup()
      const rows = [user, call, l.dispatch(call, 'replay_safe'), l.outcome(call, 'normal_t2')]
      expect(kinds(project([...rows, l.dispatch(call, 'replay_safe', 2)]))).toContain('dispatch_after_response')
      const m = makeLedgerBuilderUnsafe(src)
      const u2 = m.protocolUserText('hi')
      const c2 = m.protocolCall('call-1', 'read_file', { path: 'a' })
      expect(
        kinds(project([u2, c2, m.dispatch(c2, 'replay_safe'), m.outcome(c2, 'normal_t2'), m.outcome(c2, 'normal_t2')])),
      ).toContain('duplicate_response')
    })

    it('orphan_response: an outcome naming no call', () => {
      const { l, user, call } = setup()
      const stray = { ...call, refs: { toolCallId: 'call-1', operationId: 'run-9-o2' } } as RuntimeEvent
      expect(kinds(project([user, l.outcome(stray, 'pre_t1_synthetic')]))).toContain('orphan_response')
    })

    it('undispatched_success: normal_t2 with no dispatch, and a pre_t1_synthetic that is not an error', () => {
      const { l, user, call } = setup()
      expect(kinds(project([user, call, l.outcome(call, 'normal_t2')]))).toContain('undispatched_success')
      const m = makeLedgerBuilderUnsafe(src)
      const u2 = m.protocolUserText('hi')
      const c2 = m.protocolCall('call-1', 'read_file')
      const rows = [u2, c2, m.outcome(c2, 'pre_t1_synthetic', { isError: false })]
      expect(kinds(project(rows))).toContain('undispatched_success')
    })

    it('a pre_t1_synthetic refusal with isError is a clean settlement', () => {
      const { l, user, call } = setup()
      const p = project([user, call, l.outcome(call, 'pre_t1_synthetic')])
      expect(p.corruptions).toEqual([])
      expect(p.openOperations).toEqual([])
    })

    it('unplanned_settlement and settlement_after_model_row in a continuation', () => {
      const { l, user, call } = setup()
      const source = [user, call, l.dispatch(call, 'replay_safe')]
      const c = makeLedgerBuilderUnsafe(next(2))
      const start = c.continuationStart(boundary(1, 3), { prefixDigest: digest })
      expect(kinds(project(source, [start, c.outcome(call, 'reissue_t2', { attempt: 1 })]))).toContain(
        'unplanned_settlement',
      )
      const d = makeLedgerBuilderUnsafe(next(2))
      const plan = [{ operationId: 'run-1-o2', toolCallId: 'call-1', action: 'reissue' }] as never
      const planned = d.continuationStart(boundary(1, 3), { prefixDigest: digest, settlementPlan: plan })
      const late = [planned, d.modelText('thinking aloud'), d.dispatch(call, 'replay_safe', 2)]
      expect(kinds(project(source, late))).toContain('settlement_after_model_row')
    })

    it('protocol_marker_invalid: a journal key in a legacy run, or a marker off row 1', () => {
      const l = makeLedgerBuilderUnsafe(src)
      const call = l.protocolCall('call-1', 'read_file')
      expect(kinds(project([l.userText('hi'), call]))).toContain('protocol_marker_invalid')
      const m = makeLedgerBuilderUnsafe(src)
      const rows = [m.protocolUserText('a'), m.protocolUserText('b')]
      expect(kinds(project(rows))).toContain('protocol_marker_invalid')
    })

    it('legacy_dispatch: a continuation dispatching a legacy run’s call', () => {
      const l = makeLedgerBuilderUnsafe(src)
      const call = l.functionCall('call-1', 'read_file')
      const c = makeLedgerBuilderUnsafe(next(2))
      const plan = [{ operationId: 'run-1-o2', toolCallId: 'call-1', action: 'reissue' }] as never
      const rows = [
        c.continuationStart(boundary(1, 2), { prefixDigest: digest, settlementPlan: plan }),
        c.dispatch({ ...call, refs: { toolCallId: 'call-1', operationId: 'run-1-o2' } } as RuntimeEvent, 'replay_safe'),
      ]
      expect(kinds(project([l.userText('hi'), call], rows))).toContain('legacy_dispatch')
    })
  })
})
