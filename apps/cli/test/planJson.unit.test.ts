/**
 * The plan JSON writer: the history printed once, the source segment as a checkable reference, and
 * output that waits for a full stream to drain.
 */
import { describe, expect, it } from 'vitest'
import type { RuntimeEvent } from '@maka/events'
import { makeLedgerBuilderUnsafe } from '@maka/events/testing'
import type { PlanOutline } from '@maka/executor'
import type { OutlinedPlan, ReplaySegment } from '@maka/planner'
import * as E from 'fp-ts/lib/Either.js'
import { HistoryChangedError } from '../src/ExitCode.js'
import { writeOutlinedPlanJson, writePlanJson } from '../src/planJson.js'
import { slowSink } from './slowSink.js'

const ancestor = makeLedgerBuilderUnsafe({ sessionId: 's', invocationId: 'i0', runId: 'r0', turnId: 't0' })
const source = makeLedgerBuilderUnsafe({ sessionId: 's', invocationId: 'i1', runId: 'r1', turnId: 't1' })
const older = [ancestor.userText('first'), ancestor.modelText('answer')]
const own = Array.from({ length: 400 }, (_, i) =>
  i % 2 === 0
    ? source.functionCall(`c${i}`, 'read_file', { path: `f${i}` })
    : source.functionResponse(`c${i - 1}`, 'read_file'),
)
const plan = {
  disposition: 'continue',
  rejectionReasons: [],
  continuation: {
    sessionId: 's',
    runtimeContext: [...older, ...own],
    sourceRuntimeContext: own,
    safetySnapshot: { workspaceIdentity: 'fs:1:2:/w', backgroundOperationsSettled: true, availableToolNames: [] },
  },
}

describe('writePlanJson', () => {
  describe('when a continuation carries its history', () => {
    it('prints each event once, and the source segment as a reference whose digest matches it', async () => {
      const sink = slowSink(Number.POSITIVE_INFINITY)
      await writePlanJson(sink, { sessionId: 's', plan })
      const text = sink.chunks.join('')
      const parsed = JSON.parse(text) as { plan: { continuation: Record<string, unknown> } }
      const c = parsed.plan.continuation
      expect(c['runtimeContext']).toEqual([...older, ...own])
      expect(c['sourceRuntimeContext']).toEqual({
        runtimeContextOffset: 2,
        count: own.length,
      })
      for (const event of [...older, ...own]) expect(text.split(`"${event.id}"`)).toHaveLength(2)
      expect(c['safetySnapshot']).toEqual(plan.continuation.safetySnapshot)
      expect(text.endsWith('}\n')).toBe(true)
    })

    it('writes nothing more while the stream is full, and finishes once it drains', async () => {
      const sink = slowSink(1)
      let done = false
      const writing = writePlanJson(sink, plan).then(() => {
        done = true
      })
      for (let i = 0; i < 1000 && !done; i += 1) {
        await new Promise((resolve) => setImmediate(resolve))
        if (sink.waiting) sink.drain()
      }
      await writing
      expect(sink.chunks.length).toBeGreaterThan(1)
      expect(JSON.parse(sink.chunks.join(''))).toMatchObject({ disposition: 'continue' })
    })
  })

  describe('when the value holds no continuation', () => {
    it('prints the same JSON as JSON.stringify with an indent of 2', async () => {
      const sink = slowSink(Number.POSITIVE_INFINITY)
      const parked = { disposition: 'park', rejectionReasons: ['dangling_tool_state'], diagnostics: [{ code: 'x' }] }
      await writePlanJson(sink, parked)
      expect(sink.chunks.join('')).toBe(`${JSON.stringify(parked, null, 2)}\n`)
    })
  })
})

describe('writePlanJson, when the source segment is not the tail of the history', () => {
  it('prints it in full rather than a reference that would be wrong', async () => {
    const sink = slowSink(Number.POSITIVE_INFINITY)
    const odd = { ...plan.continuation, runtimeContext: [...own, ...older], sourceRuntimeContext: own }
    await writePlanJson(sink, { continuation: odd })
    const parsed = JSON.parse(sink.chunks.join('')) as { continuation: Record<string, unknown> }
    expect(parsed.continuation['runtimeContext']).toEqual([...own, ...older])
    expect(parsed.continuation['sourceRuntimeContext']).toEqual(own)
  })
})

describe('writeOutlinedPlanJson', () => {
  // The same continuation as an outline: two segments over the runs' rows, the source's dropping
  // every third row, handed over in batches of 7 as a store's second read would.
  const rowsOf: Record<string, ReadonlyArray<RuntimeEvent>> = { r0: older, r1: own }
  const keep = (event: RuntimeEvent) => Number(event.id.split('-e')[1]) % 3 !== 0
  const segments: ReadonlyArray<ReplaySegment> = [
    { runId: 'r0', rows: older.length, count: older.length, isReplayed: () => true },
    { runId: 'r1', rows: own.length, count: own.filter(keep).length, isReplayed: keep },
  ]
  const head = { sessionId: 's', runId: 'r2', sourceRunId: 'r1', sourceRuntimeEventHighWater: own.length }
  const snapshot = plan.continuation.safetySnapshot
  const outlined = {
    disposition: 'continue',
    rejectionReasons: [],
    diagnostics: [],
    continuation: { ...head, replay: segments, safetySnapshot: snapshot },
  } as unknown as OutlinedPlan
  const whole = {
    ...outlined,
    continuation: {
      ...head,
      runtimeContext: [...older, ...own.filter(keep)],
      sourceRuntimeContext: own.filter(keep),
      safetySnapshot: snapshot,
    },
  }
  const replayFrom =
    (rows: Record<string, ReadonlyArray<RuntimeEvent>>, fail?: string): PlanOutline['replay'] =>
    async (segment, onEvents) => {
      const all = rows[segment.runId] ?? []
      for (let i = 0; i < segment.rows; i += 7) await onEvents(all.slice(i, i + 7).filter(segment.isReplayed))
      return fail === segment.runId
        ? E.left({ _tag: 'ReplayFailed', runId: segment.runId, message: 'the ledger changed between two reads' })
        : E.right(undefined)
    }

  it('prints the very text writePlanJson prints for the same plan whole, indented and compact', async () => {
    for (const layout of [{}, { compact: true }]) {
      const streamed = slowSink(Number.POSITIVE_INFINITY)
      await writeOutlinedPlanJson(streamed, { plan: outlined, replay: replayFrom(rowsOf) }, layout)
      const held = slowSink(Number.POSITIVE_INFINITY)
      await writePlanJson(held, whole, layout)
      expect(streamed.chunks.join('')).toBe(held.chunks.join(''))
    }
  })

  it('stops before the end of the document when a segment cannot be read again as planned', async () => {
    const sink = slowSink(Number.POSITIVE_INFINITY)
    await expect(
      writeOutlinedPlanJson(sink, { plan: outlined, replay: replayFrom(rowsOf, 'r1') }),
    ).rejects.toBeInstanceOf(HistoryChangedError)
    const text = sink.chunks.join('')
    expect(text).not.toContain('safetySnapshot')
    expect(() => JSON.parse(text) as unknown).toThrow()
  })

  it('refuses a second read that hands over fewer events than were planned', async () => {
    const sink = slowSink(Number.POSITIVE_INFINITY)
    const shorter = { ...rowsOf, r1: own.slice(0, -10) }
    await expect(writeOutlinedPlanJson(sink, { plan: outlined, replay: replayFrom(shorter) })).rejects.toBeInstanceOf(
      HistoryChangedError,
    )
    expect(sink.chunks.join('')).not.toContain('safetySnapshot')
  })
})
