import type { RuntimeEvent } from '@maka/events'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  compareSessions,
  isInterrupted,
  ledgerTimeline,
  mostRecentSession,
  sessionLineage,
  summarizeSession,
} from '../src/index.js'
import { continuationHeader, header } from './givenSession.js'
import { makeLedgerBuilderUnsafe } from '@maka/events/testing'
import { projectResumePlan } from '@maka/projection'
import { build, row } from './arbitraryRows.js'

const turn = (runId: string, createdAt: string, overrides: Record<string, unknown> = {}) =>
  header({ runId, createdAt, updatedAt: createdAt, ...overrides })

const child = (runId: string, parent: string, createdAt: string) =>
  turn(runId, createdAt, { parentRunId: parent, parentTurnId: 'turn-1' })

const listed = (...runs: ReadonlyArray<ReturnType<typeof header>>) =>
  runs.map((run) => ({ runId: run.runId, header: run }))

describe('sessionQueries', () => {
  describe('isInterrupted', () => {
    it.each([
      { status: 'failed', failureClass: 'app_restarted', ownerAlive: true, interrupted: true },
      // An adjudication run (`resolve`): the turn waits to be resumed, as after a crash.
      { status: 'failed', failureClass: 'operator_resolved', ownerAlive: false, interrupted: true },
      { status: 'failed', failureClass: 'provider_error', ownerAlive: false, interrupted: false },
      { status: 'running', ownerAlive: false, interrupted: true },
      { status: 'running', ownerAlive: true, interrupted: false },
      { status: 'completed', ownerAlive: false, interrupted: false },
    ])(
      'a $status run ($failureClass), owner alive $ownerAlive → $interrupted',
      ({ interrupted, ownerAlive, ...run }) => {
        const omit = run.failureClass === undefined ? ['failureClass'] : []
        expect(isInterrupted(header(run, omit), ownerAlive)).toBe(interrupted)
      },
    )
  })

  describe('summarizeSession', () => {
    it('names the latest top-level run, counts unreadable runs and marks the interruption', () => {
      const summary = summarizeSession({
        sessionId: 'session-1',
        record: {
          _tag: 'Read',
          record: { sessionId: 'session-1', cwd: '/w', createdAt: '2026-01-01T00:00:00.000Z' } as never,
        },
        runs: [
          ...listed(turn('a', '2026-01-01T00:30:00.000Z'), turn('b', '2026-01-01T01:00:00.000+01:00')),
          { runId: 'broken', error: 'Unreadable' },
        ],
        ownerAlive: false,
      })
      expect(summary).toMatchObject({
        runCount: 3,
        unreadableRuns: [{ runId: 'broken', error: 'Unreadable' }],
        latestRun: { runId: 'a', kind: 'turn', status: 'failed', failureClass: 'app_restarted' },
        interrupted: true,
        cwd: '/w',
      })
    })

    it('keeps an unreadable record as its error', () => {
      const summary = summarizeSession({
        sessionId: 's',
        record: { _tag: 'Unread', error: 'Unreadable' },
        runs: [],
        ownerAlive: false,
      })
      expect(summary).toMatchObject({
        cwd: null,
        createdAt: null,
        error: 'Unreadable',
        latestRun: null,
        interrupted: false,
      })
    })
  })

  describe('mostRecentSession', () => {
    it('skips unreadable records and breaks ties by id', () => {
      const sessions = [
        { sessionId: 'b', createdAt: '2026-01-01T00:00:00.000Z' },
        { sessionId: 'z', createdAt: null },
        { sessionId: 'c', createdAt: '2026-01-01T00:00:00.000Z' },
        { sessionId: 'a', createdAt: '2025-01-01T00:00:00.000Z' },
      ]
      expect(mostRecentSession(sessions)?.sessionId).toBe('c')
    })

    it('orders by the instant, not the text, of createdAt', () => {
      const sessions = [
        { sessionId: 'later', createdAt: '2026-01-01T00:30:00Z' },
        { sessionId: 'earlier', createdAt: '2026-01-01T01:00:00+01:00' },
      ]
      expect(mostRecentSession(sessions)?.sessionId).toBe('later')
      expect([...sessions].sort(compareSessions).map((s) => s.sessionId)).toEqual(['earlier', 'later'])
    })
  })

  describe('sessionLineage', () => {
    it('hangs continuations under their source and children under their parent, unreadable runs as roots', () => {
      const src = turn('src', '2026-01-01T00:00:00.000Z')
      const cont = continuationHeader({ runId: 'cont', invocationId: 'i-2', turnId: 't-2' }, src, 3, {
        createdAt: '2026-01-01T00:05:00.000Z',
        updatedAt: '2026-01-01T00:05:00.000Z',
      })
      const lineage = sessionLineage([
        ...listed(
          cont,
          child('sub', 'src', '2026-01-01T00:01:00.000Z'),
          src,
          child('orphan', 'gone', '2026-01-01T00:02:00.000Z'),
        ),
        { runId: 'broken', error: 'Unreadable' },
      ])
      expect(lineage.roots).toEqual(['src', 'orphan', 'broken'])
      expect(lineage.nodes).toEqual([
        { runId: 'src', kind: 'turn', parentRunId: null, children: ['sub', 'cont'] },
        { runId: 'sub', kind: 'child', parentRunId: 'src', children: [] },
        { runId: 'orphan', kind: 'child', parentRunId: null, children: [] },
        { runId: 'cont', kind: 'continuation', parentRunId: 'src', children: [] },
        { runId: 'broken', kind: 'unreadable', parentRunId: null, children: [] },
      ])
    })
  })

  describe('ledgerTimeline', () => {
    // A host's summary that names the call a tool row belongs to.
    const callIdOf = (event: RuntimeEvent): { readonly toolCallId?: string } =>
      event.content?.kind === 'function_call' || event.content?.kind === 'function_response'
        ? { toolCallId: event.content.id }
        : {}

    it('numbers the host summaries from 1 and adds each tool operation status', () => {
      const ledger = makeLedgerBuilderUnsafe()
      const events = [ledger.userText('hi'), ledger.functionCall('call-1', 'list_dir', { path: '.' })]
      const timeline = ledgerTimeline(events, (event) =>
        event.content?.kind === 'function_call' ? { toolCallId: 'call-1' } : {},
      )
      expect(timeline.map((entry) => entry.index)).toEqual([1, 2])
      expect(timeline[0]).not.toHaveProperty('operationStatus')
      expect(timeline[1]).toHaveProperty('operationStatus', 'indeterminate')
    })

    it('gives every row that names a call the Phase 0 status of that call, and no other row one', () => {
      fc.assert(
        fc.property(fc.array(row, { maxLength: 30 }), (specs) => {
          const events = build(specs)
          const statuses = new Map(projectResumePlan(events).operations.map((op) => [op.toolCallId, op.status]))
          const timeline = ledgerTimeline(events, callIdOf)
          expect(timeline.map((entry) => entry.index)).toEqual(events.map((_, i) => i + 1))
          expect(timeline.map((entry) => entry.eventId)).toEqual(events.map((event) => event.id))
          expect(timeline.map((entry) => entry.operationStatus)).toEqual(
            events.map((event) => {
              const id = callIdOf(event).toolCallId
              return id === undefined ? undefined : statuses.get(id)
            }),
          )
        }),
        { numRuns: 500 },
      )
    })
  })
})
