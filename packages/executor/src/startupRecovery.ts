/**
 * Startup recovery: runs before any model call in every host, for each session without a live
 * owner. It performs what the pure decider (`decideRunRecovery`) decides — a durable terminal row
 * first, then the header — and reports every repair, or refusal to repair. Running it twice
 * changes nothing the second time. Sessions that need nothing are neither locked nor read whole.
 * A session whose data the directory refuses (read-only, not permitted, a link or a misplaced file)
 * is reported in `unwritable` with what it would need, and the refusal is met before any write
 * wherever a read can meet it.
 */
import * as E from 'fp-ts/lib/Either.js'
import { type SessionSurvey, type StoreError, type StorePorts, SURVEY_PAGE_SESSIONS } from '@maka/stores'
import {
  type PendingRepair,
  type RecoveryAction,
  type RecoveryReport,
  type RecoveryStep,
  type StartupRecoveryDeps,
  type UnwritableSession,
  isDataDirRefusal,
} from './RecoveryAction.js'
import { makeRecoverClaims } from './recoverClaims.js'
import { makeRecoverRuns } from './recoverRuns.js'
import { makeRecoverShellRuns } from './recoverShellRuns.js'
import { surveyedStores } from './surveyedStores.js'

export type {
  PendingRepair,
  RecoveryAction,
  RecoveryReport,
  StartupRecoveryDeps,
  UnwritableSession,
} from './RecoveryAction.js'

const run = async <A>(task: () => Promise<E.Either<StoreError, A>>): Promise<E.Either<StoreError, A>> => task()

// Independent sessions are surveyed and repaired this many at a time: enough to keep the disk
// busy, few enough that file descriptors and memory stay bounded on a large data dir.
const SESSION_CONCURRENCY = 16

/** What a session needs written, and what its survey only reports. */
interface Survey {
  readonly notes: ReadonlyArray<RecoveryAction>
  readonly pending: ReadonlyArray<PendingRepair>
}

/** One session's share of the report. */
interface SessionOutcome {
  readonly actions: ReadonlyArray<RecoveryAction>
  readonly unwritable?: UnwritableSession
}

// The first refusal among some actions' errors.
const firstRefusal = (actions: ReadonlyArray<RecoveryAction>): StoreError | undefined =>
  actions.find((action) => action.error !== undefined && isDataDirRefusal(action.error))?.error

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
 * last row of each terminal run's ledger and of each run it would close (decisions.md, "recovery
 * surveys before it locks"). A session where nothing can need a write is never locked and no ledger
 * of it is read whole; nor is one whose survey the data dir refused. The others are locked,
 * surveyed again under the lock, and repaired exactly as before.
 * @category constructors
 */
export const makeStartupRecovery = (
  deps: StartupRecoveryDeps,
): ((options?: { readonly sessionIds?: ReadonlyArray<string> }) => Promise<RecoveryReport>) => {
  const { stores, acquireOwnership, releaseOwnership } = deps
  const recoverShellRuns = makeRecoverShellRuns(deps)
  const recoverClaims = makeRecoverClaims(deps)
  const recoverRuns = makeRecoverRuns(deps)

  // What the survey reads: the store itself, or the facts the store read in bulk for the session.
  interface SurveyReads {
    readonly stores: StorePorts
    readonly shellRuns: RecoveryStep
    readonly claims: RecoveryStep
    readonly runs: RecoveryStep
  }
  const direct: SurveyReads = { stores, shellRuns: recoverShellRuns, claims: recoverClaims, runs: recoverRuns }
  const surveyReads = (facts: SessionSurvey | undefined): SurveyReads => {
    if (facts === undefined) return direct
    const surveyed = { ...deps, stores: surveyedStores(stores, facts) }
    return {
      stores: surveyed.stores,
      shellRuns: makeRecoverShellRuns(surveyed),
      claims: makeRecoverClaims(surveyed),
      runs: makeRecoverRuns(surveyed),
    }
  }

  const recoverSession = async (sessionId: string, facts?: SessionSurvey): Promise<SessionOutcome> => {
    const reads = surveyReads(facts)
    const surveySession = () => survey(reads, sessionId)
    // A session with a live owner is skipped whatever it holds: its files are that process's to write.
    const lock = await run(reads.stores.ownerLocks.read(sessionId))
    if (E.isLeft(lock)) {
      const skipped: RecoveryAction = {
        sessionId,
        action: 'session_skipped',
        detail: `owner.lock is unreadable: ${lock.left._tag}`,
        error: lock.left,
      }
      if (!isDataDirRefusal(lock.left)) return { actions: [skipped] }
      // No lock can be taken where the data dir refuses owner.lock itself (no live owner ever made a
      // link or a folder of it); a survey reads only, and says what a repair would have written.
      const surveyed = await surveySession()
      return {
        actions: [skipped],
        unwritable: { sessionId, error: lock.left, stage: 'survey', pending: surveyed.pending },
      }
    }
    if (lock.right !== null && (await deps.inspector.ownerLiveness(lock.right)) === 'alive') {
      return { actions: [{ sessionId, action: 'session_skipped', detail: 'another live process owns the session' }] }
    }
    const surveyed = await surveySession()
    const surveyRefusal = firstRefusal(surveyed.notes)
    if (surveyRefusal !== undefined) {
      // A repair around a refused read (`claims` a file, a ledger a link) could only be partial, and
      // the lock alone would already write: the session is left whole for a person to fix.
      const unwritable: UnwritableSession = {
        sessionId,
        error: surveyRefusal,
        stage: 'survey',
        pending: surveyed.pending,
      }
      if (surveyed.pending.length === 0) return { actions: surveyed.notes, unwritable }
      const refused = surveyed.notes.find((note) => note.error === surveyRefusal)
      return {
        actions: [
          ...surveyed.notes,
          { sessionId, action: 'session_skipped', detail: `not repaired: ${refused?.detail ?? surveyRefusal._tag}` },
        ],
        unwritable,
      }
    }
    if (surveyed.pending.length === 0) return { actions: surveyed.notes }
    const owned = await acquireOwnership(sessionId)
    if (E.isLeft(owned)) {
      const skipped: RecoveryAction = {
        sessionId,
        action: 'session_skipped',
        detail: `could not take ownership: ${owned.left._tag}`,
        // Another live owner is not a failure of this process; anything else is.
        ...(owned.left._tag === 'OwnerLockHeld' ? {} : { error: owned.left }),
      }
      return isDataDirRefusal(owned.left)
        ? { actions: [skipped], unwritable: { sessionId, error: owned.left, stage: 'lock', pending: surveyed.pending } }
        : { actions: [skipped] }
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
    const repairRefusal = firstRefusal(actions)
    return repairRefusal === undefined
      ? { actions }
      : { actions, unwritable: { sessionId, error: repairRefusal, stage: 'repair', pending: surveyed.pending } }
  }

  // The survey runs the same three steps without writing: each says what it would write.
  const survey = async (reads: SurveyReads, sessionId: string): Promise<Survey> => {
    const notes: Array<RecoveryAction> = []
    const shell = await reads.shellRuns(sessionId, notes, 'survey')
    const claims = await reads.claims(sessionId, notes, 'survey')
    const runs = await reads.runs(sessionId, notes, 'survey')
    return { notes, pending: [...shell, ...claims, ...runs] }
  }

  // A page of sessions' facts read in bulk, where the store can (`StorePorts.survey`); where it
  // cannot, or the read failed, each session's survey reads the store itself, as it always did.
  const pageFacts = async (page: ReadonlyArray<string>): Promise<ReadonlyArray<SessionSurvey | undefined>> => {
    if (stores.survey === undefined) return page.map(() => undefined)
    const read = await run(stores.survey.read(page))
    return E.isLeft(read) ? page.map(() => undefined) : read.right
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
    const perSession: Array<SessionOutcome> = []
    const pageAt = (at: number) => sessionIds.slice(at, at + SURVEY_PAGE_SESSIONS)
    // The next page's facts are read while this page's sessions are surveyed, so a database's round
    // trips overlap the work on the rows already read. Pages hold other sessions, and the facts are
    // only a survey's: a session that needs a write is read again under its lock.
    let next = sessionIds.length === 0 ? null : pageFacts(pageAt(0))
    for (let at = 0; next !== null; at += SURVEY_PAGE_SESSIONS) {
      const page = pageAt(at)
      const facts = await next
      next = at + SURVEY_PAGE_SESSIONS < sessionIds.length ? pageFacts(pageAt(at + SURVEY_PAGE_SESSIONS)) : null
      const pairs = page.map((sessionId, i) => [sessionId, facts[i]] as const)
      perSession.push(
        ...(await mapBounded(pairs, SESSION_CONCURRENCY, ([sessionId, survey]) => recoverSession(sessionId, survey))),
      )
    }
    return {
      actions: perSession.flatMap((outcome) => outcome.actions),
      unwritable: perSession.flatMap((outcome) => (outcome.unwritable === undefined ? [] : [outcome.unwritable])),
    }
  }

  return recover
}
