/**
 * The background shell-run store: `sessions/<sessionId>/shell-runs/<shellRunId>.json`. Each write
 * replaces the whole record atomically and durably, because recovery decides from these files
 * whether a background operation is still running.
 */
import { decodeWith, ShellRun, ShellRunId } from '@maka/events'
import * as E from 'fp-ts/lib/Either.js'
import { checkIds, invalidRecord, type ShellRunListing, type ShellRunStore, unreadable } from '@maka/stores'
import {
  atomicReplace,
  listDir,
  makeDirs,
  readRecord,
  recordBytes,
  toTask,
  type Outcome,
  type StoreContext,
} from './internal/durableFs.js'
import { shellRunPath, shellRunsDir } from './layout.js'

const decodeShellRun = decodeWith(ShellRun)
const SHELL_RUN_FILE = /^([A-Za-z0-9_-]{1,128})\.json$/

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Builds the shell-run store of one store instance.
 * @category constructors
 */
export const makeShellRunStore = (context: StoreContext): ShellRunStore => {
  const { dataDir, dirSync } = context

  const readShellRun = async (sessionId: string, shellRunId: string): Outcome<ShellRun> => {
    const path = shellRunPath(dataDir, sessionId, shellRunId)
    const record = await readRecord(context, path, decodeShellRun)
    if (E.isLeft(record)) return record
    if (record.right.sessionId !== sessionId || record.right.shellRunId !== shellRunId) {
      return E.left(unreadable(path, 'the record names another shell run than its file'))
    }
    return record
  }

  return {
    write: (run) =>
      toTask(
        async () => {
          const ids = checkIds(['sessionId', run?.sessionId], ['shellRunId', run?.shellRunId], ['runId', run?.runId])
          if (E.isLeft(ids)) return ids
          const decoded = decodeShellRun(run)
          if (E.isLeft(decoded)) return E.left(invalidRecord('ShellRun', decoded.left))
          const path = shellRunPath(dataDir, run.sessionId, run.shellRunId)
          const dirs = await makeDirs(context, shellRunsDir(dataDir, run.sessionId))
          if (E.isLeft(dirs)) return dirs
          const replaced = await atomicReplace(context, path, recordBytes(run), true)
          if (E.isLeft(replaced)) return replaced
          return dirSync.persist(path, { replaced: true })
        },
        () => `write shell run ${run.shellRunId} of session ${run.sessionId}`,
      ),
    list: (sessionId) =>
      toTask(
        async () => {
          const ids = checkIds(['sessionId', sessionId])
          if (E.isLeft(ids)) return ids
          const entries = await listDir(context, shellRunsDir(dataDir, sessionId))
          if (E.isLeft(entries)) return entries
          const shellRunIds = entries.right
            // A linked record is listed so that reading it reports the link: it is never dropped.
            .filter((entry) => entry.isFile() || entry.isSymbolicLink())
            .map((entry) => SHELL_RUN_FILE.exec(entry.name)?.[1])
            .filter(ShellRunId.is)
            .sort()
          const listings = await Promise.all(
            shellRunIds.map(async (shellRunId): Promise<ShellRunListing> => {
              const record = await readShellRun(sessionId, shellRunId)
              return E.isRight(record) ? { shellRunId, shellRun: record.right } : { shellRunId, error: record.left }
            }),
          )
          return E.right(listings)
        },
        () => `list the shell runs of session ${sessionId}`,
      ),
  }
}
