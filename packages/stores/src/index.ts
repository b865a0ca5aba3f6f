/**
 * @maka/stores — the store contract of maka-resume: the ports every adapter implements (session,
 * AgentRun header, RuntimeEvent ledger, shell-run, continuation-claim and owner-lock stores), the
 * `_tag`ged `StoreError` union every method returns in a `TaskEither`, what a ledger read yields,
 * and the row and record rules every adapter reads and writes by. Pure: no I/O, no `node:*`. The
 * adapters are `@maka/store-jsonl` (files), `@maka/store-sqlite` and `@maka/store-postgres`.
 */
export { type StorePorts, type StoreCapabilities } from './StorePorts.js'
export { type SessionStore } from './SessionStore.js'
export { type SessionSurvey, type SessionSurveyReader, SURVEY_PAGE_SESSIONS } from './SessionSurvey.js'
export { type AgentRunStore, type RunListing, type UpdateRunOptions, checkRunHeader } from './AgentRunStore.js'
export {
  type RuntimeEventStore,
  type AppendOptions,
  type AppendResult,
  type FoldOptions,
  type ReplayExpectation,
  checkFoldOptions,
  checkReplayExpectation,
  emptyLedgerScan,
  encodeRuntimeEventRow,
} from './RuntimeEventStore.js'
export {
  type LedgerSnapshot,
  type LedgerScan,
  type PrefixDigest,
  type LedgerSink,
  type LedgerProblem,
  type LedgerIdentity,
  type LedgerRowCheck,
  type TornTail,
  type LedgerRowReader,
  type LedgerRowReaderOptions,
  emptyLedgerSnapshot,
  makeLedgerRowCheck,
  makeLedgerRowReader,
} from './LedgerSnapshot.js'
export { decodeParsedRow, isRuntimeEventShape } from './internal/isRuntimeEventShape.js'
export { type ShellRunStore, type ShellRunListing } from './ShellRunStore.js'
export { type ClaimStore, checkClaimTarget, checkClaimBoundary } from './ClaimStore.js'
export { type OwnerLockStore, isSameOwner } from './OwnerLockStore.js'
export {
  type StoreError,
  type InvalidId,
  type InvalidRecord,
  type NotFound,
  type Unreadable,
  type LedgerUnreadable,
  type LedgerChanged,
  type RunAlreadyExists,
  type SessionAlreadyExists,
  type ClaimConflict,
  type OwnerLockHeld,
  type StaleCheckFailed,
  type HighWaterConflict,
  type EventIdentityMismatch,
  type IoFailed,
  type SymlinkInDataDir,
  describeStoreError,
  errnoCode,
  invalidId,
  invalidRecord,
  notFound,
  unreadable,
  ledgerUnreadable,
  ledgerChanged,
  runAlreadyExists,
  sessionAlreadyExists,
  claimConflict,
  ownerLockHeld,
  staleCheckFailed,
  highWaterConflict,
  eventIdentityMismatch,
  ioFailed,
  symlinkInDataDir,
  consumerFailed,
  deliverBatch,
  replayVerdict,
  withSubject,
} from './StoreError.js'
export { checkIds, checkHighWater } from './internal/checkIds.js'
export { decodeStoredRecord, listStoredShellRuns } from './storedRecords.js'
export {
  type SqlDatabase,
  type SqlQueries,
  type SqlDialect,
  type SqlOutcome,
  type SqlStoreContext,
  type ClaimInsert,
  type Sha256,
  sqlTask,
  sqlPlaces,
} from './sql/SqlDatabase.js'
export { makeSqlSessionStore } from './sql/sqlSessions.js'
export { makeSqlRunStore } from './sql/sqlRuns.js'
export { makeSqlEventStore } from './sql/sqlEvents.js'
export { makeSqlShellRunStore } from './sql/sqlShellRuns.js'
export { makeSqlClaimStore } from './sql/sqlClaims.js'
export { checkOwnerLockAcquire, decodeStoredOwnerLock } from './sql/sqlOwnerLocks.js'
export { type SqlOwnerLocksOf, makeSqlSurveyReader } from './sql/sqlSurvey.js'
