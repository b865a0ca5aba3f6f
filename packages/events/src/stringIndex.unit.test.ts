import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { makeStringIndex } from './stringIndex.js'

describe('makeStringIndex', () => {
  describe('when fed arbitrary strings, repeats included', () => {
    it('numbers, finds and gives back every string exactly as a Map<string, number> does', () => {
      fc.assert(
        fc.property(
          fc.array(
            fc.oneof(
              fc.string({ maxLength: 6 }),
              fc.string({ unit: 'binary', maxLength: 4 }),
              fc.constantFrom('a', 'b', ''),
            ),
            {
              maxLength: 400,
            },
          ),
          (strings) => {
            const index = makeStringIndex()
            const model = new Map<string, number>()
            for (const s of strings) {
              expect(index.find(s)).toBe(model.get(s) ?? -1)
              if (!model.has(s)) model.set(s, model.size)
              expect(index.intern(s)).toBe(model.get(s))
            }
            expect(index.size()).toBe(model.size)
            for (const [s, n] of model) expect(index.get(n)).toBe(s)
          },
        ),
        { numRuns: 1000 },
      )
    })
  })

  describe('when ids share a hash', () => {
    it('tells them apart by their characters', () => {
      // Two ids whose whole 32-bit FNV-1a hashes are equal, found by search (~10^5 tries, birthday bound).
      const byHash = new Map<number, string>()
      const fnv = (s: string) => {
        let h = 0x811c9dc5
        for (let i = 0; i < s.length; i += 1) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193)
        return h >>> 0
      }
      let pair: [string, string] | null = null
      for (let i = 0; pair === null; i += 1) {
        const id = `row-${i}`
        const other = byHash.get(fnv(id))
        if (other !== undefined) pair = [other, id]
        else byHash.set(fnv(id), id)
      }
      const index = makeStringIndex()
      // Equal hashes, so only comparing the stored characters can tell them apart.
      expect(index.intern(pair[0])).toBe(0)
      expect(index.find(pair[1])).toBe(-1)
      expect(index.intern(pair[1])).toBe(1)
      expect(index.intern(pair[0])).toBe(0)
      expect(index.find(pair[1])).toBe(1)
    })
  })

  describe('when it grows past its first tables', () => {
    it('keeps every id it was given', () => {
      const index = makeStringIndex()
      const n = 50_000
      for (let i = 0; i < n; i += 1) expect(index.intern(`bench-run-e${i}`)).toBe(i)
      for (let i = 0; i < n; i += 997) expect(index.find(`bench-run-e${i}`)).toBe(i)
      expect(index.get(n - 1)).toBe(`bench-run-e${n - 1}`)
      expect(index.get(0)).toBe('bench-run-e0')
      expect(index.size()).toBe(n)
    })

    it('gives back a string longer than one slice of code units', () => {
      const index = makeStringIndex()
      const long = 'é'.repeat(10_000) + 'x'
      expect(index.get(index.intern(long))).toBe(long)
    })
  })
})
