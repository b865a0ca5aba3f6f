/**
 * @maka/host-inspector — the shell that observes what only the running host can see (canonical cwd,
 * workspace identity, live background operations, tool catalog, checkpoint, owner-lock liveness) and
 * returns it as plain data (`HostFacts`) for the planner and executor. Every failure is a typed
 * `InspectError`; nothing throws across this boundary.
 */
export {
  type InspectError,
  type InvalidCwd,
  type CwdUnavailable,
  type NotADirectory,
  type InvalidSessionId,
  type ShellRunsUnreadable,
  type RunsUnreadable,
  type ToolCatalogUnavailable,
  type CheckpointUnavailable,
  invalidCwd,
  cwdUnavailable,
  notADirectory,
  invalidSessionId,
  shellRunsUnreadable,
  runsUnreadable,
  toolCatalogUnavailable,
  checkpointUnavailable,
  isInspectError,
} from './InspectError.js'
export { type WorkspaceObservation, canonicalCwd, workspaceIdentityOf, observeWorkspace } from './canonicalCwd.js'
export {
  type ProcessProbe,
  type RecordedProcess,
  type WithoutIdentity,
  DEFAULT_START_TIME_TOLERANCE_MS,
  probeProcess,
  processStartTime,
  currentProcessStartTime,
  processIdentity,
  currentProcessIdentity,
  isProcessAlive,
  isSameLiveProcess,
  isRecordedProcessAlive,
} from './processFacts.js'
export { type OwnerLockLiveness, ownerLockLiveness } from './ownerLockLiveness.js'
export type { ShellRunEntry, SessionStatePort, CheckpointQuery, CheckpointProvider } from './SessionStatePort.js'
export { unsettledShellRuns, unsettledRuns, unsettledOperationsOf } from './unsettledOperations.js'
export {
  ReattachObservation,
  observeReattach,
  findReattachRecord,
  observeReattachOperation,
} from './observeReattach.js'
export {
  type HostInspectorDeps,
  type InspectInput,
  type HostInspector,
  makeHostInspector,
} from './makeHostInspector.js'
