/**
 * The AgentRun header (`run.json`): the mutable summary of one run. It is a projection of the
 * ledger; when the two disagree, the ledger wins and the header is repaired.
 */
import * as t from 'io-ts'
import { AbsolutePath, IsoTimestamp, NonEmptyString, NonNegativeInt, RunId, SessionId } from './ids.js'
import type { TerminalEventStatus } from './RuntimeEvent.js'
import { strictStruct } from './strictStruct.js'
import { Sha256Digest } from './ToolJournal.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * A run's lifecycle status.
 * @category codecs
 */
export const RunStatus = t.keyof(
  { created: null, running: null, waiting_permission: null, completed: null, failed: null, cancelled: null },
  'RunStatus',
)
/**
 * A run's lifecycle status.
 * @category models
 */
export type RunStatus = t.TypeOf<typeof RunStatus>

/**
 * The run statuses that mean the run has ended.
 * @category models
 */
export type TerminalRunStatus = 'completed' | 'failed' | 'cancelled'

/**
 * The boundary a continuation run was created from; also its idempotency claim.
 * @category codecs
 */
export const ContinuationSource = strictStruct(
  'ContinuationSource',
  {
    sourceInvocationId: NonEmptyString,
    sourceRunId: RunId,
    sourceTurnId: NonEmptyString,
    sourceRuntimeEventHighWater: NonNegativeInt,
  },
  // Written only by a protocol run (Phase 2): the digest of the source prefix it stands on.
  { sourceRuntimeEventPrefixDigest: Sha256Digest },
)
/**
 * The boundary a continuation run was created from.
 * @category models
 */
export type ContinuationSource = t.TypeOf<typeof ContinuationSource>

/**
 * How a run authorised tool calls that change the workspace: `ask` the person, `allow` them, or
 * `deny` them. Recorded in the header so a later turn of the session, or a continuation of the
 * run, keeps the mode the person chose.
 * @category codecs
 */
export const PermissionMode = t.keyof({ ask: null, allow: null, deny: null }, 'PermissionMode')
/**
 * How a run authorised tool calls that change the workspace.
 * @category models
 */
export type PermissionMode = t.TypeOf<typeof PermissionMode>

/**
 * The AgentRun header, exact shape.
 * @category codecs
 */
export const AgentRun = strictStruct(
  'AgentRun',
  {
    runId: RunId,
    sessionId: SessionId,
    turnId: NonEmptyString,
    invocationId: NonEmptyString,
    status: RunStatus,
    cwd: AbsolutePath,
    providerId: NonEmptyString,
    modelId: NonEmptyString,
    createdAt: IsoTimestamp,
    updatedAt: IsoTimestamp,
  },
  {
    // The endpoint the run's provider talked to, so a resume can build the same provider; never a
    // key (credentials in a URL are refused before a header is written).
    providerBaseUrl: NonEmptyString,
    workspaceIdentity: NonEmptyString,
    // Absent in headers written before it was recorded: such a run's mode is unknown.
    permissionMode: PermissionMode,
    completedAt: IsoTimestamp,
    parentRunId: RunId,
    parentTurnId: NonEmptyString,
    continuationSource: ContinuationSource,
    failureClass: NonEmptyString,
    abortSource: t.string,
  },
)
/**
 * The AgentRun header.
 * @category models
 */
export type AgentRun = t.TypeOf<typeof AgentRun>

// -------------------------------------------------------------------------------------
// guards
// -------------------------------------------------------------------------------------

/**
 * True for `completed`, `failed` and `cancelled`.
 * @category guards
 */
export const isTerminalRunStatus = (status: RunStatus): status is TerminalRunStatus =>
  status === 'completed' || status === 'failed' || status === 'cancelled'

/**
 * A child run (a sub-agent): it has a parent and is not a continuation.
 * @category guards
 */
export const isChildRun = (run: AgentRun): boolean =>
  run.parentRunId !== undefined && run.continuationSource === undefined

/**
 * A continuation run: it carries a `continuationSource`.
 * @category guards
 */
export const isContinuationRun = (run: AgentRun): boolean => run.continuationSource !== undefined

// -------------------------------------------------------------------------------------
// combinators
// -------------------------------------------------------------------------------------

/**
 * Maps a terminal event status to the run status a header must then show.
 * @category combinators
 */
export const runStatusFromTerminalStatus = (status: TerminalEventStatus): TerminalRunStatus => {
  switch (status) {
    case 'completed':
      return 'completed'
    case 'failed':
      return 'failed'
    case 'aborted':
    case 'cancelled':
      return 'cancelled'
  }
}
