/**
 * The AgentRun header port over a SQL database: one `runs` row per run holding the header's JSON.
 * Create is exclusive by the primary key; a listing decodes every row and fails closed on a run id
 * no store writes (decisions 60).
 */
import { type AgentRun, decodeAgentRun, RunId } from '@maka/events'
import * as E from 'fp-ts/lib/Either.js'
import { checkIds } from '../internal/checkIds.js'
import { checkRunHeader, type AgentRunStore, type RunListing } from '../AgentRunStore.js'
import { notFound, runAlreadyExists, unreadable } from '../StoreError.js'
import { decodeStoredRecord } from '../storedRecords.js'
import {
  sqlPlaces,
  sqlTask,
  type SqlOutcome,
  type SqlPlaces,
  type SqlQueries,
  type SqlStoreContext,
} from './SqlDatabase.js'

// Guard first (`decodeAgentRun`): the decoder builds a context per key, after the SELECT a recovery
// survey's main cost.
const decodeHeader = decodeAgentRun

const decodeRunRow = (places: SqlPlaces, sessionId: string, runId: string, text: string): SqlOutcome<AgentRun> =>
  decodeStoredRecord(
    text,
    places.run(sessionId, runId),
    decodeHeader,
    (h) => h.sessionId === sessionId && h.runId === runId,
  )

/**
 * A session's `runs` rows as `runs.list` answers them (shared with the survey).
 * @category constructors
 */
export const listRunRows = (
  places: SqlPlaces,
  sessionId: string,
  rows: ReadonlyArray<{ readonly runId: string; readonly header: string }>,
): SqlOutcome<ReadonlyArray<RunListing>> => {
  const listed: Array<RunListing> = []
  for (const { runId, header } of rows) {
    // Only a checked id is ever written to run_id: a row whose id does not decode is damage,
    // and the listing fails closed rather than drop a run (decisions 60).
    if (!RunId.is(runId)) return E.left(unreadable(places.run(sessionId, runId), 'run id is invalid'))
    const decoded = decodeRunRow(places, sessionId, runId, header)
    listed.push(E.isRight(decoded) ? { runId, header: decoded.right } : { runId, error: decoded.left })
  }
  return E.right(listed)
}

/**
 * Builds the header store of one SQL store instance.
 * @category constructors
 */
export const makeSqlRunStore = (context: SqlStoreContext): AgentRunStore => {
  const { dialect } = context
  const places = sqlPlaces(context.location)
  const decodeAt = (text: string, sessionId: string, runId: string) => decodeRunRow(places, sessionId, runId, text)

  const readHeader = async (q: SqlQueries, sessionId: string, runId: string): Promise<SqlOutcome<AgentRun>> => {
    const text = (await q.value(dialect.selectHeader, [sessionId, runId])) as string | undefined
    return text === undefined ? E.left(notFound(places.run(sessionId, runId))) : decodeAt(text, sessionId, runId)
  }

  return {
    create: (run) =>
      sqlTask(
        context,
        () => `create run.json of run ${run?.runId} in session ${run?.sessionId}`,
        (db) => {
          const checked = checkRunHeader(run)
          if (E.isLeft(checked)) return Promise.resolve(checked)
          const fenced = context.fence(run.sessionId)
          if (E.isLeft(fenced)) return Promise.resolve(fenced)
          return db.transaction('write', async (q): Promise<SqlOutcome<void>> => {
            await q.run(dialect.touchSession, [run.sessionId])
            const inserted = await q.run(dialect.insertRun, [run.sessionId, run.runId, JSON.stringify(run)])
            return inserted === 0
              ? E.left(runAlreadyExists(places.run(run.sessionId, run.runId), run.sessionId, run.runId))
              : E.right(undefined)
          })
        },
      ),
    read: (sessionId, runId) =>
      sqlTask(
        context,
        () => `read run.json of run ${runId} in session ${sessionId}`,
        async (db) => {
          const ids = checkIds(['sessionId', sessionId], ['runId', runId])
          return E.isLeft(ids) ? ids : readHeader(db, sessionId, runId)
        },
      ),
    // Every commit is durable in both databases (SQLite synchronous=FULL, PostgreSQL
    // synchronous_commit on), so `durable` asks for nothing more.
    update: (run) =>
      sqlTask(
        context,
        () => `update run.json of run ${run?.runId} in session ${run?.sessionId}`,
        async (db) => {
          const checked = checkRunHeader(run)
          if (E.isLeft(checked)) return checked
          const fenced = context.fence(run.sessionId)
          if (E.isLeft(fenced)) return fenced
          const updated = await db.run(dialect.updateRun, [JSON.stringify(run), run.sessionId, run.runId])
          return updated === 0 ? E.left(notFound(places.run(run.sessionId, run.runId))) : E.right(undefined)
        },
      ),
    list: (sessionId) =>
      sqlTask(
        context,
        () => `list the runs of session ${sessionId}`,
        async (db) => {
          const ids = checkIds(['sessionId', sessionId])
          if (E.isLeft(ids)) return ids
          const rows = await db.all<{ readonly runId: string; readonly header: string }>(dialect.listRuns, [sessionId])
          return listRunRows(places, sessionId, rows)
        },
      ),
  }
}
