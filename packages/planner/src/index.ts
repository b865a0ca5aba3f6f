/**
 * @maka/planner — the continuation planner. It reads a source run's header and ledger (and its
 * ancestors' when the source is itself a continuation) plus host facts, and returns a plan:
 * `continue` with a fresh continuation, or `park` with every stable reason. Early exits stop at the
 * first failure; gates are fp-ts validators combined with the validation applicative so every
 * failure is collected. Pure: no I/O, no clock, no randomness — the world comes in through ports.
 *
 * This entry exports what other packages use: the planner over ports and on loaded data, the plans a
 * host asks for without the ports (no session, a refused recovery), the plan and its inputs, the
 * ports, the host facts, and the rules the executor and the session read model share (the run order,
 * the "latest" entry, the ancestor walk, the cwd comparison, the boundary holder). The gates, the
 * early exits, the ledger fold and the order tables are internals (`src/internal/`).
 */

// -------------------------------------------------------------------------------------
// planning
// -------------------------------------------------------------------------------------

export { makeRuntimeContinuationPlanner } from './makeRuntimeContinuationPlanner.js'
export { planContinuation } from './planContinuation.js'
export { planNoSession } from './planNoSession.js'
export { planUnrecovered } from './planUnrecovered.js'

// -------------------------------------------------------------------------------------
// the plan
// -------------------------------------------------------------------------------------

export type {
  ContinuationPlan,
  Continuation,
  ContinuationIds,
  SafetySnapshot,
  SnapshotCheckpoint,
  PlanDiagnostic,
  OutlinedPlan,
  ContinuationOutline,
  ReplaySegment,
  OpenToolOperation,
} from './ContinuationPlan.js'
export type { ParkFinding, ParkFindings, Gate } from './ParkFinding.js'
export {
  ResolveRefusalSentences,
  type ResolveRefusalCode,
  isResolveRefusalCode,
  EARLY_EXIT_REASONS,
} from './ResolveRefusal.js'

// -------------------------------------------------------------------------------------
// inputs and ports
// -------------------------------------------------------------------------------------

export type {
  PlanningInput,
  AncestorRead,
  AncestorUnavailable,
  AncestorLookup,
  Ancestors,
  BoundaryHolders,
  RecoveryRefusal,
} from './PlanningInput.js'
export type {
  PlannerStorePort,
  HostFactsPort,
  OperationToObserve,
  ObservedOperation,
  IdSource,
  OwnerLiveness,
  LedgerFoldCounts,
  RuntimeContinuationPlannerDeps,
  PlanRequest,
  RuntimeContinuationPlanner,
} from './PlannerPorts.js'
export type { ObservationError, PortThrew, PortFailure } from './PortFailure.js'
export type {
  HostFacts,
  ToolCatalogEntry,
  UnavailableToolServer,
  WorkspaceCheckpoint,
  UnsettledOperation,
  OperationFacts,
  ProbeVerdict,
  ReattachObservation,
} from './HostFacts.js'

// -------------------------------------------------------------------------------------
// shared rules
// -------------------------------------------------------------------------------------

export { compareRunCreation, latestTopLevelRun } from './runOrder.js'
export { latestCandidate } from './internal/earlyExits.js'
export {
  type WalkInput,
  type AncestorChain,
  type ChainLink,
  MAX_ANCESTOR_DEPTH,
  walkAncestors,
} from './walkAncestors.js'
export { normalizeCwd, sameCwd } from './normalizeCwd.js'
export { type Boundary, type BoundaryHolder, boundaryHolderOf } from './boundaryHolder.js'
