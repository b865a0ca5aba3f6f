import type { RuntimeEvent } from '@maka/events'
import { makeLedgerBuilderUnsafe } from '@maka/events/testing'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { makeResumeProjector, projectResumePlan } from '../src/index.js'
import { referenceProjection } from './referenceProjection.js'

// Rows over small pools of call ids and tool names, so calls, results, repeats and mismatches meet.
const row = fc.record({
  kind: fc.constantFrom('user', 'model', 'call', 'call', 'result', 'result', 'terminal'),
  id: fc.constantFrom('c1', 'c2', 'c3', 'c4'),
  tool: fc.constantFrom('shell', 'read_file'),
  isError: fc.boolean(),
  partial: fc.constantFrom(false, false, false, true),
})
const ledger = fc.array(row, { maxLength: 16 }).map((specs): ReadonlyArray<RuntimeEvent> => {
  const l = makeLedgerBuilderUnsafe()
  return specs.map((spec) => {
    const event =
      spec.kind === 'user'
        ? l.userText('go')
        : spec.kind === 'model'
          ? l.modelText('ok')
          : spec.kind === 'call'
            ? l.functionCall(spec.id, spec.tool, { n: spec.id })
            : spec.kind === 'result'
              ? l.functionResponse(spec.id, spec.tool, 'r', spec.isError)
              : l.terminal()
    return spec.partial ? l.partial(event) : event
  })
})
const expected = fc.option(fc.nat(18), { nil: undefined })

describe('makeResumeProjector (property)', () => {
  it('projects exactly what the plain Map-and-filter projection projects', () => {
    fc.assert(
      fc.property(ledger, expected, (events, hw) => {
        const options = hw === undefined ? {} : { expectedRuntimeEventHighWater: hw }
        const reference = referenceProjection(events, options)
        expect(projectResumePlan(events, options)).toEqual(reference)
        const projector = makeResumeProjector({ retainArgs: false, listOperations: false })
        for (const event of events) projector.add(event)
        const lean = projector.finish(options)
        expect(lean.operations).toEqual([])
        expect(lean.diagnostics).toEqual(reference.diagnostics)
        expect(lean.rejectionReasons).toEqual(reference.rejectionReasons)
        expect(lean.requiresVerification).toBe(reference.requiresVerification)
        expect(events.filter(lean.isReplayed)).toEqual(reference.replayRuntimeEvents)
        expect(lean.replayCount).toBe(reference.replayRuntimeEvents.length)
        const complete = reference.operations.filter((op) => op.status === 'succeeded' || op.status === 'failed')
        for (const op of reference.operations) {
          expect(lean.isCompleteCall(op.toolCallId)).toBe(complete.includes(op))
        }
        expect(lean.isCompleteCall('never-called')).toBe(false)
        expect(lean.completedToolNames).toEqual([...new Set(complete.map((op) => op.toolName))].sort())
      }),
      { numRuns: 3000 },
    )
  })
})
