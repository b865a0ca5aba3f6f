import type { RuntimeEvent } from '@maka/events'
import { makeLedgerBuilderUnsafe } from '@maka/events/testing'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { GateTable, type ContinuationIds, type HostFacts, planContinuation } from '../src/index.js'
import { continuationIdsUnsafe, defaultFacts, freshIds, header, ledgerOf } from './givenLedger.js'

// One arbitrary row: any kind the builder makes, over small id pools so calls, responses, requests and
// decisions collide often; sometimes partial; sometimes from another turn.
type RowSpec =
  | { kind: 'userText' | 'modelText' | 'thinking' | 'errorFact'; text: string }
  | { kind: 'functionCall' | 'functionResponse'; id: string; tool: string; isError: boolean }
  | { kind: 'permissionRequest' | 'permissionDecision'; id: string; allow: boolean }
  | { kind: 'terminal'; status: 'completed' | 'failed' | 'aborted' | 'cancelled' }

const callId = fc.constantFrom('c1', 'c2', 'c3')
const tool = fc.constantFrom('shell', 'read_file', 'deploy')
const rowSpec: fc.Arbitrary<RowSpec> = fc.oneof(
  fc.record({
    kind: fc.constantFrom('userText', 'modelText', 'thinking', 'errorFact'),
    text: fc.string({ maxLength: 8 }),
  }),
  fc.record({ kind: fc.constantFrom('functionCall', 'functionResponse'), id: callId, tool, isError: fc.boolean() }),
  fc.record({
    kind: fc.constantFrom('permissionRequest', 'permissionDecision'),
    id: fc.constantFrom('p1', 'p2'),
    allow: fc.boolean(),
  }),
  fc.record({ kind: fc.constant('terminal'), status: fc.constantFrom('completed', 'failed', 'aborted', 'cancelled') }),
)
const row = fc.record({ spec: rowSpec, partial: fc.constantFrom(false, false, false, true), foreignTurn: fc.boolean() })

const build = (
  specs: ReadonlyArray<{ spec: RowSpec; partial: boolean; foreignTurn: boolean }>,
): ReadonlyArray<RuntimeEvent> => {
  const l = makeLedgerBuilderUnsafe()
  return specs.map(({ spec, partial, foreignTurn }) => {
    const event = ((): RuntimeEvent => {
      switch (spec.kind) {
        case 'userText':
        case 'modelText':
        case 'thinking':
        case 'errorFact':
          return l[spec.kind](spec.text)
        case 'functionCall':
          return l.functionCall(spec.id, spec.tool)
        case 'functionResponse':
          return l.functionResponse(spec.id, spec.tool, 'r', spec.isError)
        case 'permissionRequest':
          return l.permissionRequest(spec.id, 'shell')
        case 'permissionDecision':
          return l.permissionDecision(spec.id, spec.allow ? 'allow' : 'deny')
        case 'terminal':
          return spec.status === 'completed'
            ? l.terminal({ status: 'completed' })
            : spec.status === 'failed'
              ? l.terminal()
              : l.terminal({ status: spec.status })
      }
    })()
    const marked = partial ? l.partial(event) : event
    return foreignTurn ? ({ ...marked, turnId: 'turn-9' } as RuntimeEvent) : marked
  })
}

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
