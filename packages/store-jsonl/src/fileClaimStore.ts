/**
 * Continuation claims: `sessions/<sessionId>/claims/<sourceRunId>@<highWater>.json`. Claiming a
 * boundary is ONE port operation (docs/contract.md §3, "Durable claim"): exclusively create the claim file,
 * then exclusively create the target run header. The claim file's exclusive create is what stops
 * two processes from continuing one boundary; a SQLite or PostgreSQL store would do both in one
 * transaction with a unique key.
 *
 * The claim is durable (file and folder) before the header gets its name, so a header on disk always
 * has its claim. The header's content is fsynced before its link; its folder entries become durable
 * with the target run's first durable append (the continuation-start row), which fsyncs the same
 * folders as it walks up from the ledger it creates beside the header (decision 288). A power loss
 * before that row can take the header and leave the claim: recovery's repair of a claim whose header
 * never appeared, the same outcome as a crash between the two creates.
 */
import { ContinuationClaim, decodeWith, RunId } from '@maka/events'
import * as E from 'fp-ts/lib/Either.js'
import { createRunHeaderLocked } from './fileAgentRunStore.js'
import { checkClaimBoundary, checkHighWater, checkIds, claimConflict, type ClaimStore, unreadable } from '@maka/stores'
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

const decodeClaim = decodeWith(ContinuationClaim)
const CLAIM_FILE = /^([A-Za-z0-9_-]{1,128})@(0|[1-9][0-9]{0,15})\.json$/

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
              createRunHeaderLocked(context, targetHeader, 'with_first_row'),
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
