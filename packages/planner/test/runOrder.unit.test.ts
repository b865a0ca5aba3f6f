/**
 * The one order of runs: the newest top-level run by it is the candidate of the "latest" entry.
 */
import * as E from 'fp-ts/lib/Either.js'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { compareRunCreation, latestCandidate, latestTopLevelRun } from '../src/index.js'
import { continuationHeader, header } from './givenLedger.js'

const turn = (runId: string, createdAt: string, overrides: Record<string, unknown> = {}) =>
  header({ runId, createdAt, updatedAt: createdAt, ...overrides })

const child = (runId: string, parent: string, createdAt: string) =>
  turn(runId, createdAt, { parentRunId: parent, parentTurnId: 'turn-1' })

const listed = (...runs: ReadonlyArray<ReturnType<typeof header>>) =>
  runs.map((run) => ({ runId: run.runId, header: run }))

describe('runOrder', () => {
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
})
