/**
 * The session header port over a SQL database: the `sessions` table holds each header's JSON, and
 * `session_ids` every session a write has touched (the JSONL session folder), so a session is
 * listed even before its header exists.
 */
import { decodeWith, SessionId, SessionRecord } from '@maka/events'
import * as E from 'fp-ts/lib/Either.js'
import { checkIds } from '../internal/checkIds.js'
import type { SessionStore } from '../SessionStore.js'
import { invalidRecord, notFound, sessionAlreadyExists } from '../StoreError.js'
import { decodeStoredRecord } from '../storedRecords.js'
import { sqlPlaces, sqlTask, type SqlOutcome, type SqlStoreContext } from './SqlDatabase.js'

const decodeSession = decodeWith(SessionRecord)

/**
 * Builds the session store of one SQL store instance.
 * @category constructors
 */
export const makeSqlSessionStore = (context: SqlStoreContext): SessionStore => {
  const { dialect } = context
  const places = sqlPlaces(context.location)
  return {
    create: (record) =>
      sqlTask(
        context,
        () => `create session.json of session ${record?.sessionId}`,
        (db) => {
          const ids = checkIds(['sessionId', record?.sessionId])
          if (E.isLeft(ids)) return Promise.resolve(ids)
          const decoded = decodeSession(record)
          if (E.isLeft(decoded)) return Promise.resolve(E.left(invalidRecord('SessionRecord', decoded.left)))
          const fenced = context.fence(record.sessionId)
          if (E.isLeft(fenced)) return Promise.resolve(fenced)
          return db.transaction('write', async (q): Promise<SqlOutcome<void>> => {
            await q.run(dialect.touchSession, [record.sessionId])
            const inserted = await q.run(dialect.insertSession, [record.sessionId, JSON.stringify(record)])
            return inserted === 0
              ? E.left(sessionAlreadyExists(places.session(record.sessionId), record.sessionId))
              : E.right(undefined)
          })
        },
      ),
    read: (sessionId) =>
      sqlTask(
        context,
        () => `read session.json of session ${sessionId}`,
        async (db) => {
          const ids = checkIds(['sessionId', sessionId])
          if (E.isLeft(ids)) return ids
          const text = (await db.value(dialect.selectSession, [sessionId])) as string | undefined
          if (text === undefined) return E.left(notFound(places.session(sessionId)))
          return decodeStoredRecord(text, places.session(sessionId), decodeSession, (r) => r.sessionId === sessionId)
        },
      ),
    list: () =>
      sqlTask(
        context,
        () => 'list the sessions',
        async (db) => {
          const ids = (await db.all<{ readonly session_id: string }>(dialect.listSessionIds, [])).map(
            (row) => row.session_id,
          )
          // A name that is not a session id is not a session, as in a data dir (decisions 60).
          return E.right(ids.filter(SessionId.is))
        },
      ),
  }
}
