import { readFile, writeFile } from 'node:fs/promises'
import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import type { RuntimeEvent } from '@maka/events'
import type { PlanOutline } from '../src/index.js'
import { givenApprovedPlan, givenInterruptedRun, trackWorlds } from './support/world.js'

const world = trackWorlds()

// Every segment of an outline streamed again, in order, as a JSON printer would.
const replayAll = async (outline: PlanOutline) => {
  const events: Array<RuntimeEvent> = []
  const results = []
  for (const segment of outline.plan.continuation?.replay ?? []) {
    results.push(await outline.replay(segment, (batch) => void events.push(...batch)))
  }
  return { events, results }
}

describe('planOutline', () => {
  describe('when an interrupted run was recovered', () => {
    it('plans what plan plans, and its second read hands over exactly the history plan holds', async () => {
      const w = await world()
      const source = await givenInterruptedRun(w, {
        prompt: 'Count for me.',
        toolCalls: [{ name: 'count', args: { label: 'once' } }],
      })
      const { plan, continuation } = await givenApprovedPlan(w, source)
      const outline = await w.runtime.planOutline({ sessionId: source.sessionId, runId: source.runId })
      const { replay, ...head } = outline.plan.continuation ?? { replay: [] }
      const { runtimeContext, sourceRuntimeContext, ...planned } = continuation
      expect(outline.plan.disposition).toBe('continue')
      expect(outline.plan.rejectionReasons).toEqual(plan.rejectionReasons)
      // Fresh ids differ from one plan to the next; everything else is the same.
      expect({ ...head, invocationId: '', runId: '', turnId: '' }).toEqual({
        ...planned,
        invocationId: '',
        runId: '',
        turnId: '',
      })
      expect(replay.map((segment) => segment.count)).toEqual([sourceRuntimeContext.length])
      const { events, results } = await replayAll(outline)
      expect(results.every(E.isRight)).toBe(true)
      expect(events).toEqual(runtimeContext)
    })
  })

  describe('when a committed row changes between planning and printing', () => {
    it('says so instead of handing over a history that was not planned', async () => {
      const w = await world()
      const source = await givenInterruptedRun(w, { prompt: 'Count for me.', toolCalls: [{ name: 'count', args: {} }] })
      await givenApprovedPlan(w, source)
      const outline = await w.runtime.planOutline({ sessionId: source.sessionId, runId: source.runId })
      expect(outline.plan.disposition).toBe('continue')
      // The same length, one character of the prompt changed: only the digest can tell.
      const path = w.ledgerPathOf(source.sessionId, source.runId)
      const bytes = await readFile(path, 'utf8')
      await writeFile(path, bytes.replace('Count for me.', 'Count for us.'))
      const { results } = await replayAll(outline)
      const failure = results.find(E.isLeft)
      expect(failure).toBeDefined()
      expect(failure?._tag === 'Left' ? failure.left : null).toMatchObject({
        _tag: 'ReplayFailed',
        runId: source.runId,
        message: expect.stringContaining('changed between two reads') as unknown,
      })
      expect(JSON.stringify(failure)).not.toContain('Count for')
    })
  })
})
