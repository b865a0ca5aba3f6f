/**
 * Session ownership: the process that runs a turn (or repairs a session) holds `owner.lock` for
 * the whole of it. The lock names this process exactly (pid, boot id, start ticks) where the host can
 * read them. A lock whose process is gone — dead pid, or a pid whose identity or start time differs — is
 * stale and taken over; the store makes the takeover exclusive, so of any number of processes that
 * judge one dead owner's lock stale at once, exactly one owns the session afterwards.
 */
import { hostname } from 'node:os'
import * as E from 'fp-ts/lib/Either.js'
import { type OwnerLock, makeIsoTimestampUnsafe, makeNonNegativeIntUnsafe } from '@maka/events'
import { currentProcessIdentity, currentProcessStartTime, type HostInspector } from '@maka/host-inspector'
import type { StorePorts, StoreError } from '@maka/stores'

/**
 * Takes and gives back a session's owner lock.
 * @category models
 */
export interface Ownership {
  readonly acquireOwnership: (sessionId: string) => Promise<E.Either<StoreError, OwnerLock>>
  readonly releaseOwnership: (sessionId: string, lock: OwnerLock) => Promise<void>
}

/**
 * Ownership over the file stores, judging existing locks with the host inspector.
 * @category constructors
 */
export const makeOwnership = (stores: StorePorts, inspector: HostInspector): Ownership => {
  const ownLock = async (): Promise<OwnerLock> => {
    const identity = await currentProcessIdentity()
    return {
      pid: makeNonNegativeIntUnsafe(process.pid),
      hostname: hostname(),
      startedAt: makeIsoTimestampUnsafe((await currentProcessStartTime()).toISOString()),
      ...(identity === null ? {} : identity),
    }
  }

  /** Takes owner.lock for the session; a stale lock (dead pid or other start time) is taken over. */
  const acquireOwnership = async (sessionId: string): Promise<E.Either<StoreError, OwnerLock>> => {
    const lock = await ownLock()
    const acquired = await stores.ownerLocks.acquire(sessionId, lock, async (existing) => {
      return (await inspector.ownerLiveness(existing)) === 'stale'
    })()
    return E.isLeft(acquired) ? acquired : E.right(lock)
  }

  const releaseOwnership = async (sessionId: string, lock: OwnerLock) => {
    await stores.ownerLocks.release(sessionId, lock)()
  }

  return { acquireOwnership, releaseOwnership }
}
