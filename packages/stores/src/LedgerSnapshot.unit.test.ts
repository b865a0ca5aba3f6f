import type { RuntimeEvent } from '@maka/events'
import { makeLedgerBuilderUnsafe } from '@maka/events/testing'
import { describe, expect, it } from 'vitest'
import { makeLedgerRowReader } from './LedgerSnapshot.js'

const builder = makeLedgerBuilderUnsafe()
const identity = { sessionId: builder.identity.sessionId, runId: builder.identity.runId }
const first = builder.userText('Refactor the parser, é and 😀.')
const second = builder.modelText('Done.')
const third = builder.modelText('Checked.')
const texts = [first, second, third].map((event) => JSON.stringify(event))
// Row 3 repeats row 1's id.
const repeating = [texts[0], texts[1], JSON.stringify({ ...third, id: first.id })] as ReadonlyArray<string>

const readAll = (rows: ReadonlyArray<string>, options?: Parameters<typeof makeLedgerRowReader>[2]) => {
  const handed: Array<RuntimeEvent> = []
  const reader = makeLedgerRowReader(identity, (event) => handed.push(event), options)
  for (const row of rows) reader.add(row)
  return { handed, snapshot: reader.snapshot() }
}

describe('makeLedgerRowReader', () => {
  describe('when given the runtime byte count', () => {
    it('counts committed bytes with it, as the JS count does', () => {
      const counted: Array<string> = []
      const byteLength = (text: string) => {
        counted.push(text)
        return new TextEncoder().encode(text).length
      }
      const native = readAll(texts, { byteLength })
      expect(counted).toEqual(texts)
      expect(native.snapshot).toEqual(readAll(texts).snapshot)
      expect(native.snapshot.committedBytes).toBe(new TextEncoder().encode(texts.map((t) => `${t}\n`).join('')).length)
    })

    it('takes a count the caller made instead of counting again', () => {
      const reader = makeLedgerRowReader(identity, undefined, {
        byteLength: () => {
          throw new Error('counted twice')
        },
      })
      reader.add(texts[0] ?? '', 7)
      expect(reader.snapshot().committedBytes).toBe(8)
    })
  })

  describe('when a row repeats an earlier id', () => {
    it('is unreadable there by default; not looked for when ids are known absent, and keepAtMost stops the rows handed over', () => {
      const checked = readAll(repeating)
      expect(checked.handed).toHaveLength(2)
      expect(checked.snapshot.problem).toEqual({
        _tag: 'Unreadable',
        line: 3,
        reason: 'row repeats the id of an earlier row',
      })
      const unchecked = readAll(repeating, { repeatedIds: 'known_absent' })
      expect(unchecked.handed).toHaveLength(3)
      expect(unchecked.snapshot.problem).toBeNull()
      const capped = readAll(repeating, { repeatedIds: 'known_absent', keepAtMost: 2 })
      expect(capped.handed.map((event) => event.id)).toEqual([first.id, second.id])
      expect(capped.snapshot.highWater).toBe(3)
      expect(capped.snapshot.committedBytes).toBe(unchecked.snapshot.committedBytes)
    })
  })
})
