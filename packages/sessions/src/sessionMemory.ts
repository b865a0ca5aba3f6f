/**
 * Loads what the pure `sessionHistory` needs: every run header of the session and the ledgers of
 * the runs that can be part of the conversation. Child runs' ledgers are not read (sub-agents are
 * not part of it); a folder without `run.json` is a create that never completed and is skipped.
 */
import * as E from 'fp-ts/lib/Either.js'
import { type RuntimeEvent, isChildRun } from '@maka/events'
import type { SessionStores } from './readSessionCatalog.js'
import {
  type SessionHistoryOptions,
  type SessionHistoryProblem,
  type SessionRunRead,
  sessionHistory,
} from './sessionHistory.js'

/**
 * The replayable history of a session's earlier turns, read from the stores.
 * @category constructors
 */
export const loadSessionHistory = async (
  stores: SessionStores,
  sessionId: string,
  options: SessionHistoryOptions = {},
): Promise<E.Either<SessionHistoryProblem, ReadonlyArray<RuntimeEvent>>> => {
  const listed = await stores.runs.list(sessionId)()
  if (E.isLeft(listed)) {
    return listed.left._tag === 'NotFound' ? E.right([]) : E.left({ runId: '*', reason: `runs ${listed.left._tag}` })
  }
  const reads: Array<SessionRunRead> = []
  for (const entry of listed.right) {
    if ('error' in entry) {
      if (entry.error._tag !== 'NotFound') reads.push({ runId: entry.runId, headerUnavailable: entry.error._tag })
      continue
    }
    if (isChildRun(entry.header)) {
      reads.push({ header: entry.header, ledgerUnavailable: 'not read' })
      continue
    }
    const ledger = await stores.events.read(sessionId, entry.runId)()
    reads.push(
      E.isLeft(ledger)
        ? { header: entry.header, ledgerUnavailable: ledger.left._tag }
        : { header: entry.header, ledger: ledger.right },
    )
  }
  return sessionHistory(reads, options)
}

/**
 * The sentence for a history that cannot be built: the run and the kind of problem, no values.
 * @category constructors
 */
export const describeSessionHistoryProblem = (problem: SessionHistoryProblem): string =>
  `The session's earlier turns cannot be replayed: run ${problem.runId} (${problem.reason}). Nothing was written; start a new session or repair that run.`
