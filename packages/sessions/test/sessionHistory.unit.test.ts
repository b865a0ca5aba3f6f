import { type AgentRun, type RuntimeEvent, isModelVisible } from '@maka/events'
import { makeLedgerBuilderUnsafe } from '@maka/events/testing'
import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { INTERRUPTED_TURN_NOTE, type SessionRunRead, UNKNOWN_OUTCOME_RESULT, sessionHistory } from '../src/index.js'
import { continuationHeader, header, ledgerOf } from './givenSession.js'

// -------------------------------------------------------------------------------------
// given
// -------------------------------------------------------------------------------------

const turnHeader = (n: number, overrides: Record<string, unknown> = {}): AgentRun =>
  header(
    {
      runId: `run-${n}`,
      invocationId: `invocation-${n}`,
      turnId: `turn-${n}`,
      status: 'completed',
      createdAt: `2026-01-01T00:0${n}:00.000Z`,
      ...overrides,
    },
    ['failureClass'],
  )

const builderOf = (h: AgentRun) =>
  makeLedgerBuilderUnsafe({ sessionId: h.sessionId, invocationId: h.invocationId, runId: h.runId, turnId: h.turnId })

const read = (h: AgentRun, events: ReadonlyArray<RuntimeEvent>): SessionRunRead => ({
  header: h,
  ledger: ledgerOf(events),
})

/** A completed turn: the user asked `ask`, the model answered `answer`. */
const completedTurn = (n: number, ask: string, answer: string) => {
  const h = turnHeader(n)
  const l = builderOf(h)
  return { header: h, events: [l.userText(ask), l.modelText(answer), l.terminal({ status: 'completed' })] }
}

// What a model sees of a history: the texts and tool facts, in order.
const visible = (history: E.Either<unknown, ReadonlyArray<RuntimeEvent>>) => {
  if (E.isLeft(history)) throw new Error(`expected a history, got ${JSON.stringify(history.left)}`)
  return history.right.filter(isModelVisible).map((event) => {
    const content = event.content
    switch (content?.kind) {
      case 'text':
        return `${event.role}: ${content.text}`
      case 'function_call':
        return `call ${content.id}`
      case 'function_response':
        return `response ${content.id}`
      default:
        return content?.kind
    }
  })
}

// -------------------------------------------------------------------------------------
// when / then
// -------------------------------------------------------------------------------------

describe('sessionHistory', () => {
  describe('when the session has no runs', () => {
    it('is empty', () => {
      expect(sessionHistory([])).toEqual(E.right([]))
    })
  })

  describe('when a turn was stamped with a UTC offset', () => {
    it('orders turns by the instant they were created, the order the "latest" entry uses', () => {
      const first = completedTurn(1, 'my name is Ada', 'Hello Ada.')
      // 23:45 at -01:00 is 00:45Z, after the first turn, though its text sorts before it.
      const secondHeader = turnHeader(2, { createdAt: '2025-12-31T23:45:00.000-01:00' })
      const l = builderOf(secondHeader)
      const second = [l.userText('I like tea'), l.modelText('Noted.'), l.terminal({ status: 'completed' })]
      const history = sessionHistory([read(first.header, first.events), read(secondHeader, second)])
      expect(visible(history)).toEqual([
        'user: my name is Ada',
        'model: Hello Ada.',
        'user: I like tea',
        'model: Noted.',
      ])
    })
  })

  describe('when earlier turns completed', () => {
    it('replays each turn in the order the turns were created, whatever the listing order', () => {
      const first = completedTurn(1, 'my name is Ada', 'Hello Ada.')
      const second = completedTurn(2, 'I like tea', 'Noted.')
      const history = sessionHistory([read(second.header, second.events), read(first.header, first.events)])
      expect(visible(history)).toEqual([
        'user: my name is Ada',
        'model: Hello Ada.',
        'user: I like tea',
        'model: Noted.',
      ])
    })
  })

  describe('when an earlier turn failed with a dangling tool call', () => {
    it('keeps what Phase 0 replays, and tells the model the unresolved call has no known outcome', () => {
      const h = turnHeader(1, { status: 'failed', failureClass: 'app_restarted' })
      const l = builderOf(h)
      const events = [
        l.userText('write a.txt'),
        l.functionCall('call-done', 'read_file'),
        l.functionResponse('call-done', 'read_file'),
        l.functionCall('call-open', 'write_file', { path: 'a.txt' }),
        l.terminal(),
      ]
      const history = sessionHistory([read(h, events)])
      expect(visible(history)).toEqual([
        'user: write a.txt',
        'call call-done',
        'response call-done',
        'call call-open',
        'response call-open',
      ])
      const unknown = E.isRight(history) ? history.right.at(-1) : undefined
      expect(unknown?.content).toEqual({
        kind: 'function_response',
        id: 'call-open',
        name: 'write_file',
        result: UNKNOWN_OUTCOME_RESULT,
        isError: true,
      })
    })
  })

  describe('when an earlier turn ended before the model answered', () => {
    it('closes it with a note, so the next user message never follows another', () => {
      const h = turnHeader(1, { status: 'failed', failureClass: 'app_restarted' })
      const l = builderOf(h)
      const later = completedTurn(2, 'are you there?', 'Yes.')
      const history = sessionHistory([read(h, [l.userText('hello'), l.terminal()]), read(later.header, later.events)])
      expect(visible(history)).toEqual([
        'user: hello',
        `model: ${INTERRUPTED_TURN_NOTE}`,
        'user: are you there?',
        'model: Yes.',
      ])
    })
  })

  describe('when a turn was continued', () => {
    const source = turnHeader(1, { status: 'failed', failureClass: 'app_restarted' })
    const s = builderOf(source)
    const sourceEvents = [
      s.userText('list the files'),
      s.functionCall('call-1', 'list_dir'),
      s.functionResponse('call-1', 'list_dir'),
      s.terminal(),
    ]
    const continuation = continuationHeader(
      { runId: 'run-1b', invocationId: 'invocation-1b', turnId: 'turn-1b' },
      source,
      sourceEvents.length,
      { status: 'completed', createdAt: '2026-01-01T00:01:30.000Z' },
    )
    const c = builderOf(continuation)
    const continuationEvents = [
      c.continuationStart(continuation.continuationSource!),
      c.modelText('There is one file.'),
      c.terminal({ status: 'completed' }),
    ]
    const later = completedTurn(2, 'thanks', 'You are welcome.')

    it('replays the lineage once, through its latest run, before the later turn', () => {
      const history = sessionHistory([
        read(later.header, later.events),
        read(continuation, continuationEvents),
        read(source, sourceEvents),
      ])
      expect(visible(history)).toEqual([
        'user: list the files',
        'call call-1',
        'response call-1',
        'model: There is one file.',
        'user: thanks',
        'model: You are welcome.',
      ])
    })

    it('gives a continuation only the lineages before its own', () => {
      const history = sessionHistory(
        [read(later.header, later.events), read(continuation, continuationEvents), read(source, sourceEvents)],
        { before: 'run-2' },
      )
      expect(visible(history)).toEqual([
        'user: list the files',
        'call call-1',
        'response call-1',
        'model: There is one file.',
      ])
      expect(
        sessionHistory([read(continuation, continuationEvents), read(source, sourceEvents)], { before: 'run-1b' }),
      ).toEqual(E.right([]))
    })

    it('fails closed when the source of the latest run is gone', () => {
      expect(sessionHistory([read(continuation, continuationEvents)])).toEqual(
        E.left({ runId: 'run-1b', reason: 'continuation source is missing' }),
      )
    })
  })

  describe('when the session holds a child run', () => {
    it('leaves the sub-agent out of the conversation', () => {
      const parent = completedTurn(1, 'delegate', 'Done.')
      const child = turnHeader(2, { parentRunId: 'run-1', parentTurnId: 'turn-1' })
      const k = builderOf(child)
      const history = sessionHistory([
        read(parent.header, parent.events),
        read(child, [k.userText('sub-agent task'), k.terminal({ status: 'completed' })]),
      ])
      expect(visible(history)).toEqual(['user: delegate', 'model: Done.'])
    })
  })

  describe('when an earlier run cannot be read', () => {
    const first = completedTurn(1, 'hello', 'Hi.')

    it.each<[string, SessionRunRead, string]>([
      ['an unreadable header', { runId: 'run-2', headerUnavailable: 'Unreadable' }, 'run header Unreadable'],
      ['an unreadable ledger file', { header: turnHeader(2), ledgerUnavailable: 'Unreadable' }, 'ledger Unreadable'],
      [
        'a corrupt row',
        { header: turnHeader(2), ledger: ledgerOf([], { problem: { _tag: 'Unreadable', line: 3, reason: 'x' } }) },
        'ledger unreadable at line 3',
      ],
    ])('fails closed on %s, naming the run', (_what, broken, reason) => {
      expect(sessionHistory([read(first.header, first.events), broken])).toEqual(E.left({ runId: 'run-2', reason }))
    })
  })
})
