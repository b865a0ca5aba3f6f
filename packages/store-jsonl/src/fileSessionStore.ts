/**
 * The session header store: `sessions/<sessionId>/session.json`. The header is a projection (cwd,
 * creation time, title), so unknown keys are tolerated on read; create is exclusive and durable.
 */
import { decodeWith, SessionRecord, SessionId } from '@maka/events'
import * as E from 'fp-ts/lib/Either.js'
import { checkIds, invalidRecord, sessionAlreadyExists, type SessionStore, unreadable } from '@maka/stores'
import {
  exclusiveCreate,
  listDir,
  makeDirs,
  readRecord,
  recordBytes,
  toTask,
  type StoreContext,
} from './internal/durableFs.js'
import { sessionDir, sessionRecordPath, sessionsDir } from './layout.js'

const decodeSessionRecord = decodeWith(SessionRecord)

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Builds the session store of one store instance.
 * @category constructors
 */
export const makeSessionStore = (context: StoreContext): SessionStore => {
  const { dataDir, dirSync } = context
  return {
    create: (record) =>
      toTask(
        async () => {
          const ids = checkIds(['sessionId', record?.sessionId])
          if (E.isLeft(ids)) return ids
          const decoded = decodeSessionRecord(record)
          if (E.isLeft(decoded)) return E.left(invalidRecord('SessionRecord', decoded.left))
          const path = sessionRecordPath(dataDir, record.sessionId)
          const dirs = await makeDirs(context, sessionDir(dataDir, record.sessionId))
          if (E.isLeft(dirs)) return dirs
          const created = await exclusiveCreate(context, path, recordBytes(record))
          if (E.isLeft(created)) return created
          if (created.right === 'exists') return E.left(sessionAlreadyExists(path, record.sessionId))
          return dirSync.persist(path)
        },
        () => `create session.json of session ${record.sessionId}`,
      ),
    read: (sessionId) =>
      toTask(
        async () => {
          const ids = checkIds(['sessionId', sessionId])
          if (E.isLeft(ids)) return ids
          const path = sessionRecordPath(dataDir, sessionId)
          const record = await readRecord(context, path, decodeSessionRecord)
          if (E.isLeft(record)) return record
          if (record.right.sessionId !== sessionId) {
            return E.left(unreadable(path, 'the header names another session than its folder'))
          }
          return record
        },
        () => `read session.json of session ${sessionId}`,
      ),
    list: () =>
      toTask(
        async () => {
          const entries = await listDir(context, sessionsDir(dataDir))
          if (E.isLeft(entries)) return entries
          return E.right(
            entries.right
              // A linked session folder is listed so that reading it reports the link: it is never dropped.
              .filter((entry) => entry.isDirectory() || entry.isSymbolicLink())
              .map((entry) => entry.name)
              // A name that is not a session id is not a session: no create could have made it,
              // and no read can reach it (decisions 60).
              .filter(SessionId.is)
              .sort(),
          )
        },
        () => 'list the sessions',
      ),
  }
}
