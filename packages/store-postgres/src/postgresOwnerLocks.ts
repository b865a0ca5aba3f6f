/**
 * Session ownership on PostgreSQL: a session-scoped advisory lock held on one dedicated connection
 * per instance, so the server itself releases it when the owning process dies and its connection
 * drops; the `owner_locks` row says which host holds it, and counts only while that lock is held.
 * A session whose lock connection dropped while held is fenced: this instance writes nothing more
 * to it until it takes the lock again.
 */
import type { OwnerLock } from '@maka/events'
import {
  checkIds,
  checkOwnerLockAcquire,
  decodeStoredOwnerLock,
  ioFailed,
  isSameOwner,
  ownerLockHeld,
  sqlPlaces,
  sqlTask,
  withSubject,
  type OwnerLockStore,
  type SqlOutcome,
  type SqlOwnerLocksOf,
  type SqlQueries,
  type SqlStoreContext,
} from '@maka/stores'
import * as E from 'fp-ts/lib/Either.js'
import pg from 'pg'
import { sessionLockKey, type Target } from './database.js'

// The row of a session's lock counts only while its backend holds the session's advisory lock,
// whose two keys `k1` and `k2` are SQL expressions.
const liveLock = (k1: string, k2: string) => `EXISTS (
  SELECT 1 FROM pg_locks l
  WHERE l.locktype = 'advisory' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
    AND l.classid = ${k1}::bigint::oid AND l.objid = ${k2}::bigint::oid AND l.objsubid = 2 AND l.pid = o.backend_pid)`
const LIVE_LOCK = liveLock('$2', '$3')

/**
 * The survey's read of many sessions' owner locks (`SqlOwnerLocksOf`), judged as `read` judges one:
 * a row counts only while its backend holds the session's advisory lock.
 * @category constructors
 */
export const postgresOwnerLocksOf =
  (context: SqlStoreContext): SqlOwnerLocksOf =>
  async (q, sessionIds) => {
    const places = sqlPlaces(context.location)
    const keys = sessionIds.map(sessionLockKey)
    const rows = await q.all<{ readonly s: string; readonly record: string; readonly live: boolean }>(
      `SELECT o.session_id AS s, o.record, ${liveLock('k.k1', 'k.k2')} AS live
       FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS k(s, k1, k2) JOIN owner_locks o ON o.session_id = k.s`,
      [sessionIds, keys.map(([k1]) => k1), keys.map(([, k2]) => k2)],
    )
    return new Map(
      rows.map((row) => {
        const lock = decodeStoredOwnerLock(row.record, places.ownerLock(row.s))
        return [row.s, E.isLeft(lock) ? lock : E.right(row.live ? lock.right : null)] as const
      }),
    )
  }

const closedError = () => Object.assign(new Error('the store was closed'), { code: 'STORE_CLOSED' })

/**
 * The lock connection of one instance, the sessions it holds and those it lost.
 * @category models
 */
export interface PostgresOwnership {
  /** A `Left` once the lock of `sessionId` was lost with its connection. */
  readonly fence: (sessionId: string) => SqlOutcome<void>
  /** Ends the lock connection (the server releases every session it holds). */
  readonly close: () => Promise<void>
  readonly lockConnection: () => Promise<{ readonly client: pg.Client; readonly backendPid: number }>
  readonly held: Set<string>
  readonly lost: Set<string>
}

/**
 * Starts the ownership of one instance; nothing connects until a lock is first taken.
 * @category constructors
 */
export const makePostgresOwnership = (target: Target, isClosed: () => boolean): PostgresOwnership => {
  let lockClient: Promise<{ readonly client: pg.Client; readonly backendPid: number }> | null = null
  const held = new Set<string>()
  // Sessions whose lock connection dropped while held: another host may own them now.
  const lost = new Set<string>()

  const lockConnection = (): Promise<{ readonly client: pg.Client; readonly backendPid: number }> => {
    if (isClosed()) return Promise.reject(closedError())
    lockClient ??= (async () => {
      const client = new pg.Client(target.config)
      const drop = () => {
        // The server releases every advisory lock of a dropped connection: what we held is no longer ours.
        for (const s of held) lost.add(s)
        held.clear()
        lockClient = null
      }
      client.on('error', drop)
      client.on('end', drop)
      try {
        await client.connect()
        const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid
        return { client, backendPid: pid }
      } catch (cause) {
        lockClient = null
        await client.end().catch(() => undefined)
        throw cause
      }
    })()
    return lockClient
  }

  return {
    fence: (sessionId) =>
      lost.has(sessionId)
        ? E.left(
            withSubject(
              ioFailed(
                'postgres',
                target.location,
                Object.assign(new Error('the connection holding this session lock dropped'), {
                  code: 'OWNER_LOCK_LOST',
                }),
              ),
              `write to session ${sessionId}`,
            ),
          )
        : E.right(undefined),
    close: async () => {
      const locks = lockClient
      lockClient = null
      held.clear()
      if (locks !== null) await (await locks.catch(() => null))?.client.end().catch(() => undefined)
    },
    lockConnection,
    held,
    lost,
  }
}

type LockRow = { readonly lock: OwnerLock; readonly live: boolean; readonly backendPid: number } | null

/**
 * Builds the owner-lock store of one PostgreSQL store instance.
 * @category constructors
 */
export const makePostgresOwnerLockStore = (
  context: SqlStoreContext,
  ownership: PostgresOwnership,
  hostId: string,
): OwnerLockStore => {
  const places = sqlPlaces(context.location)
  const { held, lost, lockConnection } = ownership

  // The session's lock row, and whether its advisory lock is still held by the backend it names.
  const readLockRow = async (q: SqlQueries, s: string): Promise<SqlOutcome<LockRow>> => {
    const [k1, k2] = sessionLockKey(s)
    const row = (
      await q.all<{ readonly record: string; readonly live: boolean; readonly backend_pid: number }>(
        `SELECT record, backend_pid, ${LIVE_LOCK} AS live FROM owner_locks o WHERE session_id = $1`,
        [s, k1, k2],
      )
    )[0]
    if (row === undefined) return E.right(null)
    const lock = decodeStoredOwnerLock(row.record, places.ownerLock(s))
    return E.isLeft(lock) ? lock : E.right({ lock: lock.right, live: row.live, backendPid: row.backend_pid })
  }

  return {
    // A row whose advisory lock no backend holds is a dead owner's leftover: it reads as no owner.
    read: (sessionId) =>
      sqlTask(
        context,
        () => `read owner.lock of session ${sessionId}`,
        async (db) => {
          const ids = checkIds(['sessionId', sessionId])
          if (E.isLeft(ids)) return ids
          const found = await readLockRow(db, sessionId)
          return E.isLeft(found) ? found : E.right(found.right?.live === true ? found.right.lock : null)
        },
      ),
    // The server judges ownership: the session's advisory lock is taken with pg_try_advisory_lock on
    // this instance's lock connection, and whoever holds it owns the session. The caller's `isStale`
    // (a pid check, meaningless for another host's process) is never asked: a lock whose holder died
    // was released by the server when its connection dropped.
    acquire: (sessionId, lock) =>
      sqlTask(
        context,
        () => `create owner.lock of session ${sessionId}`,
        async (db) => {
          const checked = checkOwnerLockAcquire(sessionId, lock)
          if (E.isLeft(checked)) return checked
          const at = places.ownerLock(sessionId)
          const [k1, k2] = sessionLockKey(sessionId)
          if (held.has(sessionId)) {
            // No re-entry: a second turn of the same instance must not share the session with the first.
            const mine = await readLockRow(db, sessionId)
            return E.left(ownerLockHeld(at, E.isRight(mine) && mine.right !== null ? mine.right.lock : lock))
          }
          const { client, backendPid } = await lockConnection()
          const tryLock = async () =>
            (await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS ok', [k1, k2])).rows[0]!.ok
          let got = await tryLock()
          // Another live connection holds it: its row follows its lock within a moment — or it lets
          // go first (a short turn's whole write can take less than one wait here), and the lock is
          // free again, so each wait tries it once more.
          for (let attempt = 0; !got && attempt < 50; attempt += 1) {
            const found = await readLockRow(db, sessionId)
            if (E.isLeft(found)) return found
            if (found.right?.live === true) return E.left(ownerLockHeld(at, found.right.lock))
            await new Promise((done) => setTimeout(done, 20))
            got = await tryLock()
          }
          if (!got) {
            throw Object.assign(new Error('the session lock is held by a connection that recorded no owner'), {
              code: 'OWNER_LOCK_BUSY',
            })
          }
          held.add(sessionId)
          lost.delete(sessionId)
          try {
            await db.run(
              'INSERT INTO owner_locks (session_id, record, host_id, backend_pid) VALUES ($1, $2, $3, $4) ' +
                'ON CONFLICT (session_id) DO UPDATE SET record = excluded.record, host_id = excluded.host_id, ' +
                'backend_pid = excluded.backend_pid, acquired_at = now()',
              [sessionId, JSON.stringify(lock), hostId, backendPid],
            )
            await db.run('INSERT INTO session_ids (session_id) VALUES ($1) ON CONFLICT DO NOTHING', [sessionId])
          } catch (cause) {
            // A lock we could not record is not held: give it back.
            held.delete(sessionId)
            await client.query('SELECT pg_advisory_unlock($1, $2)', [k1, k2]).catch(() => undefined)
            throw cause
          }
          return E.right(undefined)
        },
      ),
    release: (sessionId, lock) =>
      sqlTask(
        context,
        () => `remove owner.lock of session ${sessionId}`,
        async (db) => {
          const ids = checkIds(['sessionId', sessionId])
          if (E.isLeft(ids)) return ids
          const found = await readLockRow(db, sessionId)
          if (E.isLeft(found)) return found
          const row = found.right
          const mine = held.has(sessionId)
          if (row !== null && !isSameOwner(row.lock, lock) && (row.live || mine)) {
            return E.left(ownerLockHeld(places.ownerLock(sessionId), row.lock))
          }
          if (row !== null && row.live && !mine) return E.left(ownerLockHeld(places.ownerLock(sessionId), row.lock))
          if (row !== null) {
            await db.run('DELETE FROM owner_locks WHERE session_id = $1 AND backend_pid = $2', [
              sessionId,
              row.backendPid,
            ])
          }
          if (mine) {
            held.delete(sessionId)
            const [k1, k2] = sessionLockKey(sessionId)
            const { client } = await lockConnection()
            await client.query('SELECT pg_advisory_unlock($1, $2)', [k1, k2])
          }
          return E.right(undefined)
        },
      ),
  }
}
