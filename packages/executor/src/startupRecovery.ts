/**
 * Startup recovery: runs before any model call in every host, for each session without a live
 * owner. It performs what the pure decider (`decideRunRecovery`) decides — a durable terminal row
 * first, then the header — and reports every repair, or refusal to repair. Running it twice
 * changes nothing the second time.
 */
import * as E from 'fp-ts/lib/Either.js'
import type { IsoTimestamp } from '@maka/events'
import { isRecordedProcessAlive, type HostInspector } from '@maka/host-inspector'
import type { FileStores, StoreError } from '@maka/stores'
import { abandonedTargetHeader, abandonedTerminal, decideRunRecovery } from './decideRecovery.js'
import type { Ownership } from './ownership.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * One repair (or refusal to repair) made by startup recovery.
 * @category models
 */
export interface RecoveryAction {
  readonly sessionId: string
  readonly runId?: string
  readonly shellRunId?: string
  readonly action:
    | 'shell_run_orphaned'
    | 'continuation_abandoned'
    | 'header_repaired'
    | 'recovered_terminal'
    | 'missing_terminal_event'
    | 'left_untouched'
    | 'session_skipped'
  readonly detail: string
  /** The store failure behind a skip or an untouched entry; hosts report an `IoFailed` as a failed write. */
  readonly error?: StoreError
}

/**
 * Everything a recovery pass did.
 * @category models
 */
export interface RecoveryReport {
  readonly actions: ReadonlyArray<RecoveryAction>
}

/**
 * What recovery needs from the runtime.
 * @category models
 */
export interface StartupRecoveryDeps extends Ownership {
  readonly stores: FileStores
  readonly inspector: HostInspector
  readonly clock: () => Date
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

const run = async <A>(task: () => Promise<E.Either<StoreError, A>>): Promise<E.Either<StoreError, A>> => task()

/**
 * Builds the recovery pass over the given sessions (all sessions of the data dir by default).
 * @category constructors
 */
export const makeStartupRecovery = (
  deps: StartupRecoveryDeps,
): ((options?: { readonly sessionIds?: ReadonlyArray<string> }) => Promise<RecoveryReport>) => {
  const { stores, clock, acquireOwnership, releaseOwnership } = deps
  const nowIso = () => clock().toISOString() as IsoTimestamp

  const recoverSession = async (sessionId: string, actions: Array<RecoveryAction>) => {
    const lock = await run(stores.ownerLocks.read(sessionId))
    if (E.isLeft(lock)) {
      actions.push({
        sessionId,
        action: 'session_skipped',
        detail: `owner.lock is unreadable: ${lock.left._tag}`,
        error: lock.left,
      })
      return
    }
    if (lock.right !== null && (await deps.inspector.ownerLiveness(lock.right)) === 'alive') {
      actions.push({ sessionId, action: 'session_skipped', detail: 'another live process owns the session' })
      return
    }
    const owned = await acquireOwnership(sessionId)
    if (E.isLeft(owned)) {
      actions.push({
        sessionId,
        action: 'session_skipped',
        detail: `could not take ownership: ${owned.left._tag}`,
        // Another live owner is not a failure of this process; anything else is.
        ...(owned.left._tag === 'OwnerLockHeld' ? {} : { error: owned.left }),
      })
      return
    }
    try {
      await recoverShellRuns(sessionId, actions)
      await recoverClaims(sessionId, actions)
      await recoverRuns(sessionId, actions)
    } finally {
      await releaseOwnership(sessionId, owned.right)
    }
  }

  const recoverShellRuns = async (sessionId: string, actions: Array<RecoveryAction>) => {
    const listed = await run(stores.shellRuns.list(sessionId))
    if (E.isLeft(listed)) {
      actions.push({
        sessionId,
        action: 'left_untouched',
        detail: `shell runs unreadable: ${listed.left._tag}`,
        error: listed.left,
      })
      return
    }
    for (const listing of listed.right) {
      if (!('shellRun' in listing)) {
        actions.push({ sessionId, shellRunId: listing.shellRunId, action: 'left_untouched', detail: 'unreadable' })
        continue
      }
      const entry = listing.shellRun
      if (entry.status !== 'running') continue
      // Only a process proven gone is an orphan; a live pid without a recorded identity still runs.
      if (await isRecordedProcessAlive(entry, 'live_pid')) continue
      const written = await run(stores.shellRuns.write({ ...entry, status: 'failed', endedAt: nowIso() }))
      actions.push({
        sessionId,
        shellRunId: entry.shellRunId,
        action: E.isRight(written) ? 'shell_run_orphaned' : 'left_untouched',
        detail: E.isRight(written) ? 'its process is gone' : `could not be marked failed: ${written.left._tag}`,
        ...(E.isLeft(written) ? { error: written.left } : {}),
      })
    }
  }

  const recoverClaims = async (sessionId: string, actions: Array<RecoveryAction>) => {
    const claims = await run(stores.claims.list(sessionId))
    if (E.isLeft(claims)) {
      actions.push({
        sessionId,
        action: 'left_untouched',
        detail: `claims unreadable: ${claims.left._tag}`,
        error: claims.left,
      })
      return
    }
    for (const claim of claims.right) {
      const target = await run(stores.runs.read(sessionId, claim.targetRunId))
      if (E.isRight(target) || target.left._tag !== 'NotFound') continue
      // The target inherits the source's cwd, model and workspace identity: it is a link of the source's
      // chain (decisions #9), and without the identity it would park as workspace_identity_missing for good.
      // A source header that cannot be read gives nothing to inherit, so the claim is left as it is: it
      // still holds the boundary.
      const source = await run(stores.runs.read(sessionId, claim.sourceRunId))
      if (E.isLeft(source)) {
        actions.push({
          sessionId,
          runId: claim.targetRunId,
          action: 'left_untouched',
          detail: `the claim's source header is unreadable (${source.left._tag}); the claim is kept`,
        })
        continue
      }
      const header = abandonedTargetHeader(claim, source.right, nowIso())
      const created = await run(stores.runs.create(header))
      if (E.isLeft(created)) {
        actions.push({
          sessionId,
          runId: claim.targetRunId,
          action: 'left_untouched',
          detail: `target header: ${created.left._tag}`,
          error: created.left,
        })
        continue
      }
      const closing = abandonedTerminal(header, { now: nowIso(), ts: clock().getTime(), eventId: `${header.runId}-e1` })
      const appended = await run(stores.events.append(sessionId, header.runId, closing.event, { durable: true }))
      if (E.isLeft(appended)) {
        // The target now exists but is not closed: say so (recovery of runs closes it later).
        actions.push({
          sessionId,
          runId: claim.targetRunId,
          action: 'left_untouched',
          detail: `target terminal event: ${appended.left._tag}`,
          error: appended.left,
        })
        continue
      }
      const closed = await run(stores.runs.update(closing.header, { durable: true }))
      if (E.isLeft(closed)) {
        // The terminal event is durable; the next pass repairs the header from it.
        actions.push({
          sessionId,
          runId: claim.targetRunId,
          action: 'left_untouched',
          detail: `target terminal header: ${closed.left._tag}`,
          error: closed.left,
        })
        continue
      }
      actions.push({
        sessionId,
        runId: claim.targetRunId,
        action: 'continuation_abandoned',
        detail: 'the claimed continuation never started; it is closed as continuation_abandoned_before_start',
      })
    }
  }

  const recoverRuns = async (sessionId: string, actions: Array<RecoveryAction>) => {
    const runs = await run(stores.runs.list(sessionId))
    if (E.isLeft(runs)) {
      actions.push({
        sessionId,
        action: 'left_untouched',
        detail: `runs unreadable: ${runs.left._tag}`,
        error: runs.left,
      })
      return
    }
    for (const entry of runs.right) {
      if (!('header' in entry)) {
        const detail =
          entry.error._tag === 'NotFound'
            ? 'run.json was never created (a run create that did not complete); the folder is kept'
            : 'run.json is unreadable'
        actions.push({ sessionId, runId: entry.runId, action: 'left_untouched', detail })
        continue
      }
      const header = entry.header
      const ledger = await run(stores.events.read(sessionId, header.runId))
      if (E.isLeft(ledger)) {
        actions.push({
          sessionId,
          runId: header.runId,
          action: 'left_untouched',
          detail: `ledger: ${ledger.left._tag}`,
          error: ledger.left,
        })
        continue
      }
      const decision = decideRunRecovery(header, ledger.right, {
        now: nowIso(),
        ts: clock().getTime(),
        eventId: `${header.runId}-e${ledger.right.highWater + 1}`,
      })
      switch (decision._tag) {
        case 'Consistent':
          break
        case 'LeaveUntouched':
          actions.push({ sessionId, runId: header.runId, action: 'left_untouched', detail: decision.reason })
          break
        case 'RepairHeader': {
          const updated = await run(stores.runs.update(decision.header, { durable: true }))
          actions.push({
            sessionId,
            runId: header.runId,
            action: E.isRight(updated) ? 'header_repaired' : 'left_untouched',
            detail: E.isRight(updated) ? `header set to ${decision.header.status} from the ledger` : updated.left._tag,
            ...(E.isLeft(updated) ? { error: updated.left } : {}),
          })
          break
        }
        case 'AppendTerminal': {
          const appended = await run(
            stores.events.append(sessionId, header.runId, decision.event, {
              durable: true,
              expectedHighWater: ledger.right.highWater,
            }),
          )
          if (E.isLeft(appended)) {
            actions.push({
              sessionId,
              runId: header.runId,
              action: 'left_untouched',
              detail: appended.left._tag,
              error: appended.left,
            })
            break
          }
          const closed = await run(stores.runs.update(decision.header, { durable: true }))
          if (E.isLeft(closed)) {
            // The terminal event is durable; the next pass repairs the header from it.
            actions.push({
              sessionId,
              runId: header.runId,
              action: 'left_untouched',
              detail: `terminal header: ${closed.left._tag}`,
              error: closed.left,
            })
            break
          }
          actions.push({
            sessionId,
            runId: header.runId,
            action:
              decision.failureClass === 'missing_terminal_event' ? 'missing_terminal_event' : 'recovered_terminal',
            detail: `closed as failed (${decision.failureClass})`,
          })
          break
        }
      }
    }
  }

  const recover = async (options: { readonly sessionIds?: ReadonlyArray<string> } = {}): Promise<RecoveryReport> => {
    const actions: Array<RecoveryAction> = []
    let sessionIds: ReadonlyArray<string>
    if (options.sessionIds !== undefined) {
      sessionIds = options.sessionIds
    } else {
      const listed = await run(stores.sessions.list())
      sessionIds = E.isRight(listed) ? listed.right : []
    }
    for (const sessionId of sessionIds) await recoverSession(sessionId, actions)
    return { actions }
  }

  return recover
}
