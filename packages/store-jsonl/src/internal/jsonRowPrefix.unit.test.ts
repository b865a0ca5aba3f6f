/**
 * The JSON-row prefix check against its oracles: `JSON.parse` (what a complete row is) and
 * `isUtf8` (what valid text is). A fast-check property per direction, plus the corner cases a
 * torn write produces.
 */
import { isUtf8 } from 'node:buffer'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { makeJsonRowPrefix, type JsonRowPrefixVerdict } from './jsonRowPrefix.js'

const verdictOf = (bytes: Uint8Array, split = bytes.length): JsonRowPrefixVerdict => {
  const check = makeJsonRowPrefix()
  check.feed(bytes, 0, split)
  check.feed(bytes, split, bytes.length)
  return check.verdict()
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

// JSON texts with whitespace between tokens, as another writer (or a hand edit) might produce them.
const spaced = fc
  .tuple(fc.jsonValue(), fc.constantFrom(undefined, 1, '\t', ' \r '))
  .map(([value, indent]) => JSON.stringify(value, null, indent as never) ?? 'null')
const objectText = fc
  .tuple(fc.dictionary(fc.string(), fc.jsonValue()), fc.constantFrom(undefined, 2, '\t'))
  .map(([value, indent]) => JSON.stringify(value, null, indent as never))
const anyText = fc.oneof(spaced, objectText, fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' }))
// A byte string near JSON: a text with some bytes replaced, inserted or removed.
const nearJson = fc
  .tuple(anyText, fc.array(fc.tuple(fc.nat(), fc.integer({ min: -1, max: 255 })), { maxLength: 4 }))
  .map(([text, edits]) => {
    const bytes = [...Buffer.from(text, 'utf8')]
    for (const [at, byte] of edits) {
      const i = bytes.length === 0 ? 0 : at % bytes.length
      if (byte === -1) bytes.splice(i, 1)
      else if (at % 2 === 0) bytes.splice(i, 0, byte)
      else bytes[i] = byte
    }
    return Buffer.from(bytes)
  })

describe('makeJsonRowPrefix', () => {
  describe('when fed every prefix of a JSON text', () => {
    it('never rejects one, and calls a cut object torn and the whole object complete', () => {
      fc.assert(
        fc.property(fc.oneof(objectText, spaced), (text) => {
          const bytes = Buffer.from(text, 'utf8')
          // Only whitespace may follow the closing brace, and that is still the complete value.
          const closedAt = Buffer.byteLength(text.trimEnd())
          const check = makeJsonRowPrefix()
          const seen: Array<JsonRowPrefixVerdict> = []
          const expected: Array<JsonRowPrefixVerdict> = []
          for (let cut = 1; cut <= bytes.length; cut += 1) {
            check.feed(bytes, cut - 1, cut)
            seen.push(check.verdict())
            expected.push(text.startsWith('{') ? (cut >= closedAt ? 'complete' : 'torn') : 'not_object')
          }
          expect(seen).toEqual(expected)
        }),
        { numRuns: 500 },
      )
    })
  })

  describe('when fed any bytes', () => {
    it('calls them complete exactly when JSON.parse reads them as a text starting with {', () => {
      fc.assert(
        fc.property(nearJson, fc.nat(), (bytes, seed) => {
          const verdict = verdictOf(bytes, bytes.length === 0 ? 0 : seed % bytes.length)
          expect(verdict === 'complete').toBe(parses(bytes) && bytes[0] === 0x7b)
        }),
        { numRuns: 3000 },
      )
    })

    it('rejects only what no continuation can make JSON: a rejected prefix never parses, however it ends', () => {
      const endings = ['', '"', '"}', '}', ']}', '0}', '"]}', 'e}', '"}]}', 'null}', ' ']
      fc.assert(
        fc.property(nearJson, (bytes) => {
          const check = makeJsonRowPrefix()
          check.feed(bytes, 0, bytes.length)
          if (!check.rejected()) return
          for (const end of endings) expect(parses(Buffer.concat([bytes, Buffer.from(end)]))).toBe(false)
          if (check.verdict() === 'not_utf8') expect(isUtf8(bytes)).toBe(false)
        }),
        { numRuns: 3000 },
      )
    })

    it('names a row that is not UTF-8 as isUtf8 does, else as not JSON', () => {
      fc.assert(
        fc.property(fc.uint8Array({ maxLength: 24 }), (bytes) => {
          const check = makeJsonRowPrefix()
          check.feed(bytes, 0, bytes.length)
          const buffer = Buffer.from(bytes)
          if (!isUtf8(buffer)) expect(check.rowReason()).toBe('row is not valid UTF-8')
          else if (check.rejected()) expect(check.rowReason()).toBe('row is not valid JSON')
        }),
        { numRuns: 3000 },
      )
    })
  })

  describe('when a torn write cut a multi-byte character', () => {
    it.each([
      ['two-byte', 'é'],
      ['three-byte', '€'],
      ['four-byte', '😀'],
    ])('a %s character cut anywhere inside a string is still torn', (_name, char) => {
      const whole = Buffer.from(`{"text":"${char}"}`, 'utf8')
      const start = whole.indexOf(Buffer.from(char, 'utf8'))
      for (let cut = start + 1; cut < start + Buffer.byteLength(char); cut += 1) {
        expect(verdictOf(whole.subarray(0, cut))).toBe('torn')
      }
    })

    it('rejects overlong forms, surrogates and code points past U+10FFFF', () => {
      for (const bad of [
        [0xc0, 0x80],
        [0xe0, 0x80, 0x80],
        [0xed, 0xa0, 0x80],
        [0xf4, 0x90, 0x80, 0x80],
        [0xf8],
        [0x80],
      ]) {
        expect(verdictOf(Buffer.from([...Buffer.from('{"a":"'), ...bad]))).toBe('not_utf8')
      }
    })
  })

  describe('when the row nests deeply', () => {
    it('tracks a million open containers in constant memory per level', () => {
      const depth = 1_000_000
      const open = Buffer.from(`{"a":${'['.repeat(depth)}`)
      expect(verdictOf(open)).toBe('torn')
      expect(verdictOf(Buffer.concat([open, Buffer.from(`${']'.repeat(depth)}}`)]))).toBe('complete')
      expect(verdictOf(Buffer.concat([open, Buffer.from(`${']'.repeat(depth)}]`)]))).toBe('not_json')
    })
  })

  describe('when reset', () => {
    it('judges the next row on its own', () => {
      const check = makeJsonRowPrefix()
      const garbage = Buffer.from('nope')
      check.feed(garbage, 0, garbage.length)
      expect(check.rejected()).toBe(true)
      check.reset()
      const row = Buffer.from('{"id":')
      check.feed(row, 0, row.length)
      expect(check.verdict()).toBe('torn')
    })
  })
})
