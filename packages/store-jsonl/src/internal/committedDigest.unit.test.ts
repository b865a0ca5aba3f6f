/**
 * The committed digest and the prefix digest at a pin against their oracle, node's SHA-256 of the
 * bytes up to the last newline and up to the pin's newline: a fast-check property over any rows,
 * cut into any read chunks, each consumed either up to its last newline (a row carried over, as a
 * normal read does) or whole (a bad row dropped as it streams, as the scanner does).
 */
import { createHash } from 'node:crypto'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { EMPTY_DIGEST, makeCommittedDigest } from './committedDigest.js'

const NEWLINE = 0x0a
const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex')

// Ends of the newline-terminated rows of `bytes`, 1-based row i ending before `ends[i - 1]`.
const rowEnds = (bytes: Buffer): ReadonlyArray<number> => {
  const ends: Array<number> = []
  for (let at = bytes.indexOf(NEWLINE); at !== -1; at = bytes.indexOf(NEWLINE, at + 1)) ends.push(at + 1)
  return ends
}

// Feeds `bytes` as a read loop does: chunks of the given sizes appended to what was carried, each
// consumed up to its last newline or (when `drop` says so) whole. Returns the committed count.
const feedAll = (
  digest: ReturnType<typeof makeCommittedDigest>,
  bytes: Buffer,
  sizes: ReadonlyArray<number>,
  drops: ReadonlyArray<boolean>,
): number => {
  let carried = Buffer.alloc(0)
  let read = 0
  let fed = 0
  let committed = 0
  for (let i = 0; read < bytes.length; i += 1) {
    const size = Math.max(1, sizes[i % sizes.length] ?? 1)
    const chunk = bytes.subarray(read, Math.min(bytes.length, read + size))
    read += chunk.length
    const buffer = Buffer.concat([carried, chunk])
    const last = buffer.lastIndexOf(NEWLINE)
    const consumed = drops[i % drops.length] === true ? buffer.length : last + 1
    if (last !== -1) committed = fed + last + 1
    digest.feed(buffer, consumed, committed)
    fed += consumed
    carried = buffer.subarray(consumed)
  }
  return committed
}

const ledgerBytes = fc
  .tuple(fc.array(fc.uint8Array({ maxLength: 40 }), { maxLength: 30 }), fc.uint8Array({ maxLength: 20 }))
  .map(([rows, tail]) =>
    Buffer.concat([
      ...rows.map((row) => Buffer.concat([Buffer.from(row.map((b) => (b === NEWLINE ? 0x20 : b))), Buffer.from('\n')])),
      Buffer.from(tail.map((b) => (b === NEWLINE ? 0x20 : b))),
    ]),
  )

describe('makeCommittedDigest', () => {
  it('digests the committed bytes, and at a pin the bytes up to its newline, however the reads fall', () => {
    fc.assert(
      fc.property(
        ledgerBytes,
        fc.array(fc.integer({ min: 1, max: 64 }), { minLength: 1, maxLength: 8 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }),
        fc.nat({ max: 40 }),
        (bytes, sizes, drops, pin) => {
          const ends = rowEnds(bytes)
          const digest = makeCommittedDigest(pin)
          const committed = feedAll(digest, bytes, sizes, drops)
          expect(committed).toBe(ends.at(-1) ?? 0)
          const atPin = digest.atPin()
          if (pin === 0) expect(atPin).toBe(EMPTY_DIGEST)
          else if (pin <= ends.length) expect(atPin).toBe(sha256(bytes.subarray(0, ends[pin - 1])))
          else expect(atPin).toBeNull()
          expect(digest.digest(committed)).toBe(sha256(bytes.subarray(0, committed)))
        },
      ),
      { numRuns: 500 },
    )
  })

  describe('when no pin is given', () => {
    it('reports none, and the same committed digest', () => {
      const bytes = Buffer.from('{"a":1}\n{"b":2}\n{"c"')
      const digest = makeCommittedDigest()
      const committed = feedAll(digest, bytes, [5], [false])
      expect(digest.atPin()).toBeNull()
      expect(digest.digest(committed)).toBe(sha256(bytes.subarray(0, 16)))
    })
  })
})
