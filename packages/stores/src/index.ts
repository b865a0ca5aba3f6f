/**
 * @maka/stores — the file-backed shell of maka-resume: session, AgentRun header, RuntimeEvent ledger,
 * shell-run, continuation-claim and owner-lock stores over one data directory (ledger-format.md).
 * Every method validates ids before touching the filesystem and returns a `TaskEither` over the
 * `_tag`ged `StoreError` union; nothing throws across this boundary.
 */
export { makeFileStores, type FileStores, type FileStoresOptions } from './makeFileStores.js'
export { type StorePorts } from './StorePorts.js'
export { nodeStoreFs, syncStoreFs, type StoreFs, type StoreFile, type StoreEntryStat } from './StoreFs.js'
export { makeFaultInjectingFs, type FaultInjectingFs, type Fault, type FsCall } from './faultInjectingFs.js'
export { type SessionStore } from './SessionStore.js'
export { type AgentRunStore, type RunListing, type UpdateRunOptions } from './AgentRunStore.js'
export {
  type RuntimeEventStore,
  type AppendOptions,
  type AppendResult,
  type ReplayExpectation,
  checkReplayExpectation,
  emptyLedgerScan,
  encodeRuntimeEventRow,
} from './RuntimeEventStore.js'
export {
  type LedgerSnapshot,
  type LedgerScan,
  type LedgerScanner,
  type LedgerSink,
  type LedgerScanOptions,
  type LedgerProblem,
  type LedgerIdentity,
  type TornTail,
  type LedgerRowReader,
  emptyLedgerSnapshot,
  scanLedger,
  makeLedgerScanner,
  makeLedgerRowReader,
} from './LedgerSnapshot.js'
export { type ShellRunStore, type ShellRunListing } from './ShellRunStore.js'
export { type ClaimStore } from './ClaimStore.js'
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
  consumerFailed,
  deliverBatch,
  replayVerdict,
  withSubject,
} from './StoreError.js'
export { checkIds, checkHighWater } from './internal/checkIds.js'
export { checkRunHeader } from './AgentRunStore.js'
export { checkClaimTarget, checkClaimBoundary } from './ClaimStore.js'
export {
  sessionsDir,
  sessionDir,
  sessionRecordPath,
  runsDir,
  runDir,
  runHeaderPath,
  ledgerPath,
  shellRunsDir,
  shellRunPath,
  claimsDir,
  claimFileName,
  claimPath,
  ownerLockPath,
} from './layout.js'
export { decodeStoredRecord, listStoredShellRuns } from './storedRecords.js'
