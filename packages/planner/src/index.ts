/**
 * @maka/planner — the continuation planner. It reads a source run's header and ledger (and its
 * ancestors' when the source is itself a continuation) plus host facts, and returns a plan:
 * `continue` with a fresh continuation, or `park` with every stable reason. Early exits stop at the
 * first failure; gates are fp-ts validators combined with the validation applicative so every
 * failure is collected. Pure: no I/O, no clock, no randomness — the world comes in through ports.
 */
export type { HostFacts, WorkspaceCheckpoint, UnsettledOperation } from './HostFacts.js'
export {
  type ParkFinding,
  type ParkFindings,
  type Gate,
  makeParkFinding,
  park,
  parkUnless,
  FindingsValidation,
  describeCause,
} from './ParkFinding.js'
export { EarlyExitTable, GateTable, sortFindings, rejectionReasonsOf } from './GateTable.js'
export {
  PlanWarningSentences,
  type PlanWarningCode,
  type PlanDiagnostic,
  type ContinuationIds,
  type SnapshotCheckpoint,
  type SafetySnapshot,
  type Continuation,
  type ContinuationPlan,
  type PlanBoundary,
  type ReplaySegment,
  type ContinuationOutline,
  type OutlinedPlan,
  makeWarning,
  makeParkedPlan,
  makeContinuePlan,
  materializePlan,
  segmentEvents,
} from './ContinuationPlan.js'
export type {
  AncestorRead,
  AncestorUnavailable,
  AncestorLookup,
  Ancestors,
  BoundaryHolders,
  PlanningInput,
  RecoveryRefusal,
} from './PlanningInput.js'
export type {
  PlannerStorePort,
  OwnerLiveness,
  HostFactsPort,
  IdSource,
  RuntimeContinuationPlannerDeps,
  PlanRequest,
  RuntimeContinuationPlanner,
  LedgerFoldCounts,
} from './PlannerPorts.js'
export {
  resumeFeatureEnabled,
  recoveryWritten,
  latestCandidate,
  runsListed,
  sessionOwnerNotAlive,
  hostFactsObserved,
  sourceRunReadable,
  workspaceIdentityRecorded,
  sourceLedgerLoaded,
  sourceLedgerReadable,
  ledgerRowsOwned,
  boundaryUnclaimed,
} from './earlyExits.js'
export {
  MAX_ANCESTOR_DEPTH,
  type ChainLink,
  type AncestorChain,
  type WalkInput,
  type FoldedRead,
  type FoldedAncestorLookup,
  type FoldedSegment,
  type ChainOutline,
  opensWithContinuationStart,
  walkAncestors,
  walkChain,
  foldedLookup,
  segmentOf,
} from './walkAncestors.js'
export { isRowOfRun } from './ledgerChecks.js'
export { normalizeCwd, sameCwd } from './normalizeCwd.js'
export {
  type Boundary,
  type BoundaryHolder,
  boundaryHolderOf,
  claimHoldsBoundary,
  runHoldsBoundary,
} from './boundaryHolder.js'
export {
  type GateView,
  type GatesPassed,
  phase0Replayable,
  permissionsDecided,
  ledgerNotEmpty,
  eventIdentityConsistent,
  continuationIdsFresh,
  terminalStatusConsistent,
  cwdUnchanged,
  workspaceIdentityUnchanged,
  backgroundSettled,
  checkpointHasRef,
  checkpointRestored,
  toolCatalogCovers,
  historyStartsWithUser,
  historyEndsAtBoundary,
  evaluateGates,
} from './gates.js'
export { compareRunCreation, latestTopLevelRun } from './runOrder.js'
export {
  type FoldedPlanningInput,
  ledgerWarnings,
  planContinuation,
  planFolded,
  sourceFoldOptions,
} from './planContinuation.js'
export {
  type RowMention,
  type FoldedLedger,
  type LedgerFoldOptions,
  type LedgerFolder,
  makeLedgerFolder,
  foldEvents,
} from './foldLedger.js'
export { type LedgerCounts, countsOf } from './ledgerChecks.js'
export { makeRuntimeContinuationPlanner } from './makeRuntimeContinuationPlanner.js'
export { planUnrecovered } from './planUnrecovered.js'
export { planNoSession } from './planNoSession.js'
