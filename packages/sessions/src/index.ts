/**
 * @maka/sessions — the session read model every host shows a data directory through: the sessions
 * with their latest run and "interrupted" mark, a session's lineage tree with each ledger as a
 * timeline, and a session's memory (the replayable history a new turn starts from). Pure queries,
 * and their loading over the store ports of `@maka/stores`, taken as parameters: nothing here
 * writes, and nothing here loads the executor's write path or a store implementation.
 */
export {
  type RunKind,
  type ListedRun,
  type RunBrief,
  type UnreadableRun,
  type SessionFacts,
  type SessionSummary,
  type LineageNode,
  type SessionLineage,
  type TimelineEntry,
  type Settlement,
  type TimelineFold,
  runKindOf,
  isInterrupted,
  summarizeSession,
  compareSessions,
  mostRecentSession,
  sessionLineage,
  continuationsOf,
  ledgerTimeline,
  makeTimelineFold,
} from './sessionQueries.js'
export {
  type SessionRunRead,
  type SessionHistoryProblem,
  type SessionHistoryOptions,
  sessionHistory,
  UNKNOWN_OUTCOME_RESULT,
  INTERRUPTED_TURN_NOTE,
} from './sessionHistory.js'
export {
  type SessionStores,
  type OwnerLockLiveness,
  listSessionRuns,
  summarizeStoredSession,
  listSessionSummaries,
  findMostRecentSession,
} from './readSessionCatalog.js'
export { type RunOutline, type SessionOutline, loadSessionOutline } from './sessionOutline.js'
export { loadSessionHistory, describeSessionHistoryProblem } from './sessionMemory.js'
export { sessionTitleOf } from './sessionTitle.js'
