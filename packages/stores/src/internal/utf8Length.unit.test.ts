import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { utf8Length } from './utf8Length.js'

// What the row stores counted with `Buffer.byteLength(text, 'utf8')`: the bytes of the text encoded
// as UTF-8, a lone surrogate written as U+FFFD (TextEncoder encodes the same way).
const encoded = (text: string): number => new TextEncoder().encode(text).length

describe('utf8Length', () => {
  describe('when given any string of UTF-16 code units, lone surrogates included', () => {
    it('counts the bytes of its UTF-8 encoding', () => {
      fc.assert(
        fc.property(fc.string({ unit: 'binary' }), (text) => utf8Length(text) === encoded(text)),
        { numRuns: 3000 },
      )
      fc.assert(
        fc.property(
          fc
            .array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 16 })
            .map((units) => String.fromCharCode(...units)),
          (text) => utf8Length(text) === encoded(text),
        ),
        { numRuns: 3000 },
      )
    })
  })

  describe('when given the edges of each encoding length', () => {
    it('counts 1, 2, 3 and 4 bytes per character, and 3 for a lone surrogate', () => {
      for (const text of [
        '',
        'a',
        '\u007f',
        '\u0080',
        '\u07ff',
        '\u0800',
        '\uffff',
        '😀',
        '\ud800',
        '\udc00',
        'a\ud800b',
      ])
        expect(utf8Length(text), JSON.stringify(text)).toBe(encoded(text))
    })
  })
})
