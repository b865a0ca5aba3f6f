/**
 * An exact index of strings kept in typed arrays instead of V8's heap. A fold over a million-row
 * ledger must remember something per row or per tool call (ids, to refuse a repeated one; call ids,
 * to pair calls with results); kept as the rows' own strings in a `Set` or `Map`, that memory
 * survives every young collection, gets promoted and keeps V8's young generation growing — at
 * 100k rows, a third of a fold's peak. Here a string costs its UTF-16 code units in one growing
 * array plus two slots of an open-addressing table, and nothing the collector traces. Lookups are
 * exact: equal hashes are confirmed by comparing the stored code units.
 */

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * Strings numbered 0, 1, 2, … in the order they were first added.
 * @category models
 */
export interface StringIndex {
  /** The number of `s`, adding it when it is new. */
  readonly intern: (s: string) => number
  /** The number of `s`, or -1 when it was never added. */
  readonly find: (s: string) => number
  /** The string numbered `n`. */
  readonly get: (n: number) => string
  readonly size: () => number
}

// -------------------------------------------------------------------------------------
// internals
// -------------------------------------------------------------------------------------

const EMPTY = -1

// FNV-1a over UTF-16 code units, 32 bits.
const hashOf = (s: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < s.length; i += 1) {
    h ^= s.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h >>> 0
}

const grown = <T extends Uint16Array | Uint32Array>(array: T, atLeast: number, make: (n: number) => T): T => {
  let length = array.length * 2
  while (length < atLeast) length *= 2
  const larger = make(length)
  larger.set(array)
  return larger
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * An empty string index.
 * @category constructors
 */
export const makeStringIndex = (): StringIndex => {
  let count = 0
  // Code units of every string, back to back; string k spans [starts[k], starts[k + 1]).
  let units = new Uint16Array(1 << 12)
  let used = 0
  let starts = new Uint32Array(1 << 10)
  let hashes = new Uint32Array(1 << 10)
  // Open addressing, linear probing, at most half full: each slot holds a string's number or EMPTY.
  let slots = new Int32Array(1 << 11).fill(EMPTY)

  const endOf = (k: number): number => (k + 1 < count ? (starts[k + 1] ?? 0) : used)

  const equalsStored = (k: number, s: string): boolean => {
    const from = starts[k] ?? 0
    if (endOf(k) - from !== s.length) return false
    for (let i = 0; i < s.length; i += 1) if (units[from + i] !== s.charCodeAt(i)) return false
    return true
  }

  // The slot holding `s`, or the empty slot where it belongs.
  const slotOf = (s: string, hash: number): number => {
    const mask = slots.length - 1
    let at = hash & mask
    for (let k = slots[at] ?? EMPTY; k !== EMPTY; k = slots[at] ?? EMPTY) {
      if (hashes[k] === hash && equalsStored(k, s)) return at
      at = (at + 1) & mask
    }
    return at
  }

  const rehash = (): void => {
    const larger = new Int32Array(slots.length * 2).fill(EMPTY)
    const mask = larger.length - 1
    for (let k = 0; k < count; k += 1) {
      let at = (hashes[k] ?? 0) & mask
      while (larger[at] !== EMPTY) at = (at + 1) & mask
      larger[at] = k
    }
    slots = larger
  }

  const store = (s: string, hash: number): number => {
    if (count === starts.length) {
      starts = grown(starts, count + 1, (n) => new Uint32Array(n))
      hashes = grown(hashes, count + 1, (n) => new Uint32Array(n))
    }
    if (used + s.length > units.length) units = grown(units, used + s.length, (n) => new Uint16Array(n))
    for (let i = 0; i < s.length; i += 1) units[used + i] = s.charCodeAt(i)
    starts[count] = used
    hashes[count] = hash
    used += s.length
    count += 1
    return count - 1
  }

  return {
    intern: (s) => {
      const hash = hashOf(s)
      const at = slotOf(s, hash)
      const known = slots[at] ?? EMPTY
      if (known !== EMPTY) return known
      const n = store(s, hash)
      slots[at] = n
      if (count * 2 > slots.length) rehash()
      return n
    },
    find: (s) => slots[slotOf(s, hashOf(s))] ?? EMPTY,
    get: (n) => {
      const from = starts[n] ?? 0
      const to = endOf(n)
      let s = ''
      // In slices: a spread of a long string's units would overflow the call stack.
      for (let i = from; i < to; i += 4096) s += String.fromCharCode(...units.subarray(i, Math.min(i + 4096, to)))
      return s
    },
    size: () => count,
  }
}
