/**
 * Phase 2 planning: the decision per open operation of a chain with a tool journal (the spec's
 * table, rows 0–14), the settlement plan, the replay rule and what the plan JSON adds. Each case is
 * the smallest protocol ledger that shows its row.
 */
import type { AgentRun, RuntimeEvent } from '@maka/events'
import { makeLedgerBuilderUnsafe } from '@maka/events/testing'
import { describe, expect, it } from 'vitest'
import { continuationHeader, givenLedger, header, journalFacts, ledgerOf, rows } from './givenLedger.js'

const operationFacts = (facts: Record<string, unknown>, operationId = 'run-1-o2') => ({
  operationFacts: new Map([[operationId, facts as never]]),
})

// A protocol run: the user's message, one call of `tool`, and whatever `after` adds; then the crash.
const protocolRun = (
  tool: string,
  args: unknown,
  after: (l: ReturnType<typeof rows>, call: RuntimeEvent) => Array<RuntimeEvent>,
) => {
  const l = rows()
  const user = l.protocolUserText('go')
  const call = l.protocolCall('call-1', tool, args)
  return [user, call, ...after(l, call), l.terminal()]
}

describe('planning a chain with a tool journal', () => {
  it('reissues a call that was never dispatched (P1), with a warning, keeping the call in the history', () => {
    const events = protocolRun('write_file', { path: 'a', content: 'b' }, () => [])
    const { plan } = givenLedger(events).whenPlanning(journalFacts).thenContinues()
    expect(plan.continuation?.settlementPlan).toEqual([
      { operationId: 'run-1-o2', toolCallId: 'call-1', action: 'reissue' },
    ])
    expect(plan.openToolOperations).toEqual([
      {
        operationId: 'run-1-o2',
        toolCallId: 'call-1',
        toolName: 'write_file',
        runId: 'run-1',
        status: 'definitely_not_dispatched',
        recoveryMode: 'reconcile',
        attempts: 0,
        adoptions: 0,
        action: 'reissue',
        reason: null,
      },
    ])
    expect(plan.diagnostics.map((d) => d.code)).toEqual(['tool_not_dispatched'])
    expect(plan.continuation?.runtimeContext.map((e) => e.id)).toEqual(['run-1-e1', 'run-1-e2', 'run-1-e3'])
    expect(plan.continuation?.safetySnapshot.toolRecoveryModes).toEqual(journalFacts.toolRecoveryModes)
  })

  it('asks again a permission left pending at the crash instead of parking (P1 variant)', () => {
    const events = protocolRun('write_file', { path: 'a', content: 'b' }, (l) => [
      l.permissionRequest('perm-call-1', 'write_file', 'call-1'),
    ])
    const { plan } = givenLedger(events).whenPlanning(journalFacts).thenContinues()
    expect(plan.diagnostics.map((d) => d.code)).toEqual(['tool_not_dispatched', 'permission_reasked'])
  })

  it('parks a pending permission like Phase 1 when the host writes no journal', () => {
    const events = protocolRun('write_file', { path: 'a', content: 'b' }, (l) => [
      l.permissionRequest('perm-call-1', 'write_file', 'call-1'),
    ])
    givenLedger(events)
      .whenPlanning({ ...journalFacts, toolJournal: false })
      .thenParks(['dangling_tool_state', 'pending_permission'])
  })

  it('reissues a dispatched replay_safe call with the same operation (P2–P4)', () => {
    const events = protocolRun('read_file', { path: 'a' }, (l, call) => [l.dispatch(call, 'replay_safe')])
    const { plan } = givenLedger(events).whenPlanning(journalFacts).thenContinues()
    expect(plan.continuation?.settlementPlan).toEqual([
      { operationId: 'run-1-o2', toolCallId: 'call-1', action: 'reissue' },
    ])
    expect(plan.openToolOperations?.[0]).toMatchObject({ status: 'dispatched_outcome_unknown', attempts: 1 })
  })

  it.each([
    ['applied', 'settle_applied'],
    ['not_applied', 'reissue'],
  ] as const)('settles a reconcile call from its probe: %s → %s', (verdict, action) => {
    const events = protocolRun('write_file', { path: 'a', content: 'b' }, (l, call) => [l.dispatch(call, 'reconcile')])
    const { plan } = givenLedger(events, operationFacts({ currentMode: 'reconcile', probe: verdict }))
      .whenPlanning(journalFacts)
      .thenContinues()
    expect(plan.continuation?.settlementPlan).toEqual([{ operationId: 'run-1-o2', toolCallId: 'call-1', action }])
    expect(plan.continuation?.safetySnapshot.probeVerdicts).toEqual([{ operationId: 'run-1-o2', verdict }])
    expect(plan.diagnostics.map((d) => d.code)).toEqual(['reconcile_verdict'])
  })

  it('settles a reattached command that ended', () => {
    const events = protocolRun('shell', { command: 'make' }, (l, call) => [l.dispatch(call, 'reattach')])
    const { plan } = givenLedger(events, operationFacts({ currentMode: 'reattach', observation: 'exited' }))
      .whenPlanning(journalFacts)
      .thenContinues()
    expect(plan.continuation?.settlementPlan?.[0]?.action).toBe('settle_reattached')
  })

  it('parks a command that may still run or left no trace', () => {
    const events = protocolRun('shell', { command: 'make' }, (l, call) => [l.dispatch(call, 'reattach')])
    givenLedger(events, operationFacts({ currentMode: 'reattach', observation: 'lost' }))
      .whenPlanning(journalFacts)
      .thenParks(['tool_outcome_unknown'])
  })

  it('parks a reconcile call the host could not probe', () => {
    const events = protocolRun('write_file', { path: 'a', content: 'b' }, (l, call) => [l.dispatch(call, 'reconcile')])
    givenLedger(events)
      .whenPlanning(journalFacts)
      .thenParks(['tool_outcome_unknown'])
      .thenDetail('tool_outcome_unknown', { reason: 'observation_unavailable' })
  })

  it('parks at gate 7 — not on the probe — when the workspace is another one', () => {
    const events = protocolRun('write_file', { path: 'a', content: 'b' }, (l, call) => [l.dispatch(call, 'reconcile')])
    const { plan } = givenLedger(events)
      .whenPlanning({ ...journalFacts, currentWorkspaceIdentity: 'fs:1:2:/elsewhere' })
      .thenParks(['workspace_identity_mismatch'])
    expect(plan.openToolOperations?.[0]).toMatchObject({ action: null, reason: null })
  })

  it('parks a dispatched call whose tool is gone with the catalog gate', () => {
    const events = protocolRun('read_file', { path: 'a' }, (l, call) => [l.dispatch(call, 'replay_safe')])
    givenLedger(events)
      .whenPlanning({ ...journalFacts, availableToolNames: ['shell'] })
      .thenParks(['tool_catalog_mismatch'])
      .thenDetail('tool_catalog_mismatch', { missingToolNames: ['read_file'] })
  })

  it('parks a dispatched call as Phase 1 did when the host writes no journal (row 0)', () => {
    const events = protocolRun('read_file', { path: 'a' }, (l, call) => [l.dispatch(call, 'replay_safe')])
    givenLedger(events)
      .whenPlanning({ ...journalFacts, toolJournal: false })
      .thenParks(['dangling_tool_state'])
  })

  it('lists no open operation once every call is settled, and judges the boundary as Phase 1 did', () => {
    const l = rows()
    const user = l.protocolUserText('go')
    const first = l.protocolCall('call-1', 'read_file', { path: 'a' })
    const events = [
      user,
      first,
      l.dispatch(first, 'replay_safe'),
      l.outcome(first, 'normal_t2'),
      l.modelText('next'),
      l.terminal(),
    ]
    const { plan } = givenLedger(events).whenPlanning(journalFacts).thenParks(['provider_resume_boundary_unsupported'])
    expect(plan.openToolOperations).toBeUndefined()
  })

  it('parks operator_decision_required once three continuations adopted the operation', () => {
    const l = makeLedgerBuilderUnsafe()
    const user = l.protocolUserText('go')
    const call = l.protocolCall('call-1', 'read_file', { path: 'a' })
    const sourceRows = [user, call, l.dispatch(call, 'replay_safe'), l.terminal()]
    const chain: Array<{ header: AgentRun; events: ReadonlyArray<RuntimeEvent> }> = [
      { header: header(), events: sourceRows },
    ]
    const plan = [{ operationId: 'run-1-o2', toolCallId: 'call-1', action: 'reissue' }] as never
    for (let n = 2; n <= 4; n += 1) {
      const ids = { runId: `run-${n}`, invocationId: `invocation-${n}`, turnId: `turn-${n}` }
      const parent = chain.at(-1)!
      const h = continuationHeader(ids, parent.header, parent.events.length)
      const c = makeLedgerBuilderUnsafe({ sessionId: 'session-1', ...ids })
      const start = c.continuationStart(h.continuationSource!, {
        prefixDigest: `sha256:${'1'.repeat(64)}` as never,
        settlementPlan: plan,
      })
      chain.push({ header: h, events: [start, c.terminal()] })
    }
    const last = chain.at(-1)!
    givenLedger(last.events, {
      source: last.header,
      ancestors: chain.slice(0, -1).map(({ header: h, events }) => ({ header: h, ledger: ledgerOf(events) })),
    })
      .whenPlanning(journalFacts)
      .thenParks(['operator_decision_required'])
      .thenDetail('operator_decision_required', { operations: [{ operationId: 'run-1-o2', adoptions: 3 }] })
  })

  it('plans the same input twice to deep-equal plans', () => {
    const events = protocolRun('write_file', { path: 'a', content: 'b' }, (l, call) => [l.dispatch(call, 'reconcile')])
    const given = operationFacts({ currentMode: 'reconcile', probe: 'applied' })
    const a = givenLedger(events, given).whenPlanning(journalFacts).plan
    const b = givenLedger(events, given).whenPlanning(journalFacts).plan
    expect(a).toEqual(b)
  })
})

describe('the prefix digest a link records', () => {
  const chainOf = (recorded: string, pinDigest: string | undefined, startDigest = recorded) => {
    const l = makeLedgerBuilderUnsafe()
    const user = l.protocolUserText('go')
    const call = l.protocolCall('call-1', 'read_file', { path: 'a' })
    const sourceRows = [user, call, l.dispatch(call, 'replay_safe'), l.outcome(call, 'normal_t2'), l.terminal()]
    const ids = { runId: 'run-5', invocationId: 'invocation-5', turnId: 'turn-5' }
    const h = continuationHeader(ids, header(), sourceRows.length)
    const source = { ...h.continuationSource!, sourceRuntimeEventPrefixDigest: recorded as never }
    const c = makeLedgerBuilderUnsafe({ sessionId: 'session-1', ...ids })
    const rows = [c.continuationStart(source, { prefixDigest: startDigest as never }), c.modelText('ok'), c.terminal()]
    return givenLedger(rows, {
      source: { ...h, continuationSource: source },
      ancestors: [
        { header: header(), ledger: ledgerOf(sourceRows), ...(pinDigest === undefined ? {} : { pinDigest }) },
      ],
    })
  }
  const a = `sha256:${'a'.repeat(64)}`
  const b = `sha256:${'b'.repeat(64)}`

  it('parks source_prefix_digest_mismatch when the ancestor no longer hashes to it (exit 8a)', () => {
    chainOf(a, 'b'.repeat(64))
      .whenPlanning(journalFacts)
      .thenParks(['source_prefix_digest_mismatch'])
      .thenDetail('source_prefix_digest_mismatch', { runId: 'run-1', childRunId: 'run-5', pinnedHighWater: 5 })
  })

  it('passes when the ancestor hashes to it', () => {
    chainOf(a, 'a'.repeat(64)).whenPlanning(journalFacts).thenParks(['provider_resume_boundary_unsupported'])
  })

  it('reads a header whose digest differs from its start row’s as an unreadable chain', () => {
    chainOf(a, 'a'.repeat(64), b)
      .whenPlanning(journalFacts)
      .thenParks(['runtime_ledger_unreadable'])
      .thenDetail('runtime_ledger_unreadable', { reason: 'continuation_start_missing' })
  })
})
