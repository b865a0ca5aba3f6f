import { describe, expect, it } from 'vitest'
import { makeFiniteNumberUnsafe, makeIsoTimestampUnsafe, makeNonEmptyStringUnsafe } from '@maka/events'
import type { AgentRun, ContinuationClaim, RunStatus, RuntimeEvent } from '@maka/events'
import { makeLedgerBuilderUnsafe } from '@maka/events/testing'
import { type LedgerSnapshot, emptyLedgerSnapshot } from '@maka/stores'
import { decideAbandonedClaim, decideRunRecovery, type RunRecoveryDecision } from '../src/index.js'

const identity = { sessionId: 'session-1', invocationId: 'inv-1', runId: 'run-1', turnId: 'turn-1' }

const headerWith = (status: RunStatus, extra: Readonly<Record<string, string>> = {}): AgentRun =>
  ({
    ...identity,
    status,
    cwd: '/workspace',
    providerId: 'scripted',
    modelId: 'scripted',
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:01.000Z',
    ...extra,
  }) as AgentRun

const stamp = {
  now: makeIsoTimestampUnsafe('2026-01-02T00:00:00.000Z'),
  ts: makeFiniteNumberUnsafe(1_767_312_000_000),
  eventId: makeNonEmptyStringUnsafe('run-1-e99'),
}

const ledgerOf = (events: ReadonlyArray<RuntimeEvent>, problem: LedgerSnapshot['problem'] = null): LedgerSnapshot => ({
  ...emptyLedgerSnapshot,
  events,
  highWater: events.length,
  problem,
})

/** user → call → response: an interrupted prefix with no terminal event. */
const interruptedRows = () => {
  const b = makeLedgerBuilderUnsafe(identity)
  return { b, rows: [b.userText('hi'), b.functionCall('c-1', 'count'), b.functionResponse('c-1', 'count')] }
}

/** Applies a decision as the runner would: append the event, then write the header. */
const apply = (
  header: AgentRun,
  events: ReadonlyArray<RuntimeEvent>,
  decision: RunRecoveryDecision,
): { header: AgentRun; events: ReadonlyArray<RuntimeEvent> } => {
  switch (decision._tag) {
    case 'AppendTerminal':
      return { header: decision.header, events: [...events, decision.event] }
    case 'RepairHeader':
      return { header: decision.header, events }
    case 'Consistent':
    case 'LeaveUntouched':
      return { header, events }
  }
}

describe('decideRunRecovery', () => {
  describe('when the header is running and the ledger has no terminal event', () => {
    it('appends a recovered app_restarted terminal event and the matching failed header', () => {
      const { rows } = interruptedRows()
      const header = headerWith('running')
      const decision = decideRunRecovery(header, ledgerOf(rows), stamp)

      expect(decision._tag).toBe('AppendTerminal')
      if (decision._tag !== 'AppendTerminal') return
      expect(decision.failureClass).toBe('app_restarted')
      const event = decision.event
      expect(event).toMatchObject({
        id: 'run-1-e99',
        ...identity,
        ts: stamp.ts,
        partial: false,
        role: 'system',
        author: 'system',
        status: 'failed',
        content: { kind: 'error', code: 'app_restarted' },
      })
      expect(event.actions?.endInvocation).toBe(true)
      expect(event.actions?.stateDelta).toEqual({
        recovered: true,
        recoveryReason: expect.any(String) as string,
        failureClass: 'app_restarted',
      })
      expect(typeof event.actions?.stateDelta?.['recoveryReason']).toBe('string')
      expect((event.actions?.stateDelta?.['recoveryReason'] as string).length).toBeGreaterThan(0)
      expect(decision.header).toEqual({
        ...header,
        status: 'failed',
        failureClass: 'app_restarted',
        updatedAt: stamp.now,
        completedAt: stamp.now,
      })
    })
  })

  describe('when the header is running and the ledger has exactly one terminal event', () => {
    it('repairs the header from that event (completed)', () => {
      const { b, rows } = interruptedRows()
      const terminal = b.terminal({ status: 'completed' })
      const header = headerWith('running')
      const decision = decideRunRecovery(header, ledgerOf([...rows, b.modelText('done'), terminal]), stamp)

      expect(decision).toEqual({
        _tag: 'RepairHeader',
        header: { ...header, status: 'completed', updatedAt: stamp.now, completedAt: stamp.now },
      })
    })

    it('repairs the header from that event (failed, with its failure class)', () => {
      const { b, rows } = interruptedRows()
      const terminal = b.terminal({ status: 'failed', failureClass: 'provider_error', message: 'boom' })
      const header = headerWith('waiting_permission')
      const decision = decideRunRecovery(header, ledgerOf([...rows, terminal]), stamp)

      expect(decision).toEqual({
        _tag: 'RepairHeader',
        header: {
          ...header,
          status: 'failed',
          failureClass: 'provider_error',
          updatedAt: stamp.now,
          completedAt: stamp.now,
        },
      })
    })

    it('maps an aborted terminal event to a cancelled header', () => {
      const { b, rows } = interruptedRows()
      const decision = decideRunRecovery(
        headerWith('running'),
        ledgerOf([...rows, b.terminal({ status: 'aborted' })]),
        stamp,
      )

      expect(decision._tag).toBe('RepairHeader')
      expect(decision._tag === 'RepairHeader' && decision.header.status).toBe('cancelled')
    })
  })

  describe('when the header is failed and matches the single terminal event', () => {
    it('is consistent', () => {
      const { b, rows } = interruptedRows()
      const terminal = b.terminal()
      const decision = decideRunRecovery(
        headerWith('failed', { failureClass: 'app_restarted' }),
        ledgerOf([...rows, terminal]),
        stamp,
      )

      expect(decision).toEqual({ _tag: 'Consistent' })
    })
  })

  describe('when the header is completed but the ledger holds no terminal event', () => {
    it('appends a failed missing_terminal_event terminal and a failed header', () => {
      const { b } = interruptedRows()
      const rows = [b.userText('hi'), b.modelText('all done')]
      const header = headerWith('completed', { completedAt: '2026-01-01T00:00:05.000Z' })
      const decision = decideRunRecovery(header, ledgerOf(rows), stamp)

      expect(decision._tag).toBe('AppendTerminal')
      if (decision._tag !== 'AppendTerminal') return
      expect(decision.failureClass).toBe('missing_terminal_event')
      expect(decision.event).toMatchObject({
        status: 'failed',
        role: 'system',
        author: 'system',
        content: { kind: 'error', code: 'missing_terminal_event' },
        actions: { endInvocation: true, stateDelta: { recovered: true, failureClass: 'missing_terminal_event' } },
      })
      expect(decision.header).toMatchObject({ status: 'failed', failureClass: 'missing_terminal_event' })
      // The end the header claimed is kept; the ledger now explains it.
      expect(decision.header.completedAt).toBe('2026-01-01T00:00:05.000Z')
    })
  })

  describe('when the ledger has two terminal events', () => {
    it('leaves the run untouched as ambiguous_terminal', () => {
      const { b, rows } = interruptedRows()
      const decision = decideRunRecovery(
        headerWith('running'),
        ledgerOf([...rows, b.terminal({ status: 'completed' }), b.terminal()]),
        stamp,
      )

      expect(decision).toEqual({ _tag: 'LeaveUntouched', reason: 'ambiguous_terminal' })
    })
  })

  describe('when the ledger has a problem', () => {
    it('leaves an unreadable ledger untouched', () => {
      const { rows } = interruptedRows()
      const decision = decideRunRecovery(
        headerWith('running'),
        ledgerOf(rows, { _tag: 'Unreadable', line: 3, reason: 'not JSON' }),
        stamp,
      )

      expect(decision).toEqual({ _tag: 'LeaveUntouched', reason: 'ledger_unreadable' })
    })

    it('leaves a ledger holding another run’s row untouched', () => {
      const { rows } = interruptedRows()
      const decision = decideRunRecovery(
        headerWith('completed'),
        ledgerOf(rows, { _tag: 'IdentityMismatch', line: 2, field: 'runId' }),
        stamp,
      )

      expect(decision).toEqual({ _tag: 'LeaveUntouched', reason: 'identity_mismatch' })
    })
  })

  describe('when a decision is applied and the run is decided again', () => {
    const cases: ReadonlyArray<{ readonly name: string; readonly status: RunStatus; readonly terminal: boolean }> = [
      { name: 'running, no terminal', status: 'running', terminal: false },
      { name: 'created, no terminal', status: 'created', terminal: false },
      { name: 'running, one terminal', status: 'running', terminal: true },
      { name: 'completed, no terminal', status: 'completed', terminal: false },
    ]
    it.each(cases)('is consistent the second time ($name)', ({ status, terminal }) => {
      const { b, rows } = interruptedRows()
      const events = terminal ? [...rows, b.terminal({ status: 'completed' })] : rows
      const first = decideRunRecovery(headerWith(status), ledgerOf(events), stamp)
      expect(first._tag).not.toBe('Consistent')

      const repaired = apply(headerWith(status), events, first)
      const second = decideRunRecovery(repaired.header, ledgerOf(repaired.events), {
        ...stamp,
        eventId: makeNonEmptyStringUnsafe('run-1-e100'),
      })

      expect(second).toEqual({ _tag: 'Consistent' })
    })
  })
})

describe('decideAbandonedClaim', () => {
  const claim = {
    sessionId: 'session-1',
    sourceInvocationId: 'inv-1',
    sourceRunId: 'run-1',
    sourceTurnId: 'turn-1',
    sourceRuntimeEventHighWater: 3,
    targetInvocationId: 'inv-2',
    targetRunId: 'run-2',
    targetTurnId: 'turn-2',
    claimedAt: '2026-01-01T00:00:02.000Z',
  } as unknown as ContinuationClaim
  const createdAt = makeIsoTimestampUnsafe('2026-01-02T00:00:00.000Z')
  const closeStamp = {
    now: makeIsoTimestampUnsafe('2026-01-02T00:00:01.000Z'),
    ts: makeFiniteNumberUnsafe(1_767_312_001_000),
    eventId: makeNonEmptyStringUnsafe('run-2-e1'),
  }

  const sources: ReadonlyArray<readonly [string, Readonly<Record<string, string>>, ReadonlyArray<string>]> = [
    ['a source with endpoint and workspace identity', { providerBaseUrl: 'http://x', workspaceIdentity: 'ws-1' }, []],
    ['a source without them', {}, ['providerBaseUrl', 'workspaceIdentity']],
  ]
  for (const [name, extra, absent] of sources) {
    it(`creates the target from the claim and ${name}, then closes it as abandoned`, () => {
      const source = headerWith('failed', extra)
      const repair = decideAbandonedClaim(claim, source, createdAt, closeStamp)
      expect(repair.header).toMatchObject({
        runId: 'run-2',
        turnId: 'turn-2',
        invocationId: 'inv-2',
        status: 'created',
        cwd: source.cwd,
        createdAt,
        parentRunId: 'run-1',
        continuationSource: { sourceRunId: 'run-1', sourceRuntimeEventHighWater: 3 },
        ...extra,
      })
      for (const field of absent) expect(repair.header).not.toHaveProperty(field)
      expect(repair.terminal).toMatchObject({ id: 'run-2-e1', runId: 'run-2', status: 'failed' })
      expect(repair.closedHeader).toMatchObject({
        status: 'failed',
        failureClass: 'continuation_abandoned_before_start',
        completedAt: closeStamp.now,
      })
      // Applying the repair leaves a run the run decider finds consistent: the pass is idempotent.
      expect(decideRunRecovery(repair.closedHeader, ledgerOf([repair.terminal]), stamp)._tag).toBe('Consistent')
    })
  }
})
