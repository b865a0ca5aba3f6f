import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { makeIdSet } from './idSet.js'

const RUN = 'run-1'

// Ids that sit on both sides of every routing rule: the run's own numbered ids (small, near the
// page edges, at and past the bit range), the same numbers spelt with a leading zero or a sign,
// other runs' ids, a bare prefix, and arbitrary strings.
const rowId = fc.oneof(
  fc.nat({ max: 300 }).map((n) => `${RUN}-e${n}`),
  fc.constantFrom(65535, 65536, 131071, 16777215, 16777216, 99999999, 4294967296).map((n) => `${RUN}-e${n}`),
  fc.nat({ max: 300 }).map((n) => `${RUN}-e0${n}`),
  fc.nat({ max: 300 }).map((n) => `${RUN}-e+${n}`),
  fc.nat({ max: 300 }).map((n) => `${RUN}-e${n}x`),
  fc.nat({ max: 300 }).map((n) => `run-10-e${n}`),
  fc.nat({ max: 300 }).map((n) => `run-e${n}`),
  fc.constantFrom(`${RUN}-e`, `${RUN}-`, RUN, `${RUN}-e-1`, `${RUN}-e1.5`, `${RUN}-e١`),
  fc.string({ minLength: 1, maxLength: 12 }),
)

describe('makeIdSet', () => {
  it('answers exactly as a Set of the same strings', () => {
    fc.assert(
      fc.property(fc.array(rowId, { maxLength: 400 }), (ids) => {
        const set = makeIdSet(RUN)
        const model = new Set<string>()
        for (const id of ids) {
          const fresh = !model.has(id)
          model.add(id)
          expect(set.add(id)).toBe(fresh)
          expect(set.size()).toBe(model.size)
        }
      }),
      { numRuns: 2000 },
    )
  })

  it('tells a numbered id from the same number written another way', () => {
    const set = makeIdSet(RUN)
    expect(set.add(`${RUN}-e7`)).toBe(true)
    expect(set.add(`${RUN}-e07`)).toBe(true)
    expect(set.add(`${RUN}-e7`)).toBe(false)
    expect(set.add(`${RUN}-e07`)).toBe(false)
    expect(set.add(`${RUN}-e0`)).toBe(true)
    expect(set.add(`${RUN}-e0`)).toBe(false)
    expect(set.size()).toBe(3)
  })

  it('keeps ids past the bit range exact', () => {
    const set = makeIdSet(RUN)
    expect(set.add(`${RUN}-e16777215`)).toBe(true)
    expect(set.add(`${RUN}-e16777216`)).toBe(true)
    expect(set.add(`${RUN}-e16777216`)).toBe(false)
    expect(set.add(`${RUN}-e16777215`)).toBe(false)
  })
})
