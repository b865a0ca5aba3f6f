import * as E from 'fp-ts/lib/Either.js'
import {
  makeAbsolutePathUnsafe,
  makeFiniteNumberUnsafe,
  makeIsoTimestampUnsafe,
  makeNonEmptyStringUnsafe,
  makeNonNegativeIntUnsafe,
  makeRunIdUnsafe,
  makeSessionIdUnsafe,
} from '@maka/events'
import * as TE from 'fp-ts/lib/TaskEither.js'
import { describe, expect, it } from 'vitest'
import type { AgentRun, RuntimeEvent } from '@maka/events'
import type { StoreError } from '@maka/stores'
import {
  type ApprovedContinuation,
  decideContinuation,
  decideTerminal,
  decideTurnStart,
  providerIdentityOf,
} from '../src/index.js'
import {
  type WriteStep,
  continuationStartWrites,
  makePerformWrites,
  terminalWrites,
  turnStartWrites,
} from '../src/performWrites.js'
import { type RunWriter, runWriteFailed } from '../src/runWriter.js'

const createdAt = makeIsoTimestampUnsafe('2026-01-01T00:00:00.000Z')

const turn = decideTurnStart({
  sessionId: makeSessionIdUnsafe('session-1'),
  runId: makeRunIdUnsafe('run-1'),
  turnId: makeNonEmptyStringUnsafe('turn-1'),
  invocationId: makeNonEmptyStringUnsafe('inv-1'),
  cwd: makeAbsolutePathUnsafe('/workspace'),
  provider: providerIdentityOf({ providerId: 'scripted', modelId: 'scripted' }),
  prompt: 'hi',
  createdAt,
  stamp: { eventId: makeNonEmptyStringUnsafe('run-1-e1'), ts: makeFiniteNumberUnsafe(1) },
})

const continuation: ApprovedContinuation = {
  sessionId: makeSessionIdUnsafe('session-1'),
  invocationId: makeNonEmptyStringUnsafe('inv-2'),
  runId: makeRunIdUnsafe('run-2'),
  turnId: makeNonEmptyStringUnsafe('turn-2'),
  sourceInvocationId: makeNonEmptyStringUnsafe('inv-1'),
  sourceRunId: makeRunIdUnsafe('run-1'),
  sourceTurnId: makeNonEmptyStringUnsafe('turn-1'),
  sourceRuntimeEventHighWater: makeNonNegativeIntUnsafe(3),
  runtimeContext: [],
  sourceRuntimeContext: [],
  safetySnapshot: {
    workspaceIdentity: makeNonEmptyStringUnsafe('ws-1'),
    backgroundOperationsSettled: true,
    availableToolNames: [],
  },
}
const started = decideContinuation({
  continuation,
  sourceHeader: turn.header,
  provider: providerIdentityOf({ providerId: 'scripted', modelId: 'scripted' }),
  createdAt,
  stamp: { eventId: makeNonEmptyStringUnsafe('run-2-e1'), ts: makeFiniteNumberUnsafe(2) },
})

const shape = (steps: ReadonlyArray<WriteStep>) =>
  steps.map((s) => [s.write._tag, s.write._tag === 'SetStatus' ? s.write.status : null, s.after ?? null])

describe('the contract’s write order', () => {
  it('a normal turn: header, durable initial user row, then running', () => {
    expect(shape(turnStartWrites(turn))).toEqual([
      ['CreateRun', null, 'after_run_created'],
      ['AppendRow', null, 'after_initial_user_committed'],
      ['SetStatus', 'running', null],
    ])
  })

  it('a continuation: the claim with its target header, then the durable start row', () => {
    const steps = continuationStartWrites(started)
    expect(shape(steps)).toEqual([
      ['ClaimBoundary', null, 'after_run_created'],
      ['AppendRow', null, 'after_continuation_start_committed'],
    ])
    expect(steps[1]?.write).toMatchObject({ durable: true, row: started.startRow })
  })

  it('an end: the durable terminal event before the durable terminal header', () => {
    const terminal = decideTerminal(
      turn.header,
      { _tag: 'Completed' },
      { eventId: makeNonEmptyStringUnsafe('run-1-e2'), ts: makeFiniteNumberUnsafe(3) },
      createdAt,
    )
    const steps = terminalWrites(terminal)
    expect(shape(steps)).toEqual([
      ['AppendRow', null, 'after_terminal_event_committed'],
      ['SetStatus', 'completed', 'after_terminal_header_committed'],
    ])
    expect(
      steps.every((s) => s.write._tag === 'ClaimBoundary' || s.write._tag === 'CreateRun' || s.write.durable),
    ).toBe(true)
  })
})

const ioFailed: StoreError = {
  _tag: 'IoFailed',
  operation: 'append',
  path: '/data/x',
  code: 'ENOSPC',
  subject: 'ledger',
  detail: 'no space left on device',
  message: 'no space left on device',
}

/** Records every store call, writer call and crash point, in order; `failAt` names the call that fails. */
const harness = (failAt: string | null) => {
  const log: Array<string> = []
  const storeCall = (name: string) => {
    log.push(name)
    return name === failAt ? TE.left(ioFailed) : TE.right(undefined)
  }
  const writerFor = (header: AgentRun): RunWriter => ({
    header: () => header,
    committed: () => [],
    terminated: () => false,
    nextRow: () => 1,
    stamp: () => ({ eventId: makeNonEmptyStringUnsafe('x'), ts: makeFiniteNumberUnsafe(0) }),
    append: () => TE.right(null),
    appendRow: (row: RuntimeEvent, options) => {
      const name = `append:${row.id}${options?.durable === true ? ':durable' : ''}`
      log.push(name)
      return name === failAt ? TE.left(runWriteFailed('append', ioFailed)) : TE.right(row)
    },
    setStatus: (status, _extra, options) => {
      const name = `status:${status}${options?.durable === true ? ':durable' : ''}`
      log.push(name)
      return name === failAt ? TE.left(runWriteFailed('update header', ioFailed)) : TE.right(undefined)
    },
  })
  const perform = makePerformWrites({
    stores: {
      claims: { claimBoundary: (claim) => storeCall(`claim:${claim.targetRunId}`) },
      runs: { create: (header) => storeCall(`create:${header.runId}`) },
    },
    newRunWriter: (header) => {
      log.push(`writer:${header.runId}`)
      return writerFor(header)
    },
    crashPoint: (runId) => (point) => {
      log.push(`crash:${runId}:${point}`)
      return Promise.resolve()
    },
  })
  return { log, perform }
}

describe('performWrites', () => {
  const cases: ReadonlyArray<{
    readonly name: string
    readonly steps: ReadonlyArray<WriteStep>
    readonly failAt: string | null
    readonly log: ReadonlyArray<string>
    readonly failure: { readonly _tag: string; readonly write: string } | null
  }> = [
    {
      name: 'a normal turn opens in order, each write followed by its crash point',
      steps: turnStartWrites(turn),
      failAt: null,
      log: [
        'create:run-1',
        'writer:run-1',
        'crash:run-1:after_run_created',
        'append:run-1-e1:durable',
        'crash:run-1:after_initial_user_committed',
        'status:running',
      ],
      failure: null,
    },
    {
      name: 'a refused header writes nothing more and opens no writer',
      steps: turnStartWrites(turn),
      failAt: 'create:run-1',
      log: ['create:run-1'],
      failure: { _tag: 'NotOpened', write: 'CreateRun' },
    },
    {
      name: 'a continuation claims before its start row',
      steps: continuationStartWrites(started),
      failAt: null,
      log: [
        'claim:run-2',
        'writer:run-2',
        'crash:run-2:after_run_created',
        'append:run-2-e1:durable',
        'crash:run-2:after_continuation_start_committed',
      ],
      failure: null,
    },
    {
      name: 'a refused claim writes no start row',
      steps: continuationStartWrites(started),
      failAt: 'claim:run-2',
      log: ['claim:run-2'],
      failure: { _tag: 'NotOpened', write: 'ClaimBoundary' },
    },
    {
      name: 'a start row that is not durable stops before its crash point',
      steps: continuationStartWrites(started),
      failAt: 'append:run-2-e1:durable',
      log: ['claim:run-2', 'writer:run-2', 'crash:run-2:after_run_created', 'append:run-2-e1:durable'],
      failure: { _tag: 'Interrupted', write: 'AppendRow' },
    },
  ]

  for (const c of cases) {
    it(c.name, async () => {
      const { log, perform } = harness(c.failAt)
      const result = await perform(c.steps)
      expect(log).toEqual(c.log)
      if (c.failure === null) {
        expect(E.isRight(result)).toBe(true)
      } else {
        expect(E.isLeft(result) ? result.left : null).toMatchObject(c.failure)
      }
    })
  }

  it('writes a terminal header only after its terminal event, on the given writer', async () => {
    const { log, perform } = harness('append:run-1-e2:durable')
    const terminal = decideTerminal(
      turn.header,
      { _tag: 'Completed' },
      { eventId: makeNonEmptyStringUnsafe('run-1-e2'), ts: makeFiniteNumberUnsafe(3) },
      createdAt,
    )
    const opened = await perform(turnStartWrites(turn))
    if (E.isLeft(opened)) throw new Error('the turn did not open')
    log.length = 0
    const result = await perform(terminalWrites(terminal), opened.right)
    expect(log).toEqual(['append:run-1-e2:durable'])
    expect(E.isLeft(result) && result.left._tag === 'Interrupted' ? result.left.failure : null).toEqual({
      _tag: 'RunWriteFailed',
      operation: 'append',
      error: ioFailed,
    })
  })
})
