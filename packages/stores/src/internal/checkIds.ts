/**
 * The id gate every store method passes first: each id that names a file or folder must be a safe
 * id before any path is built from it, so `..`, `a/b` or an empty id never reach the filesystem.
 */
import { isSafeId } from '@maka/events'
import * as E from 'fp-ts/lib/Either.js'
import { invalidId, type InvalidId } from '../StoreError.js'

/**
 * Checks `[field, value]` pairs in order; the first unsafe one is the error.
 * @category gates
 */
export const checkIds = (
  ...pairs: ReadonlyArray<readonly [field: string, value: unknown]>
): E.Either<InvalidId, void> => {
  for (const [field, value] of pairs) {
    if (!isSafeId(value)) return E.left(invalidId(field, value))
  }
  return E.right(undefined)
}

/**
 * Checks a high-water used in a claim file name: an integer ≥ 0.
 * @category gates
 */
export const checkHighWater = (field: string, value: unknown): E.Either<InvalidId, number> =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
    ? E.right(value)
    : E.left(invalidId(field, value))
