/**
 * Continuation claims: `sessions/<sessionId>/claims/<sourceRunId>@<highWater>.json`. Claiming a
 * boundary is ONE port operation (executor.md, "Durable claim"): exclusively create the claim file,
 * then exclusively create the target run header. The claim file's exclusive create is what stops
 * two processes from continuing one boundary; a SQLite or PostgreSQL store would do both in one
 * transaction with a unique key.
 */
import { ContinuationClaim, decodeWith, type AgentRun, RunId } from '@maka/events'
import * as E from 'fp-ts/lib/Either.js'
import type * as TE from 'fp-ts/lib/TaskEither.js'
import { checkRunHeader, createRunHeaderLocked } from './AgentRunStore.js'
import { checkHighWater, checkIds } from './internal/checkIds.js'
import {
  exclusiveCreate,
  inSubject,
  listDir,
  makeDirs,
  readRecord,
  recordBytes,
  toTask,
  type Outcome,
  type StoreContext,
} from './internal/durableFs.js'
import { serialized } from './internal/runQueue.js'
import { claimPath, claimsDir, runDir } from './layout.js'
import { claimConflict, invalidRecord, unreadable, type StoreError } from './StoreError.js'

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
   * Durable. The header must be the claim's target and carry the claimed boundary as its
   * `continuationSource`.
   */
  claimBoundary(claim: ContinuationClaim, targetHeader: AgentRun): TE.TaskEither<StoreError, void>
  /** The claim of one boundary, or null when it is unclaimed. */
  read(sessionId: string, sourceRunId: string, highWater: number): TE.TaskEither<StoreError, ContinuationClaim | null>
  /** Every claim of a session, sorted by file name; an unreadable claim file fails the whole list. */
  list(sessionId: string): TE.TaskEither<StoreError, ReadonlyArray<ContinuationClaim>>
}

const decodeClaim = decodeWith(ContinuationClaim)
const CLAIM_FILE = /^([A-Za-z0-9_-]{1,128})@(0|[1-9][0-9]{0,15})\.json$/

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

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Builds the claim store of one store instance.
 * @category constructors
 */
export const makeClaimStore = (context: StoreContext): ClaimStore => {
  const { dataDir, dirSync } = context

  const readClaim = async (sessionId: string, sourceRunId: string, highWater: number): Outcome<ContinuationClaim> => {
    const path = claimPath(dataDir, sessionId, sourceRunId, highWater)
    const claim = await readRecord(context, path, decodeClaim)
    if (E.isLeft(claim)) return claim
    const { right } = claim
    if (
      right.sessionId !== sessionId ||
      right.sourceRunId !== sourceRunId ||
      right.sourceRuntimeEventHighWater !== highWater
    ) {
      return E.left(unreadable(path, 'the claim names another boundary than its file'))
    }
    return claim
  }

  return {
    claimBoundary: (claim, targetHeader) =>
      toTask(
        async () => {
          const highWater = checkClaimBoundary(claim, targetHeader)
          if (E.isLeft(highWater)) return highWater

          const path = claimPath(dataDir, claim.sessionId, claim.sourceRunId, highWater.right)
          const dirs = await makeDirs(context, claimsDir(dataDir, claim.sessionId))
          if (E.isLeft(dirs)) return dirs
          const created = await exclusiveCreate(context, path, recordBytes(claim))
          if (E.isLeft(created)) return created
          if (created.right === 'exists') {
            const existing = await readClaim(claim.sessionId, claim.sourceRunId, highWater.right)
            return E.left(claimConflict(path, E.isRight(existing) ? existing.right : undefined))
          }
          const persisted = await dirSync.persist(path)
          if (E.isLeft(persisted)) return persisted
          return inSubject(
            `create run.json of run ${targetHeader.runId} in session ${targetHeader.sessionId}`,
            serialized(runDir(dataDir, targetHeader.sessionId, targetHeader.runId), () =>
              createRunHeaderLocked(context, targetHeader),
            ),
          )
        },
        () =>
          `create the claim ${claim.sourceRunId}@${claim.sourceRuntimeEventHighWater} of session ${claim.sessionId}`,
      ),
    read: (sessionId, sourceRunId, highWater) =>
      toTask(
        async () => {
          const ids = checkIds(['sessionId', sessionId], ['sourceRunId', sourceRunId])
          if (E.isLeft(ids)) return ids
          const checked = checkHighWater('sourceRuntimeEventHighWater', highWater)
          if (E.isLeft(checked)) return checked
          const claim = await readClaim(sessionId, sourceRunId, highWater)
          if (E.isLeft(claim) && claim.left._tag === 'NotFound') return E.right(null)
          return claim
        },
        () => `read the claim ${sourceRunId}@${highWater} of session ${sessionId}`,
      ),
    list: (sessionId) =>
      toTask(
        async () => {
          const ids = checkIds(['sessionId', sessionId])
          if (E.isLeft(ids)) return ids
          const entries = await listDir(context, claimsDir(dataDir, sessionId))
          if (E.isLeft(entries)) return entries
          const boundaries = entries.right
            // A link is kept so that reading it fails the list: a claim must never vanish from it.
            .filter((entry) => entry.isFile() || entry.isSymbolicLink())
            .map((entry) => ({ name: entry.name, match: CLAIM_FILE.exec(entry.name) }))
            .flatMap(({ name, match }) =>
              RunId.is(match?.[1]) && match[2] !== undefined
                ? [{ name, sourceRunId: match[1], highWater: Number(match[2]) }]
                : [],
            )
            .filter((boundary) => Number.isSafeInteger(boundary.highWater))
            .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
          const claims: Array<ContinuationClaim> = []
          for (const boundary of boundaries) {
            const claim = await readClaim(sessionId, boundary.sourceRunId, boundary.highWater)
            if (E.isLeft(claim)) return claim
            claims.push(claim.right)
          }
          return E.right(claims)
        },
        () => `read the claims of session ${sessionId}`,
      ),
  }
}
