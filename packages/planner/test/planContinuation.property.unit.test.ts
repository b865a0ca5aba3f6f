import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type ContinuationIds, type HostFacts, planContinuation } from '../src/index.js'
import { GateTable } from '../src/internal/GateTable.js'
import { build, row } from './arbitraryRows.js'
import { continuationIdsUnsafe, defaultFacts, freshIds, header, ledgerOf } from './givenLedger.js'

const facts: fc.Arbitrary<HostFacts> = fc
  .record({
    settled: fc.boolean(),
    tools: fc.subarray(['shell', 'read_file', 'deploy']),
    checkpoint: fc.option(
      fc.record({ ref: fc.option(fc.constantFrom('cp-1', '')), restored: fc.boolean(), hw: fc.nat(12) }),
    ),
    expected: fc.option(fc.nat(12)),
  })
  .map(({ settled, tools, checkpoint, expected }) => ({
    ...defaultFacts,
    backgroundOperationsSettled: settled,
    availableToolNames: tools,
    ...(checkpoint === null
      ? {}
      : {
          workspaceCheckpoint: {
            ...(checkpoint.ref === null ? {} : { ref: checkpoint.ref }),
            restored: checkpoint.restored,
            runtimeEventHighWater: checkpoint.hw,
          },
        }),
    ...(expected === null ? {} : { expectedRuntimeEventHighWater: expected }),
  }))

const ids: fc.Arbitrary<ContinuationIds> = fc.constantFrom(
  freshIds,
  continuationIdsUnsafe({ ...freshIds, runId: 'run-1' }),
)
const status = fc.constantFrom('created', 'running', 'waiting_permission', 'completed', 'failed', 'cancelled')
const GATE_ORDER = GateTable.flatMap((g) => g.reasons) as ReadonlyArray<string>

describe('planContinuation (property)', () => {
  describe('when given arbitrary ledgers built from every row kind', () => {
    it('never throws, plans deterministically and keeps the plan invariants', () => {
      fc.assert(
        fc.property(fc.array(row, { maxLength: 12 }), facts, ids, status, (specs, hostFacts, newIds, headerStatus) => {
          const events = build(specs)
          const input = { source: header({ status: headerStatus }), ledger: ledgerOf(events), facts: hostFacts }
          const plan = planContinuation(input, newIds)
          expect(planContinuation(input, newIds)).toStrictEqual(plan)
          expect(JSON.parse(JSON.stringify(plan))).toStrictEqual(plan)
          expect(plan.disposition === 'continue').toBe(plan.rejectionReasons.length === 0)
          expect(plan.continuation !== undefined).toBe(plan.disposition === 'continue')
          expect(new Set(plan.rejectionReasons).size).toBe(plan.rejectionReasons.length)
          const ranks = plan.rejectionReasons.map((r) => GATE_ORDER.indexOf(r))
          expect(ranks.every((r) => r >= 0)).toBe(true)
          expect([...ranks].sort((a, b) => a - b)).toEqual(ranks)
          if (plan.continuation !== undefined) {
            expect(plan.diagnostics.every((d) => d.severity === 'warning')).toBe(true)
            expect(plan.continuation.runtimeContext.some((e) => e.partial)).toBe(false)
          }
        }),
        { numRuns: 500 },
      )
    })
  })
})
