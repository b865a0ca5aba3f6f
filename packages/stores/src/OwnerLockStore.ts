/**
 * The session owner-lock port: the lock names the live process that runs a turn in (or repairs)
 * the session. Each adapter makes taking a stale owner's lock exclusive its own way (a successor
 * file, a compare-and-swap of the row, a server-held advisory lock); what every one of them means
 * by "the same owner" is `isSameOwner`.
 */
import type { OwnerLock } from '@maka/events'
import type * as TE from 'fp-ts/lib/TaskEither.js'
import type { StoreError } from './StoreError.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * The owner locks of every session in a data dir.
 * @category models
 */
export interface OwnerLockStore {
  /** The current owner (the end of the lock's chain), or null when the session has no owner. */
  read(sessionId: string): TE.TaskEither<StoreError, OwnerLock | null>
  /**
   * Takes the lock: exclusive create, or — when `isStale(existing)` resolves true — an exclusive
   * succession of the stale owner; otherwise `OwnerLockHeld{existing}`. Of any number of callers
   * racing for one stale lock, exactly one succeeds.
   */
  acquire(
    sessionId: string,
    lock: OwnerLock,
    isStale: (existing: OwnerLock) => Promise<boolean>,
  ): TE.TaskEither<StoreError, void>
  /** Removes the lock only if it names this owner; another owner's lock is `OwnerLockHeld`. */
  release(sessionId: string, lock: OwnerLock): TE.TaskEither<StoreError, void>
}

// -------------------------------------------------------------------------------------
// guards
// -------------------------------------------------------------------------------------

/**
 * Two locks name the same owner when pid, host, process start time and (when recorded) boot id and
 * start ticks all agree.
 * @category guards
 */
export const isSameOwner = (a: OwnerLock, b: OwnerLock): boolean =>
  a.pid === b.pid &&
  a.hostname === b.hostname &&
  a.startedAt === b.startedAt &&
  a.bootId === b.bootId &&
  a.startTicks === b.startTicks
