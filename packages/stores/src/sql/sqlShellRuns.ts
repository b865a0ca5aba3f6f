/**
 * The background shell-run port over a SQL database: one `shell_runs` row per shell run, replaced
 * whole on each write; a listing decodes every row and fails closed on an id no store writes.
 */
import { decodeWith, ShellRun } from '@maka/events'
import * as E from 'fp-ts/lib/Either.js'
import { checkIds } from '../internal/checkIds.js'
import type { ShellRunStore } from '../ShellRunStore.js'
import { invalidRecord } from '../StoreError.js'
import { listStoredShellRuns } from '../storedRecords.js'
import { sqlPlaces, sqlTask, type SqlOutcome, type SqlStoreContext } from './SqlDatabase.js'

const decodeShellRun = decodeWith(ShellRun)

/**
 * Builds the shell-run store of one SQL store instance.
 * @category constructors
 */
export const makeSqlShellRunStore = (context: SqlStoreContext): ShellRunStore => {
  const { dialect } = context
  const places = sqlPlaces(context.location)
  return {
    write: (run) =>
      sqlTask(
        context,
        () => `write shell run ${run?.shellRunId} of session ${run?.sessionId}`,
        (db) => {
          const ids = checkIds(['sessionId', run?.sessionId], ['shellRunId', run?.shellRunId], ['runId', run?.runId])
          if (E.isLeft(ids)) return Promise.resolve(ids)
          const decoded = decodeShellRun(run)
          if (E.isLeft(decoded)) return Promise.resolve(E.left(invalidRecord('ShellRun', decoded.left)))
          const fenced = context.fence(run.sessionId)
          if (E.isLeft(fenced)) return Promise.resolve(fenced)
          return db.transaction('write', async (q): Promise<SqlOutcome<void>> => {
            await q.run(dialect.touchSession, [run.sessionId])
            await q.run(dialect.upsertShellRun, [run.sessionId, run.shellRunId, JSON.stringify(run)])
            return E.right(undefined)
          })
        },
      ),
    list: (sessionId) =>
      sqlTask(
        context,
        () => `list the shell runs of session ${sessionId}`,
        async (db) => {
          const ids = checkIds(['sessionId', sessionId])
          if (E.isLeft(ids)) return ids
          const rows = await db.all<{ readonly shellRunId: string; readonly record: string }>(dialect.listShellRuns, [
            sessionId,
          ])
          return listStoredShellRuns(sessionId, rows, places.shellRun)
        },
      ),
  }
}
