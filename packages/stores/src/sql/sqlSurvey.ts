/**
 * The recovery survey over a SQL database (`SessionSurveyReader`): a page of sessions' shell runs,
 * claims, run headers and last ledger rows in three statements, plus the adapter's read of their
 * owner locks, in one read transaction — where reading them session by session costs seven round
 * trips a session. Every row is read back by the same code as the per-session ports, so each
 * session's facts are what those ports would answer.
 */
import type { OwnerLock } from '@maka/events'
import * as E from 'fp-ts/lib/Either.js'
import { checkIds } from '../internal/checkIds.js'
import { type SessionSurvey, type SessionSurveyReader, SURVEY_PAGE_SESSIONS } from '../SessionSurvey.js'
import { invalidRecord, type StoreError } from '../StoreError.js'
import { listStoredShellRuns } from '../storedRecords.js'
import { listClaimRows } from './sqlClaims.js'
import { sqlPlaces, sqlTask, type SqlOutcome, type SqlQueries, type SqlStoreContext } from './SqlDatabase.js'
import { lastRowOf } from './sqlEvents.js'
import { listRunRows } from './sqlRuns.js'

/**
 * The owner lock of each of some sessions, as the adapter's `ownerLocks.read` answers it (a session
 * with none may be left out of the map).
 * @category models
 */
export type SqlOwnerLocksOf = (
  q: SqlQueries,
  sessionIds: ReadonlyArray<string>,
) => Promise<ReadonlyMap<string, SqlOutcome<OwnerLock | null>>>

// Rows grouped by session, each group in the order the statement gave.
const bySession = <R extends { readonly s: string }>(rows: ReadonlyArray<R>): Map<string, Array<R>> => {
  const groups = new Map<string, Array<R>>()
  for (const row of rows) {
    const group = groups.get(row.s)
    if (group === undefined) groups.set(row.s, [row])
    else group.push(row)
  }
  return groups
}

/**
 * Builds the survey of one SQL store instance.
 * @category constructors
 */
export const makeSqlSurveyReader = (context: SqlStoreContext, ownerLocksOf: SqlOwnerLocksOf): SessionSurveyReader => {
  const { dialect } = context
  const places = sqlPlaces(context.location)
  return {
    read: (sessionIds) =>
      sqlTask(
        context,
        () => `survey ${sessionIds.length} sessions`,
        async (db) => {
          if (sessionIds.length > SURVEY_PAGE_SESSIONS) {
            return E.left(invalidRecord('SessionSurvey', `more than ${SURVEY_PAGE_SESSIONS} session ids`))
          }
          // An id no store writes is refused as each port refuses it, without asking the database.
          const refused = new Map<string, StoreError>()
          for (const id of sessionIds) {
            const checked = checkIds(['sessionId', id])
            if (E.isLeft(checked)) refused.set(id, checked.left)
          }
          const valid = sessionIds.filter((id) => !refused.has(id))
          return db.transaction('read', async (q): Promise<SqlOutcome<ReadonlyArray<SessionSurvey>>> => {
            const ids = dialect.sessionIdList(valid)
            const locks: ReadonlyMap<string, SqlOutcome<OwnerLock | null>> = valid.length === 0
              ? new Map()
              : await ownerLocksOf(q, valid)
            const shellRuns = bySession(
              await q.all<{ readonly s: string; readonly shellRunId: string; readonly record: string }>(
                dialect.surveyShellRuns,
                [ids],
              ),
            )
            const claims = bySession(
              await q.all<{ readonly s: string; readonly r: string; readonly hw: number; readonly record: string }>(
                dialect.surveyClaims,
                [ids],
              ),
            )
            const runs = bySession(
              await q.all<{
                readonly s: string
                readonly runId: string
                readonly header: string
                readonly last: string | null
              }>(dialect.surveyRuns, [ids]),
            )
            return E.right(
              sessionIds.map((sessionId): SessionSurvey => {
                const bad = refused.get(sessionId)
                if (bad !== undefined) {
                  return {
                    sessionId,
                    ownerLock: E.left(bad),
                    shellRuns: E.left(bad),
                    claims: E.left(bad),
                    runs: E.left(bad),
                    lastRows: new Map(),
                  }
                }
                const runRows = runs.get(sessionId) ?? []
                const listed = listRunRows(places, sessionId, runRows)
                const lastRows = new Map(
                  E.isLeft(listed)
                    ? []
                    : runRows.map((row) => [row.runId, E.right(lastRowOf(sessionId, row.runId, row.last))] as const),
                )
                return {
                  sessionId,
                  ownerLock: locks.get(sessionId) ?? E.right(null),
                  shellRuns: listStoredShellRuns(sessionId, shellRuns.get(sessionId) ?? [], places.shellRun),
                  claims: listClaimRows(places, sessionId, claims.get(sessionId) ?? []),
                  runs: listed,
                  lastRows,
                }
              }),
            )
          })
        },
      ),
  }
}
