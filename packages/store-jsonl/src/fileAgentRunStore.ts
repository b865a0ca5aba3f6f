/**
 * The AgentRun header store: `runs/<runId>/run.json`. Create is exclusive (temp file + `link`), so
 * two processes can never both create one run; update replaces the header atomically (temp file +
 * `rename`). Header writes share the per-run queue with ledger appends.
 */
import { decodeAgentRun, type AgentRun, RunId } from '@maka/events'
import * as E from 'fp-ts/lib/Either.js'
import {
  type AgentRunStore,
  checkIds,
  checkRunHeader,
  notFound,
  runAlreadyExists,
  type RunListing,
  unreadable,
} from '@maka/stores'
import {
  atomicReplace,
  exclusiveCreate,
  listDir,
  makeDirs,
  pathExists,
  readRecord,
  recordBytes,
  toTask,
  type Outcome,
  type StoreContext,
} from './internal/durableFs.js'
import { serialized } from './internal/runQueue.js'
import { runDir, runHeaderPath, runsDir } from './layout.js'

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Creates a checked header exclusively, its content fsynced before it gets its name; the caller has
 * already queued on the run. With `entries: 'now'` its folder entries are made durable too; with
 * `'with_first_row'` (a continuation's target, decision 288) the run's first durable append makes
 * them durable, as it walks up from the ledger it creates in the same folder.
 * @category constructors
 */
export const createRunHeaderLocked = async (
  context: StoreContext,
  run: AgentRun,
  entries: 'now' | 'with_first_row' = 'now',
): Outcome<void> => {
  const path = runHeaderPath(context.dataDir, run.sessionId, run.runId)
  const dirs = await makeDirs(context, runDir(context.dataDir, run.sessionId, run.runId))
  if (E.isLeft(dirs)) return dirs
  const created = await exclusiveCreate(context, path, recordBytes(run))
  if (E.isLeft(created)) return created
  if (created.right === 'exists') return E.left(runAlreadyExists(path, run.sessionId, run.runId))
  return entries === 'now' ? context.dirSync.persist(path) : E.right(undefined)
}

const readHeader = async (context: StoreContext, sessionId: string, runId: string): Outcome<AgentRun> => {
  const path = runHeaderPath(context.dataDir, sessionId, runId)
  const header = await readRecord(context, path, decodeAgentRun)
  if (E.isLeft(header)) return header
  // A header copied or renamed into another run's folder would make us trust the wrong run.
  if (header.right.sessionId !== sessionId || header.right.runId !== runId) {
    return E.left(unreadable(path, 'the header names another run than its folder'))
  }
  return header
}

/**
 * Builds the header store of one store instance.
 * @category constructors
 */
export const makeAgentRunStore = (context: StoreContext): AgentRunStore => {
  const { dataDir, dirSync } = context
  return {
    create: (run) =>
      toTask(
        async () => {
          const checked = checkRunHeader(run)
          if (E.isLeft(checked)) return checked
          return serialized(runDir(dataDir, run.sessionId, run.runId), () => createRunHeaderLocked(context, run))
        },
        () => `create run.json of run ${run.runId} in session ${run.sessionId}`,
      ),
    read: (sessionId, runId) =>
      toTask(
        async () => {
          const ids = checkIds(['sessionId', sessionId], ['runId', runId])
          if (E.isLeft(ids)) return ids
          return readHeader(context, sessionId, runId)
        },
        () => `read run.json of run ${runId} in session ${sessionId}`,
      ),
    update: (run, options = {}) =>
      toTask(
        async () => {
          const checked = checkRunHeader(run)
          if (E.isLeft(checked)) return checked
          const path = runHeaderPath(dataDir, run.sessionId, run.runId)
          return serialized(runDir(dataDir, run.sessionId, run.runId), async () => {
            const exists = await pathExists(context, path)
            if (E.isLeft(exists)) return exists
            if (!exists.right) return E.left(notFound(path))
            const durable = options.durable === true
            const replaced = await atomicReplace(context, path, recordBytes(run), durable)
            if (E.isLeft(replaced) || !durable) return replaced
            return dirSync.persist(path, { replaced: true })
          })
        },
        () => `update run.json of run ${run.runId} in session ${run.sessionId}`,
      ),
    list: (sessionId) =>
      toTask(
        async () => {
          const ids = checkIds(['sessionId', sessionId])
          if (E.isLeft(ids)) return ids
          const entries = await listDir(context, runsDir(dataDir, sessionId))
          if (E.isLeft(entries)) return entries
          const runIds = entries.right
            // A linked run folder is listed so that reading it reports the link: it is never dropped.
            .filter((entry) => entry.isDirectory() || entry.isSymbolicLink())
            .map((entry) => entry.name)
            // A name that is not a run id is not a run: no create could have made it (decisions 60).
            .filter(RunId.is)
            .sort()
          const listings = await Promise.all(
            runIds.map(async (runId): Promise<RunListing> => {
              const header = await readHeader(context, sessionId, runId)
              return E.isRight(header) ? { runId, header: header.right } : { runId, error: header.left }
            }),
          )
          return E.right(listings)
        },
        () => `list the runs of session ${sessionId}`,
      ),
  }
}
