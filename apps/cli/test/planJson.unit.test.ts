/**
 * The plan JSON writer: the history printed once, the source segment as a checkable reference, and
 * output that waits for a full stream to drain.
 */
import { EventEmitter } from 'node:events'
import { describe, expect, it } from 'vitest'
import { makeLedgerBuilderUnsafe } from '@maka/events/testing'
import { writePlanJson } from '../src/planJson.js'

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

/** A stream that accepts `capacity` writes, then reports full until it is drained by hand. */
const slowSink = (capacity: number) => {
  const emitter = new EventEmitter()
  const chunks: Array<string> = []
  let room = capacity
  let waiting = false
  return {
    chunks,
    get waiting() {
      return waiting
    },
    write(chunk: string) {
      if (waiting) throw new Error('written while the stream was full')
      chunks.push(chunk)
      room -= 1
      waiting = room <= 0
      return !waiting
    },
    once: (event: 'drain', listener: () => void) => emitter.once(event, listener),
    drain() {
      room = capacity
      waiting = false
      emitter.emit('drain')
    },
  }
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
