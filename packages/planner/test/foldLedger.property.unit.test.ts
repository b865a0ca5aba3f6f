import {
  type RuntimeEvent,
  isFunctionCallEvent,
  isModelVisible,
  isTerminalEvent,
  makeNonEmptyStringUnsafe,
} from '@maka/events'
import { projectResumePlan } from '@maka/projection'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { foldEvents } from '../src/internal/foldLedger.js'
import { build, row } from './arbitraryRows.js'
import { header } from './givenLedger.js'

// The facts a fold gathers, computed the plain way — over the whole array, after the fact — as the
// gates computed them before they read folds.
const plainly = (events: ReadonlyArray<RuntimeEvent>, source: ReturnType<typeof header>) => {
  const replay = projectResumePlan(events).replayRuntimeEvents
  const open = new Map<string, string>()
  for (const event of events) {
    if (event.partial) continue
    const request = event.actions?.permissionRequest
    if (request !== undefined) open.set(request.requestId, event.id)
    const decision = event.actions?.permissionDecision
    if (decision !== undefined) open.delete(decision.requestId)
  }
  const fields = ['sessionId', 'invocationId', 'runId', 'turnId'] as const
  const mismatched = events.flatMap((event, index) => {
    const differ = fields.filter((field) => event[field] !== source[field])
    return differ.length === 0 ? [] : [{ line: index + 1, eventId: event.id, fields: differ }]
  })
  const terminals = events.filter(isTerminalEvent)
  const foreign = events.findIndex((e) => e.sessionId !== source.sessionId || e.runId !== source.runId)
  const mention = (e: RuntimeEvent | undefined) => (e === undefined ? undefined : { role: e.role, eventId: e.id })
  return {
    replay,
    openPermissions: open,
    identityMismatches: { count: mismatched.length, rows: mismatched.slice(0, 20) },
    terminals: {
      count: terminals.length,
      listed: terminals.slice(0, 20).map((e) => ({ eventId: e.id, status: e.status })),
    },
    foreignRow: foreign === -1 ? null : { line: foreign + 1, eventId: events[foreign]?.id },
    calledToolNames: [...new Set(replay.filter(isFunctionCallEvent).map((e) => e.content.name))].sort(),
    firstVisible: mention(replay.find(isModelVisible)),
    lastVisible: mention(replay.findLast(isModelVisible)),
  }
}

// Some rows of another run or session, so the first foreign row is found at every position.
const rows = fc
  .tuple(
    fc.array(row, { maxLength: 14 }),
    fc.array(fc.constantFrom('own', 'own', 'own', 'run', 'session'), { maxLength: 14 }),
  )
  .map(([specs, owners]) =>
    build(specs).map((event, i): RuntimeEvent => {
      const owner = owners[i] ?? 'own'
      return owner === 'own'
        ? event
        : owner === 'run'
          ? { ...event, runId: makeNonEmptyStringUnsafe('run-other') }
          : { ...event, sessionId: makeNonEmptyStringUnsafe('ses-other') }
    }),
  )

describe('foldEvents (property)', () => {
  describe('when folding arbitrary ledgers', () => {
    it('gathers exactly the facts the gates would compute over the whole array', () => {
      const source = header()
      fc.assert(
        fc.property(rows, (events) => {
          const folded = foldEvents(source, events)
          const expected = plainly(events, source)
          expect(folded.rows).toBe(events.length)
          expect(folded.prefixRows).toBe(events.length)
          expect(folded.firstRow).toBe(events[0])
          expect(folded.onlyTerminalRows).toBe(events.length > 0 && events.every(isTerminalEvent))
          expect(folded.projection.replayCount).toBe(expected.replay.length)
          expect(events.filter(folded.projection.isReplayed)).toEqual(expected.replay)
          expect([...folded.openPermissions]).toEqual([...expected.openPermissions])
          expect(folded.identityMismatches).toEqual(expected.identityMismatches)
          expect(folded.terminals).toEqual(expected.terminals)
          expect(folded.foreignRow).toEqual(expected.foreignRow)
          expect(folded.calledToolNames).toEqual(expected.calledToolNames)
          expect(folded.firstVisible).toEqual(expected.firstVisible)
          expect(folded.lastVisible).toEqual(expected.lastVisible)
        }),
        { numRuns: 3000 },
      )
    })

    it('judges only the first `limit` rows, yet counts every row and sees the first', () => {
      const source = header()
      fc.assert(
        fc.property(rows, fc.nat(16), (events, limit) => {
          const folded = foldEvents(source, events, { limit })
          const prefix = foldEvents(source, events.slice(0, limit))
          expect(folded.rows).toBe(events.length)
          expect(folded.firstRow).toBe(events[0])
          expect(folded.onlyTerminalRows).toBe(events.length > 0 && events.every(isTerminalEvent))
          expect(folded.prefixRows).toBe(Math.min(limit, events.length))
          const { projection, firstRow: _f, onlyTerminalRows: _o, rows: _r, visibleUnder: _v, ...judged } = folded
          const {
            projection: prefixProjection,
            firstRow: _pf,
            onlyTerminalRows: _po,
            rows: _pr,
            visibleUnder: _pv,
            ...prefixJudged
          } = prefix
          expect(judged).toEqual(prefixJudged)
          expect(projection.replayCount).toBe(prefixProjection.replayCount)
          expect(projection.diagnostics).toEqual(prefixProjection.diagnostics)
          expect(events.slice(0, limit).filter(projection.isReplayed)).toEqual(
            projectResumePlan(events.slice(0, limit)).replayRuntimeEvents,
          )
        }),
        { numRuns: 2000 },
      )
    })
  })
})
