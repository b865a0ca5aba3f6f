/**
 * What the SQL owner-lock ports share. How a lock is taken is each adapter's own (SQLite: a
 * compare-and-swap of the judged row; PostgreSQL: a session-scoped advisory lock the server releases
 * when its holder's connection drops), so only the checks and the stored record's reading are here.
 */
import { decodeWith, OwnerLock } from '@maka/events'
import * as E from 'fp-ts/lib/Either.js'
import { checkIds } from '../internal/checkIds.js'
import { invalidRecord } from '../StoreError.js'
import { decodeStoredRecord } from '../storedRecords.js'
import type { SqlOutcome } from './SqlDatabase.js'

const decodeLock = decodeWith(OwnerLock)

/**
 * Checks an `acquire` call before the database is asked: a safe session id, then the lock's shape.
 * @category gates
 */
export const checkOwnerLockAcquire = (sessionId: string, lock: OwnerLock): SqlOutcome<void> => {
  const ids = checkIds(['sessionId', sessionId])
  if (E.isLeft(ids)) return ids
  const decoded = decodeLock(lock)
  return E.isLeft(decoded) ? E.left(invalidRecord('OwnerLock', decoded.left)) : E.right(undefined)
}

/**
 * Reads a stored owner-lock record at `at`; one that does not decode is `Unreadable`.
 * @category constructors
 */
export const decodeStoredOwnerLock = (text: string, at: string): SqlOutcome<OwnerLock> =>
  decodeStoredRecord(text, at, decodeLock, () => true)
