/**
 * Recovery of claims: a boundary claim whose target header never appeared is closed as
 * `continuation_abandoned_before_start`, so the boundary reads as taken instead of claimable twice.
 */
import * as E from 'fp-ts/lib/Either.js'
import { type ContinuationClaim, makeIsoTimestampUnsafe } from '@maka/events'
import { decideAbandonedClaim } from './decideRecovery.js'
import type { PendingRepair, RecoveryAction, RecoveryStep, StartupRecoveryDeps } from './RecoveryAction.js'
import { rowStamp } from './runWriter.js'

/**
 * The claim step of recovery.
 * @category constructors
 */
export const makeRecoverClaims = ({ stores, clock }: Pick<StartupRecoveryDeps, 'stores' | 'clock'>): RecoveryStep => {
  const nowIso = () => makeIsoTimestampUnsafe(clock().toISOString())

  const closeAbandonedClaim = async (
    sessionId: string,
    claim: ContinuationClaim,
    actions: Array<RecoveryAction>,
  ): Promise<void> => {
    const untouched = (detail: string, error?: RecoveryAction['error']) =>
      actions.push({
        sessionId,
        runId: claim.targetRunId,
        action: 'left_untouched',
        detail,
        ...(error === undefined ? {} : { error }),
      })
    // A source header that cannot be read gives nothing to inherit, so the claim is left as it is:
    // it still holds the boundary.
    const source = await stores.runs.read(sessionId, claim.sourceRunId)()
    if (E.isLeft(source)) {
      untouched(`the claim's source header is unreadable (${source.left._tag}); the claim is kept`)
      return
    }
    const createdAt = nowIso()
    const repair = decideAbandonedClaim(claim, source.right, createdAt, {
      now: nowIso(),
      ...rowStamp(claim.targetRunId, 1, clock().getTime()),
    })
    const created = await stores.runs.create(repair.header)()
    if (E.isLeft(created)) {
      untouched(`target header: ${created.left._tag}`, created.left)
      return
    }
    const appended = await stores.events.append(sessionId, repair.header.runId, repair.terminal, { durable: true })()
    if (E.isLeft(appended)) {
      // The target now exists but is not closed: say so (recovery of runs closes it later).
      untouched(`target terminal event: ${appended.left._tag}`, appended.left)
      return
    }
    const closed = await stores.runs.update(repair.closedHeader, { durable: true })()
    if (E.isLeft(closed)) {
      // The terminal event is durable; the next pass repairs the header from it.
      untouched(`target terminal header: ${closed.left._tag}`, closed.left)
      return
    }
    actions.push({
      sessionId,
      runId: claim.targetRunId,
      action: 'continuation_abandoned',
      detail: 'the claimed continuation never started; it is closed as continuation_abandoned_before_start',
    })
  }

  return async (sessionId, actions, mode) => {
    const claims = await stores.claims.list(sessionId)()
    if (E.isLeft(claims)) {
      actions.push({
        sessionId,
        action: 'left_untouched',
        detail: `claims unreadable: ${claims.left._tag}`,
        error: claims.left,
      })
      return []
    }
    const needed: Array<PendingRepair> = []
    for (const claim of claims.right) {
      const target = await stores.runs.read(sessionId, claim.targetRunId)()
      if (E.isRight(target) || target.left._tag !== 'NotFound') continue
      needed.push({ kind: 'close_abandoned_claim', runId: claim.targetRunId })
      if (mode === 'survey') continue
      await closeAbandonedClaim(sessionId, claim, actions)
    }
    return needed
  }
}
