/**
 * The continuation-claim port over a SQL database: the `claims` row's uniqueness is the boundary
 * (session, source run, high-water), written in one transaction with the target run header, so a
 * refusal of either leaves neither. How the two are written under concurrency is the adapter's
 * (`SqlDialect.insertClaim`); the checks, the answers and the reads are the same everywhere.
 */
import { ContinuationClaim, decodeWith } from '@maka/events'
import * as E from 'fp-ts/lib/Either.js'
import { checkClaimBoundary, type ClaimStore } from '../ClaimStore.js'
import { checkHighWater, checkIds } from '../internal/checkIds.js'
import { claimConflict, runAlreadyExists } from '../StoreError.js'
import { decodeStoredRecord } from '../storedRecords.js'
import {
  sqlPlaces,
  sqlTask,
  type SqlOutcome,
  type SqlPlaces,
  type SqlQueries,
  type SqlStoreContext,
} from './SqlDatabase.js'

const decodeClaim = decodeWith(ContinuationClaim)

const decodeClaimRow = (
  places: SqlPlaces,
  sessionId: string,
  sourceRunId: string,
  highWater: number,
  text: string,
): SqlOutcome<ContinuationClaim> =>
  decodeStoredRecord(
    text,
    places.claim(sessionId, sourceRunId, highWater),
    decodeClaim,
    (c) => c.sessionId === sessionId && c.sourceRunId === sourceRunId && c.sourceRuntimeEventHighWater === highWater,
  )

/**
 * A session's `claims` rows as `claims.list` answers them (shared with the survey).
 * @category constructors
 */
export const listClaimRows = (
  places: SqlPlaces,
  sessionId: string,
  rows: ReadonlyArray<{ readonly r: string; readonly hw: number; readonly record: string }>,
): SqlOutcome<ReadonlyArray<ContinuationClaim>> => {
  const out: Array<ContinuationClaim> = []
  for (const { r, hw, record } of rows) {
    const claim = decodeClaimRow(places, sessionId, r, hw, record)
    if (E.isLeft(claim)) return claim
    out.push(claim.right)
  }
  return E.right(out)
}

/**
 * Builds the claim store of one SQL store instance.
 * @category constructors
 */
export const makeSqlClaimStore = (context: SqlStoreContext): ClaimStore => {
  const { dialect } = context
  const places = sqlPlaces(context.location)
  const decodeAt = (text: string, sessionId: string, sourceRunId: string, highWater: number) =>
    decodeClaimRow(places, sessionId, sourceRunId, highWater, text)

  const readClaim = async (
    q: SqlQueries,
    sessionId: string,
    sourceRunId: string,
    highWater: number,
  ): Promise<SqlOutcome<ContinuationClaim | null>> => {
    const text = (await q.value(dialect.selectClaim, [sessionId, sourceRunId, highWater])) as string | undefined
    return text === undefined ? E.right(null) : decodeAt(text, sessionId, sourceRunId, highWater)
  }

  return {
    claimBoundary: (claim, targetHeader) =>
      sqlTask(
        context,
        () =>
          `create the claim ${claim?.sourceRunId}@${claim?.sourceRuntimeEventHighWater} of session ${claim?.sessionId}`,
        async (db) => {
          const highWater = checkClaimBoundary(claim, targetHeader)
          if (E.isLeft(highWater)) return highWater
          const { sessionId, sourceRunId } = claim
          const fenced = context.fence(sessionId)
          if (E.isLeft(fenced)) return fenced
          const inserted = await dialect.insertClaim(db, claim, targetHeader, highWater.right)
          if (E.isLeft(inserted) || inserted.right === 'claimed') return E.map(() => undefined)(inserted)
          if (inserted.right === 'run_taken') {
            return E.left(runAlreadyExists(places.run(sessionId, targetHeader.runId), sessionId, targetHeader.runId))
          }
          // Claims are never changed or removed: the one found now is the one that won.
          const existing = await readClaim(db, sessionId, sourceRunId, highWater.right)
          return E.left(
            claimConflict(
              places.claim(sessionId, sourceRunId, highWater.right),
              E.isRight(existing) ? (existing.right ?? undefined) : undefined,
            ),
          )
        },
      ),
    read: (sessionId, sourceRunId, highWater) =>
      sqlTask(
        context,
        () => `read the claim ${sourceRunId}@${highWater} of session ${sessionId}`,
        async (db) => {
          const ids = checkIds(['sessionId', sessionId], ['sourceRunId', sourceRunId])
          if (E.isLeft(ids)) return ids
          const hw = checkHighWater('highWater', highWater)
          return E.isLeft(hw) ? hw : readClaim(db, sessionId, sourceRunId, hw.right)
        },
      ),
    list: (sessionId) =>
      sqlTask(
        context,
        () => `list the claims of session ${sessionId}`,
        async (db) => {
          const ids = checkIds(['sessionId', sessionId])
          if (E.isLeft(ids)) return ids
          const rows = await db.all<{ readonly r: string; readonly hw: number; readonly record: string }>(
            dialect.listClaims,
            [sessionId],
          )
          return listClaimRows(places, sessionId, rows)
        },
      ),
  }
}
