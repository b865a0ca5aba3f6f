import { readFileSync } from 'node:fs'
import { type RuntimeEvent, decodeRuntimeEvent } from '@maka/events'
import { describe, expect, it } from 'vitest'
import { givenLedger, header } from './givenLedger.js'

// Versioned golden ledgers: written once, replayed by the planner for good.
const fixture = (scenario: string): ReadonlyArray<RuntimeEvent> =>
  readFileSync(new URL(`../../../fixtures/ledgers/${scenario}.v1.jsonl`, import.meta.url), 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line, index) => {
      const decoded = decodeRuntimeEvent(JSON.parse(line))
      if (decoded._tag === 'Left') throw new Error(`${scenario}.v1.jsonl line ${index + 1}: ${decoded.left}`)
      return decoded.right
    })

const cases: ReadonlyArray<{
  readonly scenario: string
  readonly status: 'failed' | 'completed'
  readonly reasons: ReadonlyArray<string>
}> = [
  { scenario: 'interrupted-after-tool-response', status: 'failed', reasons: [] },
  { scenario: 'interrupted-after-function-call', status: 'failed', reasons: ['dangling_tool_state'] },
  { scenario: 'completed-turn', status: 'completed', reasons: ['provider_resume_boundary_unsupported'] },
  { scenario: 'pending-permission', status: 'failed', reasons: ['dangling_tool_state', 'pending_permission'] },
]

describe('golden ledgers', () => {
  describe.each(cases)('when planning $scenario.v1', ({ scenario, status, reasons }) => {
    const events = fixture(scenario)
    const first = events[0]!
    const source = header(
      {
        sessionId: first.sessionId,
        invocationId: first.invocationId,
        runId: first.runId,
        turnId: first.turnId,
        status,
      },
      status === 'completed' ? ['failureClass'] : [],
    )

    it(reasons.length === 0 ? 'continues' : `parks with ${reasons.join(', ')}`, () => {
      const then = givenLedger(events, { source }).whenPlanning()
      if (reasons.length === 0) then.thenContinues()
      else then.thenParks(reasons)
      expect(then.plan.sourceRuntimeEventHighWater).toBe(events.length)
    })
  })

  describe('when the tool response was committed', () => {
    it('replays the whole turn, the tool pair included', () => {
      const events = fixture('interrupted-after-tool-response')
      const first = events[0]!
      const source = header({
        sessionId: first.sessionId,
        invocationId: first.invocationId,
        runId: first.runId,
        turnId: first.turnId,
      })
      const { plan } = givenLedger(events, { source }).whenPlanning().thenContinues()
      expect(plan.continuation?.runtimeContext).toEqual(events)
    })
  })
})
