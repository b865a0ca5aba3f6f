import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import {
  AgentRun,
  ContinuationClaim,
  OwnerLock,
  ProcessIdentity,
  RunId,
  SessionRecord,
  ShellRun,
  ShellRunExit,
  decodeAgentRun,
  decodeRuntimeEvent,
  isSafeId,
  makeContinuationStartEvent,
  makeFiniteNumberUnsafe,
  makeInitialUserEvent,
  makeNonEmptyStringUnsafe,
  makeNonNegativeIntUnsafe,
  makeRunIdUnsafe,
  makeTerminalEvent,
} from '../src/index.js'
import { makeLedgerBuilderUnsafe } from '../src/testing.js'

const identity = {
  sessionId: makeNonEmptyStringUnsafe('s1'),
  invocationId: makeNonEmptyStringUnsafe('i1'),
  runId: makeNonEmptyStringUnsafe('r1'),
  turnId: makeNonEmptyStringUnsafe('t1'),
}
const stamp = { eventId: makeNonEmptyStringUnsafe('e1'), ts: makeFiniteNumberUnsafe(1) }

const header = {
  runId: 'run-1',
  sessionId: 'session-1',
  turnId: 'turn-1',
  invocationId: 'inv-1',
  status: 'running',
  cwd: '/tmp/work',
  providerId: 'scripted',
  modelId: 'demo',
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:01.000Z',
}

describe('ids', () => {
  describe('when checking path-safe ids', () => {
    it.each([
      ['run-1', true],
      ['A_b-9', true],
      ['x'.repeat(128), true],
      ['x'.repeat(129), false],
      ['', false],
      ['..', false],
      ['a/b', false],
      ['a b', false],
      ['é', false],
    ])('%j → %s', (id, ok) => {
      expect(isSafeId(id)).toBe(ok)
      expect(E.isRight(RunId.decode(id))).toBe(ok)
    })
  })
})

describe('RuntimeEvent', () => {
  describe('when decoding rows the runtime writes', () => {
    const l = makeLedgerBuilderUnsafe()
    const rows = [
      l.userText('hi'),
      l.modelText('hello'),
      l.thinking('hmm'),
      l.functionCall('c1', 'shell', { cmd: 'ls' }),
      l.functionResponse('c1', 'shell', { out: '' }, true),
      l.permissionRequest('p1', 'shell', 'c1'),
      l.permissionDecision('p1', 'deny'),
      l.errorFact('bad'),
      l.terminal(),
      l.terminal({ status: 'completed' }),
      l.terminal({ status: 'cancelled', reason: 'user' }),
      l.partial(l.modelText('stream')),
    ]
    it.each(rows.map((row) => [row.id, row] as const))('%s round-trips through JSON', (_id, row) => {
      expect(decodeRuntimeEvent(JSON.parse(JSON.stringify(row)))).toEqual(E.right(row))
    })
  })

  describe('when a row has an unknown key anywhere', () => {
    const l = makeLedgerBuilderUnsafe()
    const base = JSON.parse(JSON.stringify(l.functionCall('c1', 'shell', { cmd: 'ls' }))) as Record<string, unknown>
    it.each([
      ['the row', { ...base, extra: 1 }, 'extra'],
      ['the content', { ...base, content: { ...(base['content'] as object), extra: 1 } }, 'extra'],
      ['the refs', { ...base, refs: { extraRef: 'x' } }, 'extraRef'],
      ['the actions', { ...base, actions: { bogus: true } }, 'bogus'],
    ])('rejects an unknown key in %s and names it', (_where, row, key) => {
      const result = decodeRuntimeEvent(row)
      expect(E.isLeft(result)).toBe(true)
      if (E.isLeft(result)) expect(result.left).toContain(key)
    })
  })

  describe('when a row is malformed', () => {
    const l = makeLedgerBuilderUnsafe()
    const base = JSON.parse(JSON.stringify(l.userText('secret prompt'))) as Record<string, unknown>
    it.each([
      ['a missing id', { ...base, id: undefined }],
      ['an empty runId', { ...base, runId: '' }],
      ['an unknown role', { ...base, role: 'assistant' }],
      ['an unknown author', { ...base, author: 'bot' }],
      ['a non-boolean partial', { ...base, partial: 'no' }],
      ['an unknown content kind', { ...base, content: { kind: 'image', url: 'x' } }],
      ['an unknown status', { ...base, status: 'done' }],
      ['a negative high-water ref', { ...base, refs: { sourceRuntimeEventHighWater: -1 } }],
      ['an array', [base]],
      ['null', null],
    ])('rejects %s', (_name, row) => {
      expect(E.isLeft(decodeRuntimeEvent(row))).toBe(true)
    })

    it('never puts row values into the error sentence', () => {
      const result = decodeRuntimeEvent({ ...base, content: { kind: 'text', text: 42 }, role: 'secret prompt' })
      expect(E.isLeft(result) && !result.left.includes('secret prompt')).toBe(true)
    })
  })

  describe('when constructing lifecycle rows', () => {
    it('builds an initial user event that decodes', () => {
      const row = makeInitialUserEvent(identity, stamp, 'do it')
      expect(E.isRight(decodeRuntimeEvent(row))).toBe(true)
      expect(row).toMatchObject({
        role: 'user',
        author: 'user',
        partial: false,
        content: { kind: 'text', text: 'do it' },
      })
    })

    it('builds a continuation-start event with the four source refs and no content or status', () => {
      const row = makeContinuationStartEvent(identity, stamp, {
        sourceInvocationId: makeNonEmptyStringUnsafe('i0'),
        sourceRunId: makeRunIdUnsafe('r0'),
        sourceTurnId: makeNonEmptyStringUnsafe('t0'),
        sourceRuntimeEventHighWater: makeNonNegativeIntUnsafe(4),
      })
      expect(E.isRight(decodeRuntimeEvent(row))).toBe(true)
      expect(row.content).toBeUndefined()
      expect(row.status).toBeUndefined()
      expect(row.actions).toEqual({ stateDelta: { continuationStart: true } })
      expect(row.refs).toEqual({
        sourceInvocationId: 'i0',
        sourceRunId: 'r0',
        sourceTurnId: 't0',
        sourceRuntimeEventHighWater: 4,
      })
    })

    it('builds a failed terminal carrying the failure class as code and in stateDelta', () => {
      const row = makeTerminalEvent(identity, stamp, {
        status: 'failed',
        failureClass: 'app_restarted',
        message: 'restarted',
        stateDelta: { recovered: true, recoveryReason: 'no terminal event' },
      })
      expect(E.isRight(decodeRuntimeEvent(row))).toBe(true)
      expect(row).toMatchObject({
        role: 'system',
        author: 'system',
        status: 'failed',
        content: { kind: 'error', code: 'app_restarted' },
        actions: { endInvocation: true, stateDelta: { failureClass: 'app_restarted', recovered: true } },
      })
    })
  })
})

describe('AgentRun', () => {
  describe('when decoding headers', () => {
    it('accepts a minimal header and a continuation header', () => {
      expect(E.isRight(decodeAgentRun(header))).toBe(true)
      const continuation = {
        ...header,
        parentRunId: 'run-0',
        parentTurnId: 'turn-0',
        continuationSource: {
          sourceInvocationId: 'inv-0',
          sourceRunId: 'run-0',
          sourceTurnId: 'turn-0',
          sourceRuntimeEventHighWater: 3,
        },
      }
      expect(E.isRight(AgentRun.decode(continuation))).toBe(true)
    })

    it.each([
      ['an unknown key', { ...header, extra: true }],
      ['an unsafe run id', { ...header, runId: '../x' }],
      ['a relative cwd', { ...header, cwd: 'work' }],
      ['a non-ISO time', { ...header, createdAt: 'yesterday' }],
      ['an unknown status', { ...header, status: 'paused' }],
      ['an extra key in continuationSource', { ...header, continuationSource: { sourceRunId: 'r', x: 1 } }],
    ])('rejects %s', (_name, value) => {
      expect(E.isLeft(decodeAgentRun(value))).toBe(true)
    })
  })
})

describe('records', () => {
  it('SessionRecord tolerates unknown keys (it is a projection)', () => {
    expect(
      E.isRight(SessionRecord.decode({ sessionId: 's', cwd: '/w', createdAt: '2026-01-01T00:00:00Z', color: 'red' })),
    ).toBe(true)
  })

  it('ShellRun and OwnerLock carry an optional bootId and startTicks, checked exactly', () => {
    const identity = { bootId: 'b7c1f0e2-54a9-4c3e-9d0e-1f2a3b4c5d6e', startTicks: 123456 }
    const shell = {
      shellRunId: 'sh1',
      sessionId: 's',
      runId: 'r',
      command: 'sleep 1',
      status: 'running',
      pid: 10,
      startedAt: '2026-01-01T00:00:00Z',
    }
    const lock = { pid: 1, hostname: 'h', startedAt: '2026-01-01T00:00:00Z' }
    const decoders: ReadonlyArray<[(u: unknown) => E.Either<unknown, unknown>, object]> = [
      [(u) => ShellRun.decode(u), shell],
      [(u) => OwnerLock.decode(u), lock],
    ]
    for (const [decode, base] of decoders) {
      expect(E.isRight(decode(base))).toBe(true)
      expect(E.isRight(decode({ ...base, ...identity }))).toBe(true)
      expect(E.isLeft(decode({ ...base, ...identity, startTicks: -1 }))).toBe(true)
      expect(E.isLeft(decode({ ...base, ...identity, startTicks: 1.5 }))).toBe(true)
      expect(E.isLeft(decode({ ...base, ...identity, bootId: '' }))).toBe(true)
      expect(E.isLeft(decode({ ...base, ...identity, bootId: 7 }))).toBe(true)
    }
    expect(E.isRight(ProcessIdentity.decode(identity))).toBe(true)
    expect(E.isLeft(ProcessIdentity.decode({ bootId: identity.bootId }))).toBe(true)
  })

  it('ShellRun, OwnerLock and ContinuationClaim reject unknown keys', () => {
    const shell = {
      shellRunId: 'sh1',
      sessionId: 's',
      runId: 'r',
      command: 'sleep 1',
      status: 'running',
      pid: 10,
      startedAt: '2026-01-01T00:00:00Z',
    }
    expect(E.isRight(ShellRun.decode(shell))).toBe(true)
    expect(E.isLeft(ShellRun.decode({ ...shell, more: 1 }))).toBe(true)
    const lock = { pid: 1, hostname: 'h', startedAt: '2026-01-01T00:00:00Z' }
    expect(E.isRight(OwnerLock.decode(lock))).toBe(true)
    expect(E.isLeft(OwnerLock.decode({ ...lock, more: 1 }))).toBe(true)
    const claim = {
      sessionId: 's',
      sourceInvocationId: 'i',
      sourceRunId: 'r',
      sourceTurnId: 't',
      sourceRuntimeEventHighWater: 3,
      targetInvocationId: 'i2',
      targetRunId: 'r2',
      targetTurnId: 't2',
      claimedAt: '2026-01-01T00:00:00Z',
    }
    expect(E.isRight(ContinuationClaim.decode(claim))).toBe(true)
    expect(E.isLeft(ContinuationClaim.decode({ ...claim, more: 1 }))).toBe(true)
  })

  it('ShellRun carries an optional operationId (a supervised foreground run), checked exactly', () => {
    const shell = {
      shellRunId: 'sh1',
      sessionId: 's',
      runId: 'r',
      command: 'make',
      status: 'running',
      pid: 10,
      startedAt: '2026-01-01T00:00:00Z',
    }
    expect(E.isRight(ShellRun.decode({ ...shell, operationId: 'r-o3' }))).toBe(true)
    expect(E.isLeft(ShellRun.decode({ ...shell, operationId: '' }))).toBe(true)
    expect(E.isLeft(ShellRun.decode({ ...shell, operationId: 3 }))).toBe(true)
  })

  it("ShellRunExit is the exact shape of a supervised command's exit file", () => {
    const exit = { exitCode: 0, signal: null, stdoutBytes: 12, stderrBytes: 0 }
    expect(E.isRight(ShellRunExit.decode(exit))).toBe(true)
    expect(E.isRight(ShellRunExit.decode({ ...exit, exitCode: null, signal: 'SIGKILL', timedOut: true }))).toBe(true)
    for (const bad of [
      { ...exit, timedOut: false },
      { ...exit, exitCode: -1 },
      { ...exit, exitCode: 1.5 },
      { ...exit, signal: '' },
      { ...exit, stdoutBytes: -1 },
      { exitCode: 0, signal: null, stdoutBytes: 0 },
      { ...exit, more: 1 },
    ]) {
      expect(E.isLeft(ShellRunExit.decode(bad))).toBe(true)
    }
  })
})
