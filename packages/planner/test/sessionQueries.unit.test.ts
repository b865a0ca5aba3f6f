import * as E from 'fp-ts/lib/Either.js'
import type { RuntimeEvent } from '@maka/events'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  compareRunCreation,
  compareSessions,
  isInterrupted,
  latestCandidate,
  latestTopLevelRun,
  ledgerTimeline,
  mostRecentSession,
  sessionLineage,
  summarizeSession,
} from '../src/index.js'
import { continuationHeader, header } from './givenLedger.js'
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
  describe('latestTopLevelRun', () => {
    it.each([
      {
        when: 'a UTC offset makes the earlier instant sort later as text',
        runs: [turn('a', '2026-01-01T00:30:00.000Z'), turn('b', '2026-01-01T01:00:00.000+01:00')],
        latest: 'a',
      },
      {
        when: 'the same instant is written with and without fraction digits',
        runs: [turn('b', '2026-01-01T00:00:00Z'), turn('a', '2026-01-01T00:00:00.000Z')],
        latest: 'b',
      },
      {
        when: 'two runs share createdAt',
        runs: [turn('run-2', '2026-01-01T00:00:00.000Z'), turn('run-1', '2026-01-01T00:00:00.000Z')],
        latest: 'run-2',
      },
      {
        when: 'a child run is newer than every top-level run',
        runs: [turn('top', '2026-01-01T00:00:00.000Z'), child('sub', 'top', '2026-01-02T00:00:00.000Z')],
        latest: 'top',
      },
      {
        when: 'a continuation is the newest run',
        runs: [
          turn('src', '2026-01-01T00:00:00.000Z'),
          continuationHeader(
            { runId: 'cont', invocationId: 'i-2', turnId: 't-2' },
            turn('src', '2026-01-01T00:00:00.000Z'),
            3,
            {
              createdAt: '2026-01-01T00:05:00.000Z',
              updatedAt: '2026-01-01T00:05:00.000Z',
            },
          ),
        ],
        latest: 'cont',
      },
    ])('when $when, is $latest — the run the planner\'s "latest" entry picks', ({ runs, latest }) => {
      expect(latestTopLevelRun(runs)?.runId).toBe(latest)
      expect(latestCandidate(listed(...runs))).toEqual(E.right(latest))
    })

    it('agrees with the planner on any listing of non-completed runs', () => {
      const instant = fc
        .tuple(fc.integer({ min: 0, max: 3 }), fc.constantFrom('Z', '.000Z', '+01:00', '-00:30'))
        .map(([minute, zone]) => {
          const hour = zone === '+01:00' ? '01' : '00'
          const min = zone === '-00:30' ? minute : minute + 30
          return `2026-01-01T${hour}:${String(min).padStart(2, '0')}:00${zone}`
        })
      const run = fc.record({ id: fc.constantFrom('r1', 'r2', 'r3', 'r4'), at: instant, isChild: fc.boolean() })
      fc.assert(
        fc.property(fc.uniqueArray(run, { selector: (r) => r.id, minLength: 1 }), (specs) => {
          const runs = specs.map((s) => (s.isChild ? child(s.id, 'elsewhere', s.at) : turn(s.id, s.at)))
          const latest = latestTopLevelRun(runs)
          const planned = latestCandidate(listed(...runs))
          if (latest === undefined) expect(E.isLeft(planned)).toBe(true)
          else expect(planned).toEqual(E.right(latest.runId))
        }),
      )
    })
  })

  describe('compareRunCreation', () => {
    it('orders by instant, then run id', () => {
      const runs = [
        turn('b', '2026-01-01T00:00:00Z'),
        turn('a', '2026-01-01T01:00:00+01:00'),
        turn('c', '2025-12-31T23:59:59Z'),
      ]
      expect([...runs].sort(compareRunCreation).map((r) => r.runId)).toEqual(['c', 'a', 'b'])
    })
  })

  describe('isInterrupted', () => {
    it.each([
      { status: 'failed', failureClass: 'app_restarted', ownerAlive: true, interrupted: true },
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
