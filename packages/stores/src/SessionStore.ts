/**
 * The session header port: one header per session (cwd, creation time, title). The header is a
 * projection, so unknown keys are tolerated on read; create is exclusive and durable.
 */
import type { SessionId, SessionRecord } from '@maka/events'
import type * as TE from 'fp-ts/lib/TaskEither.js'
import type { StoreError } from './StoreError.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * The session headers of a data dir.
 * @category models
 */
export interface SessionStore {
  /** Creates `session.json` exclusively; an existing one is `SessionAlreadyExists`, left untouched. */
  create(record: SessionRecord): TE.TaskEither<StoreError, void>
  /** Reads `session.json`: missing → `NotFound`, bad JSON, shape or identity → `Unreadable`. */
  read(sessionId: string): TE.TaskEither<StoreError, SessionRecord>
  /** The session folders whose names are safe ids, sorted; none when `sessions/` is missing. */
  list(): TE.TaskEither<StoreError, ReadonlyArray<SessionId>>
}
