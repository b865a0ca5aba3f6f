/**
 * Who already holds a boundary — a (source run, high-water) pair that at most one continuation may
 * ever start from: a run whose `continuationSource` names it, or a claim on it. The planner's early
 * exit 9 and the executor's revalidation ask this one question, so they cannot disagree on it.
 */
import type { AgentRun, ContinuationClaim } from '@maka/events'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * A continuation boundary: the source run and the high-water a continuation starts after.
 * @category models
 */
export interface Boundary {
  readonly sourceRunId: string
  readonly highWater: number
}

/**
 * What holds a boundary, and through what.
 * @category models
 */
export interface BoundaryHolder {
  readonly runId: string
  readonly heldBy: 'run' | 'claim'
}

// -------------------------------------------------------------------------------------
// guards
// -------------------------------------------------------------------------------------

/**
 * True when `run` is a continuation of exactly this boundary. A run never holds its own boundary.
 * @category guards
 */
export const runHoldsBoundary = (run: AgentRun, boundary: Boundary): boolean =>
  run.runId !== boundary.sourceRunId &&
  run.continuationSource !== undefined &&
  run.continuationSource.sourceRunId === boundary.sourceRunId &&
  run.continuationSource.sourceRuntimeEventHighWater === boundary.highWater

/**
 * True when `claim` is a claim on exactly this boundary.
 * @category guards
 */
export const claimHoldsBoundary = (claim: ContinuationClaim, boundary: Boundary): boolean =>
  claim.sourceRunId === boundary.sourceRunId && claim.sourceRuntimeEventHighWater === boundary.highWater

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * The first run holding the boundary, else the first claim on it, else undefined.
 * @category constructors
 */
export const boundaryHolderOf = (
  runs: ReadonlyArray<AgentRun>,
  claims: ReadonlyArray<ContinuationClaim>,
  boundary: Boundary,
): BoundaryHolder | undefined => {
  const run = runs.find((r) => runHoldsBoundary(r, boundary))
  if (run !== undefined) return { runId: run.runId, heldBy: 'run' }
  const claim = claims.find((c) => claimHoldsBoundary(c, boundary))
  return claim === undefined ? undefined : { runId: claim.targetRunId, heldBy: 'claim' }
}
