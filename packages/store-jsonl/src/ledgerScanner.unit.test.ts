import { makeLedgerBuilderUnsafe } from '@maka/events/testing'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { scanLedger } from './ledgerScanner.js'

const identity = { sessionId: 'session-1', invocationId: 'invocation-1', runId: 'run-1', turnId: 'turn-1' }

const ledgerOf = (texts: ReadonlyArray<string>) => {
  const rows = makeLedgerBuilderUnsafe(identity)
  const events = texts.map((text) => rows.userText(text))
  const lines = events.map((event) => Buffer.from(`${JSON.stringify(event)}\n`, 'utf8'))
  return { events, lines, bytes: Buffer.concat(lines) }
}

describe('scanLedger', () => {
  describe('when a ledger of any rows is cut at any byte', () => {
    it('keeps exactly the rows that end before the cut, and reports the rest as a torn tail unless only its newline is missing', () => {
      fc.assert(
        fc.property(
          fc.array(fc.string({ unit: 'binary', maxLength: 40 }), { maxLength: 6 }),
          fc.nat(),
          (texts, seed) => {
            const { events, lines, bytes } = ledgerOf(texts)
            const cut = bytes.length === 0 ? 0 : seed % (bytes.length + 1)
            let complete = 0
            let end = 0
            while (complete < lines.length && end + lines[complete]!.length <= cut) {
              end += lines[complete]!.length
              complete += 1
            }
            const snapshot = scanLedger(bytes.subarray(0, cut), identity)
            // A row cut just before its newline is a complete JSON value: not provably torn.
            const newlineOnly = complete < lines.length && cut === end + lines[complete]!.length - 1
            expect(snapshot.problem?._tag ?? null).toBe(newlineOnly ? 'Unreadable' : null)
            expect(snapshot.problem?.line ?? null).toBe(newlineOnly ? complete + 1 : null)
            expect(snapshot.events).toEqual(events.slice(0, complete))
            expect(snapshot.highWater).toBe(complete)
            expect(snapshot.committedBytes).toBe(end)
            expect(snapshot.tornTail).toEqual(cut === end || newlineOnly ? null : { offset: end, length: cut - end })
          },
        ),
      )
    })
  })

  describe('when a row after a problem is fine', () => {
    it('still counts it in the high-water but returns no event past the problem', () => {
      const { lines } = ledgerOf(['a', 'b'])
      const snapshot = scanLedger(Buffer.concat([lines[0]!, Buffer.from('[]\n'), lines[1]!]), identity)
      expect(snapshot.events).toHaveLength(1)
      expect(snapshot.highWater).toBe(3)
      expect(snapshot.problem).toMatchObject({ _tag: 'Unreadable', line: 2 })
    })
  })

  describe('when given a plain Uint8Array', () => {
    it('scans it like a Buffer', () => {
      const { events, bytes } = ledgerOf(['x'])
      expect(scanLedger(new Uint8Array(bytes), identity).events).toEqual(events)
    })
  })
})
