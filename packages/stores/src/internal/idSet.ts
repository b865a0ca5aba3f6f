/**
 * The set of row ids a ledger read has seen (a repeated id makes a ledger unreadable).
 *
 * The runtime names its rows `<runId>-e<row>` (executor `runWriter`), so in a ledger it wrote every
 * id is its own run's prefix and a number. Those ids are kept as bits: one bit per number, in 8 KiB
 * pages made when first touched, so a million-row ledger costs 128 KiB instead of tens of MB of id
 * strings in a `StringIndex` (decision 100). Any other id — another run's, a number with a
 * leading zero, a sign, or past the pages' range — goes to a `StringIndex` (`@maka/events`): outside
 * V8's heap, exact. Which of the two holds an id depends on the id alone, never on what came before,
 * so the set stays exact: a canonical decimal names exactly one number and back.
 */
import { makeStringIndex } from '@maka/events'

/**
 * A set of strings that only grows.
 * @category models
 */
export interface IdSet {
  /** Adds `id`; false when it was already there. */
  readonly add: (id: string) => boolean
  readonly size: () => number
}

const PAGE_BITS = 1 << 16
const PAGE_WORDS = PAGE_BITS >>> 5
// 256 pages: numbers below 2^24 (16.7M rows) are bits; at most 2 MiB whatever the ids are.
const PAGE_COUNT = 1 << 8
const LIMIT = PAGE_BITS * PAGE_COUNT
// Enough digits for any number below LIMIT.
const MAX_DIGITS = String(LIMIT - 1).length
const ZERO = 0x30
const NINE = 0x39

/**
 * The row number of `id` when it is `prefix` followed by a canonical decimal below {@link LIMIT}
 * (no sign, no leading zero but for `0` itself), else -1.
 */
const rowNumberOf = (id: string, prefix: string): number => {
  const digits = id.length - prefix.length
  if (digits < 1 || digits > MAX_DIGITS || !id.startsWith(prefix)) return -1
  if (digits > 1 && id.charCodeAt(prefix.length) === ZERO) return -1
  let n = 0
  for (let i = prefix.length; i < id.length; i += 1) {
    const c = id.charCodeAt(i)
    if (c < ZERO || c > NINE) return -1
    n = n * 10 + (c - ZERO)
  }
  return n < LIMIT ? n : -1
}

/**
 * An empty id set for the ledger of run `runId`.
 * @category constructors
 */
export const makeIdSet = (runId: string): IdSet => {
  const prefix = `${runId}-e`
  const pages: Array<Uint32Array | undefined> = []
  const others = makeStringIndex()
  let numbered = 0

  const addNumber = (n: number): boolean => {
    const at = n >>> 16
    let page = pages[at]
    if (page === undefined) {
      page = new Uint32Array(PAGE_WORDS)
      pages[at] = page
    }
    const word = (n & (PAGE_BITS - 1)) >>> 5
    const bit = 1 << (n & 31)
    const before = page[word] ?? 0
    if ((before & bit) !== 0) return false
    page[word] = before | bit
    numbered += 1
    return true
  }

  return {
    add: (id) => {
      const n = rowNumberOf(id, prefix)
      if (n >= 0) return addNumber(n)
      const before = others.size()
      return others.intern(id) === before
    },
    size: () => numbered + others.size(),
  }
}
