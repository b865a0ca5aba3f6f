/**
 * Startup recovery: runs before any model call in every host, for each session without a live
 * owner. It performs what the pure decider (`decideRunRecovery`) decides — a durable terminal row
 * first, then the header — and reports every repair, or refusal to repair. Running it twice
 * changes nothing the second time. Sessions that need nothing are neither locked nor read whole.
 */
import * as E from 'fp-ts/lib/Either.js'
import {
  type AgentRun,
  type ContinuationClaim,
  type IsoTimestamp,
  isTerminalEvent,
  isTerminalRunStatus,
  runStatusFromTerminalStatus,
} from '@maka/events'
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

// Independent sessions are surveyed and repaired this many at a time: enough to keep the disk
// busy, few enough that file descriptors and memory stay bounded on a large data dir.
const SESSION_CONCURRENCY = 16

/** Whether a session needs a write, and what its survey only reports. */
interface Survey {
  readonly notes: ReadonlyArray<RecoveryAction>
  readonly needsRepair: boolean
}

const mapBounded = async <A, B>(
  items: ReadonlyArray<A>,
  limit: number,
  f: (item: A) => Promise<B>,
): Promise<ReadonlyArray<B>> => {
  const results = new Array<B>(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const at = next
      next += 1
      results[at] = await f(items[at] as A)
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  return results
}

/**
 * Builds the recovery pass over the given sessions (all sessions of the data dir by default).
 *
 * Its cost follows what needs repair: a session whose owner is alive is skipped; any other is first
 * surveyed without its lock from small files only — shell-run records, claims, run headers, and the
 * last row of each terminal run's ledger (decisions.md, "recovery surveys before it locks"). A
 * session where nothing can need a write is never locked and no ledger of it is read whole; the
 * others are locked, surveyed again under the lock, and repaired exactly as before.
 * @category constructors
 */
export const makeStartupRecovery = (
  deps: StartupRecoveryDeps,
): ((options?: { readonly sessionIds?: ReadonlyArray<string> }) => Promise<RecoveryReport>) => {
  const { stores, clock, acquireOwnership, releaseOwnership } = deps
  const nowIso = () => clock().toISOString() as IsoTimestamp

  const recoverSession = async (sessionId: string): Promise<ReadonlyArray<RecoveryAction>> => {
    // A session with a live owner is skipped whatever it holds: its files are that process's to write.
    const lock = await run(stores.ownerLocks.read(sessionId))
    if (E.isLeft(lock)) {
      return [
        {
          sessionId,
          action: 'session_skipped',
          detail: `owner.lock is unreadable: ${lock.left._tag}`,
          error: lock.left,
        },
      ]
    }
    if (lock.right !== null && (await deps.inspector.ownerLiveness(lock.right)) === 'alive') {
      return [{ sessionId, action: 'session_skipped', detail: 'another live process owns the session' }]
    }
    const survey = await surveySession(sessionId)
    if (!survey.needsRepair) return survey.notes
    const owned = await acquireOwnership(sessionId)
    if (E.isLeft(owned)) {
      return [
        {
          sessionId,
          action: 'session_skipped',
          detail: `could not take ownership: ${owned.left._tag}`,
          // Another live owner is not a failure of this process; anything else is.
          ...(owned.left._tag === 'OwnerLockHeld' ? {} : { error: owned.left }),
        },
      ]
    }
    const actions: Array<RecoveryAction> = []
    try {
      // Surveyed again under the lock: what was seen before it may have changed.
      await recoverShellRuns(sessionId, actions, 'repair')
      await recoverClaims(sessionId, actions, 'repair')
      await recoverRuns(sessionId, actions, 'repair')
    } finally {
      await releaseOwnership(sessionId, owned.right)
    }
    return actions
  }

  // The survey runs the same three steps without writing: each says whether it would write.
  const surveySession = async (sessionId: string): Promise<Survey> => {
    const notes: Array<RecoveryAction> = []
    const shell = await recoverShellRuns(sessionId, notes, 'survey')
    const claims = await recoverClaims(sessionId, notes, 'survey')
    const runs = await recoverRuns(sessionId, notes, 'survey')
    return { notes, needsRepair: shell || claims || runs }
  }

  /** Returns whether a write is (survey) or was (repair) needed. */
  const recoverShellRuns = async (
    sessionId: string,
    actions: Array<RecoveryAction>,
    mode: 'survey' | 'repair',
  ): Promise<boolean> => {
    const listed = await run(stores.shellRuns.list(sessionId))
    if (E.isLeft(listed)) {
      actions.push({
        sessionId,
        action: 'left_untouched',
        detail: `shell runs unreadable: ${listed.left._tag}`,
        error: listed.left,
      })
      return false
    }
    let needed = false
    for (const listing of listed.right) {
      if (!('shellRun' in listing)) {
        actions.push({ sessionId, shellRunId: listing.shellRunId, action: 'left_untouched', detail: 'unreadable' })
        continue
      }
      const entry = listing.shellRun
      if (entry.status !== 'running') continue
      // Only a process proven gone is an orphan; a live pid without a recorded identity still runs.
      if (await isRecordedProcessAlive(entry, 'live_pid')) continue
      needed = true
      if (mode === 'survey') continue
      const written = await run(stores.shellRuns.write({ ...entry, status: 'failed', endedAt: nowIso() }))
      actions.push({
        sessionId,
        shellRunId: entry.shellRunId,
        action: E.isRight(written) ? 'shell_run_orphaned' : 'left_untouched',
        detail: E.isRight(written) ? 'its process is gone' : `could not be marked failed: ${written.left._tag}`,
        ...(E.isLeft(written) ? { error: written.left } : {}),
      })
    }
    return needed
  }

  const recoverClaims = async (
    sessionId: string,
    actions: Array<RecoveryAction>,
    mode: 'survey' | 'repair',
  ): Promise<boolean> => {
    const claims = await run(stores.claims.list(sessionId))
    if (E.isLeft(claims)) {
      actions.push({
        sessionId,
        action: 'left_untouched',
        detail: `claims unreadable: ${claims.left._tag}`,
        error: claims.left,
      })
      return false
    }
    let needed = false
    for (const claim of claims.right) {
      const target = await run(stores.runs.read(sessionId, claim.targetRunId))
      if (E.isRight(target) || target.left._tag !== 'NotFound') continue
      needed = true
      if (mode === 'survey') continue
      await closeAbandonedClaim(sessionId, claim, actions)
    }
    return needed
  }

  const closeAbandonedClaim = async (
    sessionId: string,
    claim: ContinuationClaim,
    actions: Array<RecoveryAction>,
  ): Promise<void> => {
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
      return
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
      return
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
      return
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
      return
    }
    actions.push({
      sessionId,
      runId: claim.targetRunId,
      action: 'continuation_abandoned',
      detail: 'the claimed continuation never started; it is closed as continuation_abandoned_before_start',
    })
  }

  // A terminal header whose ledger's last row is the matching terminal event needs no repair. The
  // terminal invariant makes that the normal state of a finished run, and it is told from the tail
  // alone; anything else (no such row, another status, a tail that cannot tell) needs the full read.
  const endsConsistently = async (header: AgentRun): Promise<boolean> => {
    if (!isTerminalRunStatus(header.status)) return false
    const last = await run(stores.events.readLastRow(header.sessionId, header.runId))
    return (
      E.isRight(last) &&
      last.right !== null &&
      isTerminalEvent(last.right) &&
      runStatusFromTerminalStatus(last.right.status) === header.status
    )
  }

  const recoverRuns = async (
    sessionId: string,
    actions: Array<RecoveryAction>,
    mode: 'survey' | 'repair',
  ): Promise<boolean> => {
    const runs = await run(stores.runs.list(sessionId))
    if (E.isLeft(runs)) {
      actions.push({
        sessionId,
        action: 'left_untouched',
        detail: `runs unreadable: ${runs.left._tag}`,
        error: runs.left,
      })
      return false
    }
    let needed = false
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
      if (await endsConsistently(header)) continue
      // The survey reads no ledger whole: a run that may need a write is enough to take the lock.
      needed = true
      if (mode === 'survey') continue
      await recoverRun(sessionId, header, actions)
    }
    return needed
  }

  const recoverRun = async (sessionId: string, header: AgentRun, actions: Array<RecoveryAction>): Promise<void> => {
    const ledger = await run(stores.events.read(sessionId, header.runId))
    if (E.isLeft(ledger)) {
      actions.push({
        sessionId,
        runId: header.runId,
        action: 'left_untouched',
        detail: `ledger: ${ledger.left._tag}`,
        error: ledger.left,
      })
      return
    }
    const decision = decideRunRecovery(header, ledger.right, {
      now: nowIso(),
      ts: clock().getTime(),
      eventId: `${header.runId}-e${ledger.right.highWater + 1}`,
    })
    switch (decision._tag) {
      case 'Consistent':
        return
      case 'LeaveUntouched':
        actions.push({ sessionId, runId: header.runId, action: 'left_untouched', detail: decision.reason })
        return
      case 'RepairHeader': {
        const updated = await run(stores.runs.update(decision.header, { durable: true }))
        actions.push({
          sessionId,
          runId: header.runId,
          action: E.isRight(updated) ? 'header_repaired' : 'left_untouched',
          detail: E.isRight(updated) ? `header set to ${decision.header.status} from the ledger` : updated.left._tag,
          ...(E.isLeft(updated) ? { error: updated.left } : {}),
        })
        return
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
          return
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
          return
        }
        actions.push({
          sessionId,
          runId: header.runId,
          action: decision.failureClass === 'missing_terminal_event' ? 'missing_terminal_event' : 'recovered_terminal',
          detail: `closed as failed (${decision.failureClass})`,
        })
        return
      }
    }
  }

  const recover = async (options: { readonly sessionIds?: ReadonlyArray<string> } = {}): Promise<RecoveryReport> => {
    let sessionIds: ReadonlyArray<string>
    if (options.sessionIds !== undefined) {
      sessionIds = options.sessionIds
    } else {
      const listed = await run(stores.sessions.list())
      sessionIds = E.isRight(listed) ? listed.right : []
    }
    // Reported in session order whatever order the sessions finish in.
    const perSession = await mapBounded(sessionIds, SESSION_CONCURRENCY, recoverSession)
    return { actions: perSession.flat() }
  }

  return recover
}
