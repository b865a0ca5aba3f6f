/**
 * Startup recovery: runs before any model call in every host, for each session without a live
 * owner. It performs what the pure decider (`decideRunRecovery`) decides — a durable terminal row
 * first, then the header — and reports every repair, or refusal to repair. Running it twice
 * changes nothing the second time. Sessions that need nothing are neither locked nor read whole.
 */
import * as E from 'fp-ts/lib/Either.js'
import type { StoreError } from '@maka/stores'
import type { RecoveryAction, RecoveryReport, StartupRecoveryDeps } from './RecoveryAction.js'
import { makeRecoverClaims } from './recoverClaims.js'
import { makeRecoverRuns } from './recoverRuns.js'
import { makeRecoverShellRuns } from './recoverShellRuns.js'

export type { RecoveryAction, RecoveryReport, StartupRecoveryDeps } from './RecoveryAction.js'

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
  const { stores, acquireOwnership, releaseOwnership } = deps
  const recoverShellRuns = makeRecoverShellRuns(deps)
  const recoverClaims = makeRecoverClaims(deps)
  const recoverRuns = makeRecoverRuns(deps)

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
