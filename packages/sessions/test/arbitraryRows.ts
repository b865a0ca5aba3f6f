/**
 * Arbitrary ledgers for property tests: rows of every kind the builder makes, over small id pools.
 */
import type { RuntimeEvent } from '@maka/events'
import { makeLedgerBuilderUnsafe } from '@maka/events/testing'
import fc from 'fast-check'

// One arbitrary row: any kind the builder makes, over small id pools so calls, responses, requests and
// decisions collide often; sometimes partial; sometimes from another turn.
export type RowSpec =
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
export const row = fc.record({
  spec: rowSpec,
  partial: fc.constantFrom(false, false, false, true),
  foreignTurn: fc.boolean(),
})

export const build = (
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
