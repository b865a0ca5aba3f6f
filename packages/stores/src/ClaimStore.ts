/**
 * The continuation-claim port. Claiming a boundary is ONE port operation (docs/contract.md §3, "Durable
 * claim"): the claim and the target run header are created together or not at all, and the claim's
 * exclusive creation is what stops two processes from continuing one boundary. The checks every
 * adapter makes before writing either record live here.
 */
import { ContinuationClaim, decodeGuardFirst, type AgentRun } from '@maka/events'
import * as E from 'fp-ts/lib/Either.js'
import type * as TE from 'fp-ts/lib/TaskEither.js'
import { checkRunHeader } from './AgentRunStore.js'
import { checkHighWater, checkIds } from './internal/checkIds.js'
import { invalidRecord, type StoreError } from './StoreError.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * The continuation claims of every session in a data dir.
 * @category models
 */
export interface ClaimStore {
  /**
   * One operation: exclusively create `claims/<sourceRunId>@<highWater>.json` (EEXIST →
   * `ClaimConflict`), then exclusively create the target run header (EEXIST → `RunAlreadyExists`).
   * The claim is durable before the header exists; the header is durable at the latest with the
   * target run's first durable append (a power loss before it may leave the claim alone, which
   * recovery repairs). The header must be the claim's target and carry the claimed boundary as its
   * `continuationSource`.
   */
  claimBoundary(claim: ContinuationClaim, targetHeader: AgentRun): TE.TaskEither<StoreError, void>
  /** The claim of one boundary, or null when it is unclaimed. */
  read(sessionId: string, sourceRunId: string, highWater: number): TE.TaskEither<StoreError, ContinuationClaim | null>
  /** Every claim of a session, sorted by file name; an unreadable claim file fails the whole list. */
  list(sessionId: string): TE.TaskEither<StoreError, ReadonlyArray<ContinuationClaim>>
}

// Checked on every claim before anything is written: the guard answers first.
const decodeClaim = decodeGuardFirst(ContinuationClaim)

// -------------------------------------------------------------------------------------
// gates
// -------------------------------------------------------------------------------------

/**
 * The claim and the header are two records of one fact; a mismatch would let a header claim a
 * boundary its claim does not hold. Every adapter checks it before writing either.
 * @category gates
 */
export const checkClaimTarget = (claim: ContinuationClaim, header: AgentRun): E.Either<StoreError, void> => {
  const source = header.continuationSource
  const agrees =
    header.sessionId === claim.sessionId &&
    header.runId === claim.targetRunId &&
    header.invocationId === claim.targetInvocationId &&
    header.turnId === claim.targetTurnId &&
    claim.targetRunId !== claim.sourceRunId &&
    source !== undefined &&
    source.sourceRunId === claim.sourceRunId &&
    source.sourceInvocationId === claim.sourceInvocationId &&
    source.sourceTurnId === claim.sourceTurnId &&
    source.sourceRuntimeEventHighWater === claim.sourceRuntimeEventHighWater
  return agrees
    ? E.right(undefined)
    : E.left(
        invalidRecord('ContinuationClaim', 'the target header is not the claim target with this continuationSource'),
      )
}

/**
 * Every check of a `claimBoundary` call before anything is written, in the order the files store
 * makes them: safe ids, the high-water, the header's and the claim's exact shapes, and that the
 * header is the claim's target. The claimed high-water on success.
 * @category gates
 */
export const checkClaimBoundary = (claim: ContinuationClaim, targetHeader: AgentRun): E.Either<StoreError, number> => {
  const ids = checkIds(
    ['sessionId', claim?.sessionId],
    ['sourceRunId', claim?.sourceRunId],
    ['targetRunId', claim?.targetRunId],
  )
  if (E.isLeft(ids)) return ids
  const highWater = checkHighWater('sourceRuntimeEventHighWater', claim.sourceRuntimeEventHighWater)
  if (E.isLeft(highWater)) return highWater
  const header = checkRunHeader(targetHeader)
  if (E.isLeft(header)) return header
  const decoded = decodeClaim(claim)
  if (E.isLeft(decoded)) return E.left(invalidRecord('ContinuationClaim', decoded.left))
  const agrees = checkClaimTarget(claim, targetHeader)
  return E.isLeft(agrees) ? agrees : highWater
}
