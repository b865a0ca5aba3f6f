/**
 * The set of row ids a ledger read has seen (a repeated id makes a ledger unreadable), kept in a
 * `StringIndex` (`@maka/events`): outside V8's heap, exact. A `Set` of the rows' own id strings
 * kept them all alive — a third of a fold's peak memory at 100k rows (decision 99).
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

/**
 * An empty id set.
 * @category constructors
 */
export const makeIdSet = (): IdSet => {
  const index = makeStringIndex()
  return {
    add: (id) => {
      const before = index.size()
      return index.intern(id) === before
    },
    size: index.size,
  }
}
