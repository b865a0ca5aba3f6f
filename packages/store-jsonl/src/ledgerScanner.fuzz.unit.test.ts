/**
 * Fuzzing the ledger scan (issue 9): committed rows followed by hostile bytes — random bytes, cut
 * rows, invalid UTF-8, a BOM, CRLF line ends, deep nesting, duplicate keys and ids, foreign rows.
 * Whatever comes, the scan returns a snapshot (never throws), keeps every committed row before the
 * damage, drops a final line only when it is a cut JSON object, and gives the same snapshot however
 * the bytes are split into reads.
 */
import { isUtf8 } from 'node:buffer'
import { readdirSync, readFileSync } from 'node:fs'
import { makeLedgerBuilderUnsafe } from '@maka/events/testing'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { RuntimeEvent } from '@maka/events'
import { makeLedgerRowReader, type LedgerIdentity, type LedgerSnapshot } from '@maka/stores'
import { makeLedgerScanner, scanLedger, type LedgerScanner } from './ledgerScanner.js'

const identity = { sessionId: 'session-1', invocationId: 'invocation-1', runId: 'run-1', turnId: 'turn-1' }

/** The read protocol of `readLedgerFile`: scan, carry the unconsumed rest, scan again with the next read. */
const scanInChunks = (bytes: Buffer, cuts: ReadonlyArray<number>, who: LedgerIdentity = identity): LedgerSnapshot => {
  const scanner = makeLedgerScanner(who)
  return scanner.snapshot(feedInChunks(scanner, bytes, cuts))
}

// Feeds the bytes split at `cuts` and returns the length of the unconsumed tail.
const feedInChunks = (scanner: LedgerScanner, bytes: Buffer, cuts: ReadonlyArray<number>): number => {
  let carry = Buffer.alloc(0)
  let at = 0
  for (const cut of [
    ...cuts.map((c) => (bytes.length === 0 ? 0 : c % bytes.length)).sort((a, b) => a - b),
    bytes.length,
  ]) {
    if (cut < at) continue
    const buffer = Buffer.concat([carry, bytes.subarray(at, cut)])
    carry = buffer.subarray(scanner.scan(buffer))
    at = cut
  }
  return carry.length
}

// The same scan in sink mode: what went to the sink, and the scan it reports.
const foldInChunks = (bytes: Buffer, cuts: ReadonlyArray<number>, who: LedgerIdentity = identity) => {
  const handed: Array<RuntimeEvent> = []
  const scanner = makeLedgerScanner(who, (event) => handed.push(event))
  const tail = feedInChunks(scanner, bytes, cuts)
  return { handed, scan: scanner.ledgerScan(tail, 'digest-of-the-reader'), kept: scanner.snapshot(tail).events }
}

// A snapshot as a sink-mode scan reports it.
const asScan = ({ events, ...rest }: LedgerSnapshot) => ({
  rows: events.length,
  ...rest,
  digest: 'digest-of-the-reader',
})

const committedRows = (texts: ReadonlyArray<string>) => {
  const rows = makeLedgerBuilderUnsafe(identity)
  const events = texts.map((text, i) => (i % 2 === 0 ? rows.userText(text) : rows.modelText(text)))
  return { events, bytes: Buffer.concat(events.map((e) => Buffer.from(`${JSON.stringify(e)}\n`, 'utf8'))) }
}

const parses = (bytes: Buffer): boolean => {
  if (!isUtf8(bytes)) return false
  try {
    JSON.parse(bytes.toString('utf8'))
    return true
  } catch {
    return false
  }
}

// Damage that may follow the committed rows.
const row = (event: unknown): string => JSON.stringify(event)
const builder = makeLedgerBuilderUnsafe(identity)
const someRow = builder.userText('a row that could be next')
const damage: fc.Arbitrary<Buffer> = fc.oneof(
  fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)),
  fc.string({ unit: 'binary', maxLength: 64 }).map((s) => Buffer.from(s, 'utf8')),
  fc.nat({ max: row(someRow).length }).map((cut) => Buffer.from(row(someRow).slice(0, cut))),
  fc.constantFrom(
    Buffer.from(`${row(someRow)}`), // complete, no newline
    Buffer.from(`${row(someRow)}\r\n`), // CRLF line end
    Buffer.from(`\ufeff${row(someRow)}\n`), // BOM
    Buffer.from(`${row({ ...someRow, id: 'run-1-e1' })}\n`), // a repeated id
    Buffer.from(`${row(someRow).replace('{', '{"id":"dup",')}\n`), // a duplicate key (JSON.parse keeps the last)
    Buffer.from(`${row({ ...someRow, runId: 'run-9', id: 'x-1' })}\n`), // another run's row
    Buffer.from(`${row({ ...someRow, args: 1 })}\n`), // an unknown key
    Buffer.from([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x0a]), // invalid UTF-8 in a row
    Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xe2, 0x82]), // a character cut by a torn write
    Buffer.from(`{"id":${'['.repeat(5000)}`), // deep nesting, torn
    Buffer.from(`${'['.repeat(5000)}${']'.repeat(5000)}\n`), // deep nesting, a whole row of the wrong shape
    Buffer.from('\n'),
  ),
)

describe('scanLedger under fuzzing', () => {
  describe('when any damage follows committed rows', () => {
    it('never throws, keeps every committed row, and drops only a cut JSON object at the end', () => {
      fc.assert(
        fc.property(
          fc.array(fc.string({ unit: 'grapheme', maxLength: 30 }), { maxLength: 5 }),
          fc.array(damage, { minLength: 1, maxLength: 3 }),
          (texts, damages) => {
            const { events, bytes: committed } = committedRows(texts)
            const tail = Buffer.concat(damages)
            const snapshot = scanLedger(Buffer.concat([committed, tail]), identity)
            expect(snapshot.events.slice(0, events.length)).toEqual(events)
            expect(snapshot.highWater).toBeGreaterThanOrEqual(events.length)
            const lastNewline = tail.lastIndexOf(0x0a)
            const final = tail.subarray(lastNewline + 1)
            expect(snapshot.committedBytes).toBe(committed.length + lastNewline + 1)
            if (snapshot.tornTail !== null) {
              // Only a final line that begins an object and is not yet a whole JSON value is torn.
              expect(snapshot.tornTail).toEqual({ offset: snapshot.committedBytes, length: final.length })
              expect(final[0]).toBe(0x7b)
              expect(parses(final)).toBe(false)
            } else if (final.length > 0) {
              // Any other final line is a problem at its line (or an earlier row's problem).
              expect(snapshot.problem).not.toBeNull()
              expect(snapshot.problem!.line).toBeLessThanOrEqual(snapshot.highWater + 1)
            }
            if (final.length > 0 && (final[0] !== 0x7b || parses(final))) expect(snapshot.tornTail).toBeNull()
          },
        ),
        { numRuns: 2000 },
      )
    })

    it('gives the same snapshot however the bytes are split into reads', () => {
      fc.assert(
        fc.property(
          fc.array(fc.string({ unit: 'grapheme', maxLength: 30 }), { maxLength: 4 }),
          fc.array(damage, { maxLength: 3 }),
          fc.array(fc.nat(), { maxLength: 6 }),
          (texts, damages, cuts) => {
            const bytes = Buffer.concat([committedRows(texts).bytes, ...damages])
            expect(scanInChunks(bytes, cuts)).toEqual(scanLedger(bytes, identity))
          },
        ),
        { numRuns: 2000 },
      )
    })

    it('never throws on random bytes alone, read whole or in pieces', () => {
      fc.assert(
        fc.property(fc.uint8Array({ maxLength: 200 }), fc.array(fc.nat(), { maxLength: 4 }), (raw, cuts) => {
          const bytes = Buffer.from(raw)
          const whole = scanLedger(bytes, identity)
          expect(scanInChunks(bytes, cuts)).toEqual(whole)
          expect(whole.committedBytes + (whole.tornTail?.length ?? 0)).toBeLessThanOrEqual(bytes.length)
        }),
        { numRuns: 3000 },
      )
    })
  })

  describe('when the last row of a golden ledger is cut at every offset', () => {
    const dir = new URL('../../../fixtures/ledgers/', import.meta.url)
    const goldens = readdirSync(dir).filter((name) => name.endsWith('.jsonl'))
    it.each(goldens)(
      '%s: every cut keeps the committed rows and is a torn tail, unless only the newline is missing',
      (name) => {
        const bytes = readFileSync(new URL(name, dir))
        const first = JSON.parse(bytes.toString('utf8').split('\n')[0]!) as { sessionId: string; runId: string }
        const who = { sessionId: first.sessionId, runId: first.runId }
        const whole = scanLedger(bytes, who)
        expect(whole.problem).toBeNull()
        const lastStart = bytes.lastIndexOf(0x0a, bytes.length - 2) + 1
        for (let cut = lastStart; cut <= bytes.length; cut += 1) {
          const snapshot = scanInChunks(bytes.subarray(0, cut), [cut >> 1], who)
          const kept = cut === bytes.length ? whole.events : whole.events.slice(0, -1)
          expect(snapshot.events).toEqual(kept)
          if (cut === bytes.length || cut === lastStart) {
            expect(snapshot.problem).toBeNull()
            expect(snapshot.tornTail).toBeNull()
          } else if (cut === bytes.length - 1) {
            // A complete JSON value without its newline: not committed, not provably torn (docs/decisions.md).
            expect(snapshot.tornTail).toBeNull()
            expect(snapshot.problem).toMatchObject({ _tag: 'Unreadable', line: whole.highWater })
          } else {
            expect(snapshot.problem).toBeNull()
            expect(snapshot.tornTail).toEqual({ offset: lastStart, length: cut - lastStart })
          }
        }
      },
    )
  })
})

describe('a sink-mode scan under fuzzing', () => {
  it('hands over exactly the events the snapshot keeps, keeps none, and reports the rest unchanged', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: 'grapheme', maxLength: 30 }), { maxLength: 4 }),
        fc.array(damage, { maxLength: 3 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        (texts, damages, cuts) => {
          const bytes = Buffer.concat([committedRows(texts).bytes, ...damages])
          const snapshot = scanLedger(bytes, identity)
          const { handed, scan, kept } = foldInChunks(bytes, cuts)
          expect(handed).toEqual(snapshot.events)
          expect(kept).toEqual([])
          expect(scan).toEqual(asScan(snapshot))
        },
      ),
      { numRuns: 2000 },
    )
  })

  it('matches the snapshot on random bytes alone, and on rows of another run', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 200 }),
        fc.array(fc.nat(), { maxLength: 4 }),
        fc.boolean(),
        (raw, cuts, foreign) => {
          const who = foreign ? { sessionId: 'session-1', runId: 'run-9' } : identity
          const bytes = Buffer.concat([committedRows(['a', 'b']).bytes, Buffer.from(raw)])
          const snapshot = scanLedger(bytes, who)
          const { handed, scan } = foldInChunks(bytes, cuts, who)
          expect(handed).toEqual(snapshot.events)
          expect(scan).toEqual(asScan(snapshot))
        },
      ),
      { numRuns: 2000 },
    )
  })

  it('keeps the duplicate-id check: a repeated id is unreadable at its line, in sink mode too', () => {
    const { bytes } = committedRows(['a', 'b', 'c'])
    const first = bytes.subarray(0, bytes.indexOf(0x0a) + 1)
    const { handed, scan } = foldInChunks(Buffer.concat([bytes, first]), [first.length + 3])
    expect(handed).toHaveLength(3)
    expect(scan).toMatchObject({ rows: 3, highWater: 4, problem: { _tag: 'Unreadable', line: 4 } })
  })
})

describe('a sink-mode row reader', () => {
  it('hands over exactly the events its snapshot keeps, with the same answer', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: 'grapheme', maxLength: 30 }), { maxLength: 4 }),
        fc.array(damage, { maxLength: 3 }),
        (texts, damages) => {
          const rowTexts = Buffer.concat([committedRows(texts).bytes, ...damages])
            .toString('utf8')
            .split('\n')
            .slice(0, -1)
          const keeping = makeLedgerRowReader(identity)
          const handed: Array<RuntimeEvent> = []
          const folding = makeLedgerRowReader(identity, (event) => handed.push(event))
          for (const text of rowTexts) {
            keeping.add(text)
            folding.add(text)
          }
          const snapshot = keeping.snapshot()
          expect(handed).toEqual(snapshot.events)
          expect(folding.snapshot().events).toEqual([])
          expect(folding.ledgerScan('digest-of-the-reader')).toEqual(asScan(snapshot))
        },
      ),
      { numRuns: 1000 },
    )
  })
})
