/**
 * The source a server tool's call records on its `function_call` row, and what reads it back: a row
 * that records none, or a malformed one, has none; the row still decodes as a RuntimeEvent.
 */
import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { RuntimeEvent, recordedToolSourceOf, toolSourceDelta } from '../src/index.js'
import { makeLedgerBuilderUnsafe } from '../src/testing.js'

const call = () => makeLedgerBuilderUnsafe().functionCall('call-1', 'mcp__fs__read_text_file', { path: 'a' })
const digest = `sha256:${'c'.repeat(64)}`

describe('recordedToolSourceOf', () => {
  it('reads back what toolSourceDelta records, on a row that still decodes', () => {
    const row = { ...call(), actions: { stateDelta: toolSourceDelta({ server: 'fs', digest }) } }
    expect(E.isRight(RuntimeEvent.decode(row))).toBe(true)
    expect(recordedToolSourceOf(row)).toEqual({ server: 'fs', digest })
  })

  it.each([
    { name: 'no actions', actions: undefined },
    { name: 'another stateDelta', actions: { stateDelta: { failureClass: 'x' } } },
    { name: 'a malformed source', actions: { stateDelta: { toolSource: { server: 1, digest } } } },
  ])('finds none with $name', ({ actions }) => {
    const row = actions === undefined ? call() : { ...call(), actions }
    expect(recordedToolSourceOf(row)).toBeNull()
  })
})
