/**
 * Arbitrary ledgers for property tests: rows of every kind the builder makes, over small id pools.
 */
import { type RowSpec, buildRowsUnsafe } from '@maka/events/testing'
import fc from 'fast-check'

// One arbitrary row: any kind the builder makes, over small id pools so calls, responses, requests and
// decisions collide often; sometimes partial; sometimes from another turn.
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
export const row = fc.record({
  spec: rowSpec,
  partial: fc.constantFrom(false, false, false, true),
  foreignTurn: fc.boolean(),
})

export const build = buildRowsUnsafe
