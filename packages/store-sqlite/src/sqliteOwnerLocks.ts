/**
 * The owner-lock port on SQLite: one `owner_locks` row per session. Taking a free session is an
 * insert; judging a held lock is async (it looks at the host's processes), so it runs between two
 * transactions, and the takeover then replaces the lock only if the row still holds the text that
 * was judged — a compare-and-swap, so two processes judging one stale lock cannot both win.
 */
import type { OwnerLock } from '@maka/events'
import {
  checkIds,
  checkOwnerLockAcquire,
  decodeStoredOwnerLock,
  isSameOwner,
  ownerLockHeld,
  sqlPlaces,
  sqlTask,
  staleCheckFailed,
  type OwnerLockStore,
  type SqlOutcome,
  type SqlQueries,
  type SqlOwnerLocksOf,
  type SqlStoreContext,
} from '@maka/stores'
import * as E from 'fp-ts/lib/Either.js'
import { sqliteDialect } from './sqliteDatabase.js'

type Found = { readonly lock: OwnerLock; readonly text: string } | null

/**
 * The survey's read of many sessions' owner locks (`SqlOwnerLocksOf`): the stored records, read back
 * as `read` reads one.
 * @category constructors
 */
export const sqliteOwnerLocksOf =
  (context: SqlStoreContext): SqlOwnerLocksOf =>
  async (q, sessionIds) => {
    const places = sqlPlaces(context.location)
    const rows = await q.all<{ readonly s: string; readonly record: string }>(
      'SELECT session_id AS s, record FROM owner_locks WHERE session_id IN (SELECT value FROM json_each(?))',
      [sqliteDialect.sessionIdList(sessionIds)],
    )
    return new Map(rows.map((row) => [row.s, decodeStoredOwnerLock(row.record, places.ownerLock(row.s))] as const))
  }

/**
 * Builds the owner-lock store of one SQLite store instance.
 * @category constructors
 */
export const makeSqliteOwnerLockStore = (context: SqlStoreContext): OwnerLockStore => {
  const places = sqlPlaces(context.location)

  const readLock = async (q: SqlQueries, sessionId: string): Promise<SqlOutcome<Found>> => {
    const text = (await q.value('SELECT record FROM owner_locks WHERE session_id = ?', [sessionId])) as
      string | undefined
    if (text === undefined) return E.right(null)
    const lock = decodeStoredOwnerLock(text, places.ownerLock(sessionId))
    return E.isLeft(lock) ? lock : E.right({ lock: lock.right, text })
  }

  return {
    read: (sessionId) =>
      sqlTask(
        context,
        () => `read owner.lock of session ${sessionId}`,
        async (db) => {
          const ids = checkIds(['sessionId', sessionId])
          if (E.isLeft(ids)) return ids
          const found = await readLock(db, sessionId)
          return E.isLeft(found) ? found : E.right(found.right?.lock ?? null)
        },
      ),
    acquire: (sessionId, lock, isStale) =>
      sqlTask(
        context,
        () => `create owner.lock of session ${sessionId}`,
        async (db) => {
          const checked = checkOwnerLockAcquire(sessionId, lock)
          if (E.isLeft(checked)) return checked
          const at = places.ownerLock(sessionId)
          const text = JSON.stringify(lock)
          for (let attempt = 0; attempt < 4; attempt += 1) {
            const first = await db.transaction('write', async (q): Promise<SqlOutcome<Found>> => {
              await q.run(sqliteDialect.touchSession, [sessionId])
              const inserted = await q.run('INSERT OR IGNORE INTO owner_locks (session_id, record) VALUES (?, ?)', [
                sessionId,
                text,
              ])
              return inserted === 1 ? E.right(null) : readLock(q, sessionId)
            })
            if (E.isLeft(first) || first.right === null) return E.isLeft(first) ? first : E.right(undefined)
            const existing = first.right
            if (isSameOwner(existing.lock, lock)) return E.left(ownerLockHeld(at, existing.lock))
            let stale: boolean
            try {
              stale = await isStale(existing.lock)
            } catch (cause) {
              return E.left(staleCheckFailed(at, cause))
            }
            if (!stale) return E.left(ownerLockHeld(at, existing.lock))
            const swapped = await db.run('UPDATE owner_locks SET record = ? WHERE session_id = ? AND record = ?', [
              text,
              sessionId,
              existing.text,
            ])
            if (swapped === 1) return E.right(undefined)
          }
          const now = await readLock(db, sessionId)
          if (E.isLeft(now)) return now
          return now.right === null ? E.right(undefined) : E.left(ownerLockHeld(at, now.right.lock))
        },
      ),
    release: (sessionId, lock) =>
      sqlTask(
        context,
        () => `remove owner.lock of session ${sessionId}`,
        async (db) => {
          const ids = checkIds(['sessionId', sessionId])
          if (E.isLeft(ids)) return ids
          return db.transaction('write', async (q): Promise<SqlOutcome<void>> => {
            const found = await readLock(q, sessionId)
            if (E.isLeft(found) || found.right === null) return E.isLeft(found) ? found : E.right(undefined)
            if (!isSameOwner(found.right.lock, lock)) {
              return E.left(ownerLockHeld(places.ownerLock(sessionId), found.right.lock))
            }
            await q.run('DELETE FROM owner_locks WHERE session_id = ?', [sessionId])
            return E.right(undefined)
          })
        },
      ),
  }
}
