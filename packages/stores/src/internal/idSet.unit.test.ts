import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { makeIdSet } from './idSet.js'

describe('makeIdSet', () => {
  describe('when fed arbitrary strings, repeats included', () => {
    it('answers every add exactly as a Set<string> does', () => {
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
          (ids) => {
            const set = makeIdSet()
            const model = new Set<string>()
            for (const id of ids) {
              const known = model.size
              model.add(id)
              expect(set.add(id)).toBe(model.size > known)
            }
            expect(set.size()).toBe(model.size)
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
      const set = makeIdSet()
      // Equal hashes, so only comparing the stored characters can tell them apart.
      expect(set.add(pair[0])).toBe(true)
      expect(set.add(pair[1])).toBe(true)
      expect(set.add(pair[0])).toBe(false)
      expect(set.add(pair[1])).toBe(false)
    })
  })

  describe('when it grows past its first tables', () => {
    it('keeps every id it was given', () => {
      const set = makeIdSet()
      const n = 50_000
      for (let i = 0; i < n; i += 1) expect(set.add(`bench-run-e${i}`)).toBe(true)
      for (let i = 0; i < n; i += 997) expect(set.add(`bench-run-e${i}`)).toBe(false)
      expect(set.size()).toBe(n)
    })
  })
})
