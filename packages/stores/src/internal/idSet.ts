/**
 * The set of row ids a ledger read has seen (a repeated id makes a ledger unreadable), kept in
 * typed arrays instead of a `Set<string>`. A `Set` held every id as its own string on V8's heap —
 * at 100k rows that alone was a third of a fold's peak memory: the strings survive every young
 * collection, get promoted, and keep the young generation growing. Here an id costs its UTF-16 code
 * units in one growing array plus two slots of an open-addressing table, and nothing the garbage
 * collector has to trace. Membership is exact: equal hashes are confirmed by comparing the stored
 * code units, so no id is ever taken for another.
 */

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * A set of strings that only grows.
 * @category models
 */
export interface IdSet {
  /** Adds `id`; false when it was already there. */
  readonly add: (id: string) => boolean
  readonly size: () => number
}

// -------------------------------------------------------------------------------------
// internals
// -------------------------------------------------------------------------------------

const EMPTY = -1

// FNV-1a over UTF-16 code units, 32 bits.
const hashOf = (id: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < id.length; i += 1) {
    h ^= id.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h >>> 0
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * An empty id set.
 * @category constructors
 */
export const makeIdSet = (): IdSet => {
  let count = 0
  // Code units of every id, back to back; id k spans [starts[k], starts[k + 1]).
  let units = new Uint16Array(1 << 12)
  let used = 0
  let starts = new Uint32Array(1 << 10)
  let hashes = new Uint32Array(1 << 10)
  // Open addressing, linear probing, at most half full: each slot holds an id's index or EMPTY.
  let slots = new Int32Array(1 << 11).fill(EMPTY)

  const equalsStored = (k: number, id: string): boolean => {
    const from = starts[k] ?? 0
    const to = k + 1 < count ? (starts[k + 1] ?? 0) : used
    if (to - from !== id.length) return false
    for (let i = 0; i < id.length; i += 1) if (units[from + i] !== id.charCodeAt(i)) return false
    return true
  }

  const place = (table: Int32Array, k: number, hash: number): void => {
    const mask = table.length - 1
    let at = hash & mask
    while (table[at] !== EMPTY) at = (at + 1) & mask
    table[at] = k
  }

  const grow = (): void => {
    const larger = new Int32Array(slots.length * 2).fill(EMPTY)
    for (let k = 0; k < count; k += 1) place(larger, k, hashes[k] ?? 0)
    slots = larger
  }

  const store = (id: string, hash: number): void => {
    if (count === starts.length) {
      const s = new Uint32Array(starts.length * 2)
      s.set(starts)
      starts = s
      const h = new Uint32Array(hashes.length * 2)
      h.set(hashes)
      hashes = h
    }
    if (used + id.length > units.length) {
      let length = units.length * 2
      while (used + id.length > length) length *= 2
      const u = new Uint16Array(length)
      u.set(units.subarray(0, used))
      units = u
    }
    for (let i = 0; i < id.length; i += 1) units[used + i] = id.charCodeAt(i)
    starts[count] = used
    hashes[count] = hash
    used += id.length
    count += 1
  }

  return {
    add: (id) => {
      const hash = hashOf(id)
      const mask = slots.length - 1
      let at = hash & mask
      for (let k = slots[at] ?? EMPTY; k !== EMPTY; k = slots[at] ?? EMPTY) {
        if (hashes[k] === hash && equalsStored(k, id)) return false
        at = (at + 1) & mask
      }
      store(id, hash)
      slots[at] = count - 1
      if (count * 2 > slots.length) grow()
      return true
    },
    size: () => count,
  }
}
