/**
 * What startup recovery reads of a session before it knows whether the session needs a repair: the
 * owner lock, the shell runs, the claims, the run headers and the last row of each run's ledger.
 * Read one session at a time that is seven reads; on a database server each is a round trip, and a
 * data dir of 10,000 sessions spends its time waiting on them. A store that can read many sessions'
 * facts in a few statements offers `StorePorts.survey`; one whose per-session reads are as cheap
 * (files) leaves it out, and recovery reads session by session as before.
 */
import type * as E from 'fp-ts/lib/Either.js'
import type * as TE from 'fp-ts/lib/TaskEither.js'
import type { ContinuationClaim, OwnerLock, RuntimeEvent } from '@maka/events'
import type { RunListing } from './AgentRunStore.js'
import type { ShellRunListing } from './ShellRunStore.js'
import type { StoreError } from './StoreError.js'

/**
 * One session's facts. Each field is exactly what the store's own per-session read answers at the
 * same moment: `ownerLock` is `ownerLocks.read`, `shellRuns` is `shellRuns.list`, `claims` is
 * `claims.list`, `runs` is `runs.list`, and `lastRows` holds `events.readLastRow` for every run
 * that `runs` lists (none when `runs` is a `Left`).
 * @category models
 */
export interface SessionSurvey {
  readonly sessionId: string
  readonly ownerLock: E.Either<StoreError, OwnerLock | null>
  readonly shellRuns: E.Either<StoreError, ReadonlyArray<ShellRunListing>>
  readonly claims: E.Either<StoreError, ReadonlyArray<ContinuationClaim>>
  readonly runs: E.Either<StoreError, ReadonlyArray<RunListing>>
  readonly lastRows: ReadonlyMap<string, E.Either<StoreError, RuntimeEvent | null>>
}

/**
 * Reads many sessions' facts at once.
 * @category models
 */
export interface SessionSurveyReader {
  /**
   * The facts of each given session, in the order given (at most `SURVEY_PAGE_SESSIONS` of them, so a
   * page stays small whatever the data dir holds). A `Left` is a failure of the whole read (the
   * database is gone); what one session's rows hold wrong is that session's own `Left` fields.
   */
  read(sessionIds: ReadonlyArray<string>): TE.TaskEither<StoreError, ReadonlyArray<SessionSurvey>>
}

/**
 * The most sessions one `SessionSurveyReader.read` takes.
 * @category constants
 */
export const SURVEY_PAGE_SESSIONS = 256
