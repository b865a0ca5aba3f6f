/**
 * The writes of an approved continuation, decided as data from the plan and the revalidated
 * source header: the boundary claim, the target's `created` header and the continuation-start row.
 * Nothing here performs them; the performer writes them in the contract's order.
 */
import {
  type AgentRun,
  type ContinuationClaim,
  type ContinuationJournal,
  type ContinuationSource,
  type IsoTimestamp,
  type PermissionMode,
  type RowStamp,
  type RuntimeEvent,
  makeContinuationStartEvent,
} from '@maka/events'
import type { ContinuationPlan } from '@maka/planner'
import type { ProviderIdentity } from './decideTurnStart.js'

/**
 * The approved continuation of a plan.
 * @category models
 */
export type ApprovedContinuation = NonNullable<ContinuationPlan['continuation']>

/**
 * What a continuation's writes are decided from: the plan, the source header revalidation read,
 * and the time, provider and row stamp given as data.
 * @category models
 */
export interface ContinuationInput {
  readonly continuation: ApprovedContinuation
  readonly sourceHeader: AgentRun
  readonly provider: ProviderIdentity
  /** How the continuation authorises tool calls that change the workspace; recorded in its header. */
  readonly permissionMode?: PermissionMode
  readonly createdAt: IsoTimestamp
  /** The stamp of the target's first row. */
  readonly stamp: RowStamp
  /**
   * The run writes the tool journal (Phase 2): its start row carries the marker, the source prefix
   * digest revalidation found and the settlement plan; its header and claim carry the digest too.
   */
  readonly journal?: ContinuationJournal
}

/**
 * The writes that start a continuation, before any provider call.
 * @category models
 */
export interface ContinuationStart {
  readonly continuationSource: ContinuationSource
  readonly claim: ContinuationClaim
  readonly header: AgentRun
  readonly startRow: RuntimeEvent
}

/**
 * Decides the claim, the target header and the continuation-start row. The target keeps the
 * source's recorded cwd and the workspace identity the plan was made against.
 * @category constructors
 */
export const decideContinuation = (input: ContinuationInput): ContinuationStart => {
  const c = input.continuation
  const continuationSource: ContinuationSource = {
    sourceInvocationId: c.sourceInvocationId,
    sourceRunId: c.sourceRunId,
    sourceTurnId: c.sourceTurnId,
    sourceRuntimeEventHighWater: c.sourceRuntimeEventHighWater,
    ...(input.journal === undefined ? {} : { sourceRuntimeEventPrefixDigest: input.journal.prefixDigest }),
  }
  const header: AgentRun = {
    runId: c.runId,
    sessionId: c.sessionId,
    turnId: c.turnId,
    invocationId: c.invocationId,
    status: 'created',
    cwd: input.sourceHeader.cwd,
    ...input.provider,
    createdAt: input.createdAt,
    updatedAt: input.createdAt,
    workspaceIdentity: c.safetySnapshot.workspaceIdentity,
    ...(input.permissionMode === undefined ? {} : { permissionMode: input.permissionMode }),
    parentRunId: c.sourceRunId,
    parentTurnId: c.sourceTurnId,
    continuationSource,
  }
  const claim: ContinuationClaim = {
    sessionId: c.sessionId,
    ...continuationSource,
    targetInvocationId: header.invocationId,
    targetRunId: header.runId,
    targetTurnId: header.turnId,
    claimedAt: input.createdAt,
  }
  return {
    continuationSource,
    claim,
    header,
    startRow: makeContinuationStartEvent(header, input.stamp, continuationSource, input.journal),
  }
}
