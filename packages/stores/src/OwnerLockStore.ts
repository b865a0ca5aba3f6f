/**
 * The session owner lock: `sessions/<sessionId>/owner.lock`, naming the live process that runs a
 * turn in the session. Acquire is an exclusive create; a lock the caller proves stale (dead pid,
 * or a pid whose start time differs — the host inspector decides) is replaced atomically and then
 * re-read, so a process only proceeds when the file names it.
 *
 * Residual race, accepted: two processes that both judge the same stale lock at the same moment
 * can both pass the re-read if their rename-and-read steps do not overlap. The durable claim of
 * a boundary stays exclusive regardless, so this can cost a duplicate recovery attempt, never a
 * duplicate continuation.
 */
import { decodeWith, OwnerLock } from '@maka/events'
import * as E from 'fp-ts/lib/Either.js'
import type * as TE from 'fp-ts/lib/TaskEither.js'
import { checkIds } from './internal/checkIds.js'
import {
  atomicReplace,
  exclusiveCreate,
  makeDirs,
  readRecord,
  recordBytes,
  removeFile,
  toTask,
  type Outcome,
  type StoreContext,
} from './internal/durableFs.js'
import { ownerLockPath, sessionDir } from './layout.js'
import { invalidRecord, ioFailed, ownerLockHeld, staleCheckFailed, type StoreError } from './StoreError.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * The owner locks of every session in a data dir.
 * @category models
 */
export interface OwnerLockStore {
  /** The current lock, or null when the session has no owner. */
  read(sessionId: string): TE.TaskEither<StoreError, OwnerLock | null>
  /**
   * Exclusive create. If a lock exists and `isStale(existing)` resolves true, take it over (replace
   * atomically, then re-read to confirm we won); else `OwnerLockHeld{existing}`.
   */
  acquire(
    sessionId: string,
    lock: OwnerLock,
    isStale: (existing: OwnerLock) => Promise<boolean>,
  ): TE.TaskEither<StoreError, void>
  /** Removes the lock only if the file still holds this lock; another owner's lock is `OwnerLockHeld`. */
  release(sessionId: string, lock: OwnerLock): TE.TaskEither<StoreError, void>
}

const decodeOwnerLock = decodeWith(OwnerLock)
// Enough to ride out a lock released or replaced between our create and our read, no more.
const MAX_ATTEMPTS = 4

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

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Builds the owner-lock store of one store instance.
 * @category constructors
 */
export const makeOwnerLockStore = (context: StoreContext): OwnerLockStore => {
  const { dataDir, dirSync } = context

  const readLock = async (path: string): Outcome<OwnerLock | null> => {
    const lock = await readRecord(context, path, decodeOwnerLock)
    return E.isLeft(lock) && lock.left._tag === 'NotFound' ? E.right(null) : lock
  }

  const askStale = async (path: string, isStale: (existing: OwnerLock) => Promise<boolean>, existing: OwnerLock) => {
    try {
      return E.right(await isStale(existing))
    } catch (cause) {
      return E.left(staleCheckFailed(path, cause))
    }
  }

  const acquireLocked = async (
    sessionId: string,
    lock: OwnerLock,
    isStale: (existing: OwnerLock) => Promise<boolean>,
  ): Outcome<void> => {
    const path = ownerLockPath(dataDir, sessionId)
    const bytes = recordBytes(lock)
    // A process takes the lock before its first write, which for a new session precedes session.json.
    const dirs = await makeDirs(context, sessionDir(dataDir, sessionId))
    if (E.isLeft(dirs)) return dirs
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
      const created = await exclusiveCreate(context, path, bytes)
      if (E.isLeft(created)) return created
      if (created.right === 'created') {
        const persisted = await dirSync.persist(path)
        // A lock we could not make durable is not held: take it back, or this very process would
        // find its own lock next time and refuse itself (no re-entry).
        if (E.isLeft(persisted)) await removeFile(context, path)
        return persisted
      }

      const existing = await readLock(path)
      if (E.isLeft(existing)) return existing
      if (existing.right === null) continue // released meanwhile: try the exclusive create again
      // No re-entry: a second turn of the same process must not share the session with the first.
      if (isSameOwner(existing.right, lock)) return E.left(ownerLockHeld(path, existing.right))
      const stale = await askStale(path, isStale, existing.right)
      if (E.isLeft(stale)) return stale
      if (!stale.right) return E.left(ownerLockHeld(path, existing.right))

      // Replace only the lock we judged: if it changed while isStale ran, judge the new one.
      const before = await readLock(path)
      if (E.isLeft(before)) return before
      if (before.right === null || !isSameOwner(before.right, existing.right)) continue
      const replaced = await atomicReplace(context, path, bytes, true)
      if (E.isLeft(replaced)) return replaced
      const persisted = await dirSync.persist(path, { replaced: true })
      if (E.isLeft(persisted)) {
        // As for a fresh create: a lock we could not make durable is given back.
        await removeFile(context, path)
        return persisted
      }
      const after = await readLock(path)
      if (E.isLeft(after)) return after
      if (after.right !== null && isSameOwner(after.right, lock)) return E.right(undefined)
      if (after.right !== null) return E.left(ownerLockHeld(path, after.right))
    }
    return E.left(ioFailed('acquire', path, new Error(`the lock kept changing over ${MAX_ATTEMPTS} attempts`)))
  }

  return {
    read: (sessionId) =>
      toTask(
        async () => {
          const ids = checkIds(['sessionId', sessionId])
          if (E.isLeft(ids)) return ids
          return readLock(ownerLockPath(dataDir, sessionId))
        },
        () => `read owner.lock of session ${sessionId}`,
      ),
    acquire: (sessionId, lock, isStale) =>
      toTask(
        async () => {
          const ids = checkIds(['sessionId', sessionId])
          if (E.isLeft(ids)) return ids
          const decoded = decodeOwnerLock(lock)
          if (E.isLeft(decoded)) return E.left(invalidRecord('OwnerLock', decoded.left))
          return acquireLocked(sessionId, lock, isStale)
        },
        () => `create owner.lock of session ${sessionId}`,
      ),
    release: (sessionId, lock) =>
      toTask(
        async () => {
          const ids = checkIds(['sessionId', sessionId])
          if (E.isLeft(ids)) return ids
          const path = ownerLockPath(dataDir, sessionId)
          const current = await readLock(path)
          if (E.isLeft(current)) return current
          if (current.right === null) return E.right(undefined)
          if (!isSameOwner(current.right, lock)) return E.left(ownerLockHeld(path, current.right))
          return removeFile(context, path)
        },
        () => `remove owner.lock of session ${sessionId}`,
      ),
  }
}
