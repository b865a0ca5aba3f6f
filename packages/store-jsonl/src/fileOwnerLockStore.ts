/**
 * The session owner lock on files: `sessions/<sessionId>/owner.lock` names the live process that
 * runs a turn in (or repairs) the session. A filesystem has no compare-and-swap of a file's content,
 * only exclusive creation, so a takeover is built from exclusive creation alone (decision 105):
 *
 * - A free session is taken by creating `owner.lock` exclusively.
 * - A stale owner X is succeeded by creating `owner.lock.next-<key(X)>` exclusively, where key(X) is
 *   a hash of X's identity. However many processes judge X stale at once, exactly one of them
 *   creates that file: X's successor is unique by construction, not by a judgement.
 * - The owner is the end of the chain that starts at `owner.lock` and follows successor files. A
 *   contender that created a successor file reads the chain again from `owner.lock` and owns the
 *   session only if the chain ends at its own file. It then makes `owner.lock` name itself (atomic
 *   replace) and only after that removes the successor files.
 *
 * Why no two live processes can own a session at once:
 * 1. A live process never gets a successor: only an owner judged stale does, and the host
 *    inspector judges stale only a process it proves gone.
 * 2. `owner.lock` changes in three ways only, each made by the one owner: created when absent,
 *    rewritten by a contender that has just found itself at the chain's end, removed at release.
 * 3. Successor files are removed only after `owner.lock` was rewritten. A contender that read an
 *    older chain may create a removed name again, but it reads `owner.lock` after creating it, so
 *    it finds the rewritten lock, whose chain does not reach its file; it gives its file back.
 * So every chain read from `owner.lock` ends at most at one live process, and a process proceeds
 * only after finding itself there. A contender that dies half-way leaves a successor file naming a
 * dead process: the next contender judges it stale and succeeds it in turn.
 */
import { createHash } from 'node:crypto'
import { decodeWith, OwnerLock } from '@maka/events'
import * as E from 'fp-ts/lib/Either.js'
import {
  checkIds,
  invalidRecord,
  ioFailed,
  isSameOwner,
  ownerLockHeld,
  type OwnerLockStore,
  staleCheckFailed,
  type StoreError,
} from '@maka/stores'
import {
  atomicReplace,
  exclusiveCreate,
  listDir,
  makeDirs,
  readRecord,
  recordBytes,
  removeFile,
  toTask,
  type Outcome,
  type StoreContext,
} from './internal/durableFs.js'
import { OWNER_SUCCESSOR_PREFIX, ownerLockPath, ownerSuccessorPath, sessionDir } from './layout.js'

/** One lock of the chain and the file it was read from. */
interface Link {
  readonly lock: OwnerLock
  readonly path: string
}

const decodeOwnerLock = decodeWith(OwnerLock)
// Enough to ride out a lock released, taken or succeeded between two of our steps, no more.
const MAX_ATTEMPTS = 8
// Each link is a contender that died between taking a stale lock over and rewriting owner.lock:
// a chain this long is not a crash history but damage, and it is refused rather than walked.
const MAX_CHAIN = 64

// The name of an owner's successor file: the same for exactly the locks `isSameOwner` equates.
const ownerKey = (lock: OwnerLock): string =>
  createHash('sha256')
    .update(JSON.stringify([lock.pid, lock.hostname, lock.startedAt, lock.bootId ?? null, lock.startTicks ?? null]))
    .digest('hex')

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

  /** The last link of the chain from owner.lock; null when there is no owner.lock. */
  const readOwner = async (sessionId: string): Outcome<Link | null> => {
    const headPath = ownerLockPath(dataDir, sessionId)
    const head = await readLock(headPath)
    if (E.isLeft(head) || head.right === null) return head as E.Either<StoreError, null>
    let tail: Link = { lock: head.right, path: headPath }
    for (let length = 0; length < MAX_CHAIN; length += 1) {
      const nextPath = ownerSuccessorPath(dataDir, sessionId, ownerKey(tail.lock))
      const next = await readLock(nextPath)
      if (E.isLeft(next)) return next
      if (next.right === null) return E.right(tail)
      tail = { lock: next.right, path: nextPath }
    }
    return E.left(ioFailed('read', headPath, new Error(`owner.lock has more than ${MAX_CHAIN} successors`)))
  }

  const askStale = async (path: string, isStale: (existing: OwnerLock) => Promise<boolean>, existing: OwnerLock) => {
    try {
      return E.right(await isStale(existing))
    } catch (cause) {
      return E.left(staleCheckFailed(path, cause))
    }
  }

  // Successor files are garbage once owner.lock names its owner: no chain read from it reaches them.
  // Best effort: one left behind (a failed unlink, a crash here) is never on a chain again.
  const removeSuccessors = async (sessionId: string): Promise<void> => {
    const entries = await listDir(context, sessionDir(dataDir, sessionId))
    if (E.isLeft(entries)) return
    for (const entry of entries.right) {
      if (entry.name.startsWith(OWNER_SUCCESSOR_PREFIX)) {
        await removeFile(
          context,
          ownerSuccessorPath(dataDir, sessionId, entry.name.slice(OWNER_SUCCESSOR_PREFIX.length)),
        )
      }
    }
  }

  /** Makes owner.lock name us after we were found at the chain's end; on failure, gives the lock back. */
  const settle = async (sessionId: string, successorPath: string, bytes: Buffer): Outcome<void> => {
    const headPath = ownerLockPath(dataDir, sessionId)
    const replaced = await atomicReplace(context, headPath, bytes, true)
    if (E.isLeft(replaced)) {
      // owner.lock still starts the old chain; without our file it ends at the stale owner again.
      await removeFile(context, successorPath)
      return replaced
    }
    const persisted = await dirSync.persist(headPath, { replaced: true })
    if (E.isLeft(persisted)) {
      // A lock we could not make durable is not held. owner.lock names us, and only we change it.
      await removeFile(context, headPath)
      await removeFile(context, successorPath)
      return persisted
    }
    await removeSuccessors(sessionId)
    return E.right(undefined)
  }

  const acquireLocked = async (
    sessionId: string,
    lock: OwnerLock,
    isStale: (existing: OwnerLock) => Promise<boolean>,
  ): Outcome<void> => {
    const headPath = ownerLockPath(dataDir, sessionId)
    const bytes = recordBytes(lock)
    // A process takes the lock before its first write, which for a new session precedes session.json.
    const dirs = await makeDirs(context, sessionDir(dataDir, sessionId))
    if (E.isLeft(dirs)) return dirs
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
      const created = await exclusiveCreate(context, headPath, bytes)
      if (E.isLeft(created)) return created
      if (created.right === 'created') {
        const persisted = await dirSync.persist(headPath)
        // A lock we could not make durable is not held: take it back, or this very process would
        // find its own lock next time and refuse itself (no re-entry).
        if (E.isLeft(persisted)) await removeFile(context, headPath)
        return persisted
      }

      const owner = await readOwner(sessionId)
      if (E.isLeft(owner)) return owner
      if (owner.right === null) continue // released meanwhile: try the exclusive create again
      const existing = owner.right.lock
      // No re-entry: a second turn of the same process must not share the session with the first.
      if (isSameOwner(existing, lock)) return E.left(ownerLockHeld(headPath, existing))
      const stale = await askStale(headPath, isStale, existing)
      if (E.isLeft(stale)) return stale
      if (!stale.right) return E.left(ownerLockHeld(headPath, existing))

      // The one exclusive step of a takeover: of all who judged this owner stale, one creates this.
      const successorPath = ownerSuccessorPath(dataDir, sessionId, ownerKey(existing))
      const succeeded = await exclusiveCreate(context, successorPath, bytes)
      if (E.isLeft(succeeded)) return succeeded
      if (succeeded.right === 'exists') continue // another process succeeded it: judge that one
      const persisted = await dirSync.persist(successorPath)
      if (E.isLeft(persisted)) {
        await removeFile(context, successorPath)
        return persisted
      }
      // Our file may hang off a chain that owner.lock no longer starts (we read an older one).
      const confirmed = await readOwner(sessionId)
      if (E.isLeft(confirmed)) {
        await removeFile(context, successorPath)
        return confirmed
      }
      if (
        confirmed.right !== null &&
        confirmed.right.path === successorPath &&
        isSameOwner(confirmed.right.lock, lock)
      ) {
        return settle(sessionId, successorPath, bytes)
      }
      const removed = await removeFile(context, successorPath)
      if (E.isLeft(removed)) return removed
    }
    return E.left(ioFailed('acquire', headPath, new Error(`the lock kept changing over ${MAX_ATTEMPTS} attempts`)))
  }

  return {
    read: (sessionId) =>
      toTask(
        async () => {
          const ids = checkIds(['sessionId', sessionId])
          if (E.isLeft(ids)) return ids
          const owner = await readOwner(sessionId)
          return E.isLeft(owner) ? owner : E.right(owner.right?.lock ?? null)
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
          const owner = await readOwner(sessionId)
          if (E.isLeft(owner)) return owner
          if (owner.right === null) return E.right(undefined)
          if (!isSameOwner(owner.right.lock, lock)) {
            return E.left(ownerLockHeld(ownerLockPath(dataDir, sessionId), owner.right.lock))
          }
          // Normally owner.lock itself; a successor file only if settling never finished.
          return removeFile(context, owner.right.path)
        },
        () => `remove owner.lock of session ${sessionId}`,
      ),
  }
}
