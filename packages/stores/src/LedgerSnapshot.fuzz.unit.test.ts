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
import { makeLedgerScanner, scanLedger, type LedgerIdentity, type LedgerSnapshot } from './LedgerSnapshot.js'

const identity = { sessionId: 'session-1', invocationId: 'invocation-1', runId: 'run-1', turnId: 'turn-1' }

/** The read protocol of `readLedgerFile`: scan, carry the unconsumed rest, scan again with the next read. */
const scanInChunks = (bytes: Buffer, cuts: ReadonlyArray<number>, who: LedgerIdentity = identity): LedgerSnapshot => {
  const scanner = makeLedgerScanner(who)
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
  return scanner.snapshot(carry.length)
}

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
