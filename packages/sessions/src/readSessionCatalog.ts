/**
 * The reads behind the session queries (`sessionQueries.ts`): session records, run listings and
 * owner locks over the store ports, handed to the pure queries (a session's ledgers are read by
 * `sessionOutline.ts`). Read-only; never repairs or writes anything. Every host lists sessions
 * through these. Whether a lock's process lives is the host's to judge: it comes in as a port.
 */
import * as E from 'fp-ts/lib/Either.js'
import type { OwnerLock } from '@maka/events'
import type { StorePorts } from '@maka/stores'
import {
  type ListedRun,
  type SessionSummary,
  compareSessions,
  mostRecentSession,
  summarizeSession,
} from './sessionQueries.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * The store ports the read model reads through; only their reads are ever called.
 * @category models
 */
export type SessionStores = Pick<StorePorts, 'sessions' | 'runs' | 'events' | 'ownerLocks'>

/**
 * Whether an owner lock names a live process: `@maka/host-inspector`'s `ownerLockLiveness`, or a
 * `HostInspector`'s `ownerLiveness` (`none` for no lock). Only `alive` marks a session as owned.
 * @category models
 */
export type OwnerLockLiveness = (lock: OwnerLock | null) => Promise<'none' | 'alive' | 'stale'>

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * A session's run folders; a folder without `run.json` is a create that never completed (decisions
 * #10): no run, not a broken one.
 * @category constructors
 */
export const listSessionRuns = async (
  stores: SessionStores,
  sessionId: string,
): Promise<E.Either<string, ReadonlyArray<ListedRun>>> => {
  const listed = await stores.runs.list(sessionId)()
  if (E.isLeft(listed)) return E.left(listed.left._tag)
  return E.right(
    listed.right.flatMap((entry): ReadonlyArray<ListedRun> =>
      'header' in entry
        ? [entry]
        : entry.error._tag === 'NotFound'
          ? []
          : [{ runId: entry.runId, error: entry.error._tag }],
    ),
  )
}

/**
 * One session with its latest top-level run, as `listSessionSummaries` lists it: a host showing one
 * session reads that session's files only.
 * @category constructors
 */
export const summarizeStoredSession = async (
  stores: SessionStores,
  sessionId: string,
  ownerLiveness: OwnerLockLiveness,
): Promise<SessionSummary> => {
  const [record, runs, lock] = await Promise.all([
    stores.sessions.read(sessionId)(),
    listSessionRuns(stores, sessionId),
    stores.ownerLocks.read(sessionId)(),
  ])
  return summarizeSession({
    sessionId,
    record: E.isRight(record) ? { _tag: 'Read', record: record.right } : { _tag: 'Unread', error: record.left._tag },
    // A session whose runs cannot be listed shows no run rather than no session.
    runs: E.isRight(runs) ? runs.right : [],
    ownerAlive: E.isRight(lock) && (await ownerLiveness(lock.right)) === 'alive',
  })
}

// Sessions are independent: their small files are read a few sessions at a time.
const SESSIONS_AT_ONCE = 16

/**
 * Every session of the data directory with its latest top-level run, oldest first. A missing
 * `sessions/` folder is no session; an unlistable one is a Left.
 * @category constructors
 */
export const listSessionSummaries = async (
  stores: SessionStores,
  ownerLiveness: OwnerLockLiveness,
): Promise<E.Either<string, ReadonlyArray<SessionSummary>>> => {
  const listed = await stores.sessions.list()()
  if (E.isLeft(listed)) return E.left(listed.left._tag)
  const summaries: Array<SessionSummary> = []
  for (let at = 0; at < listed.right.length; at += SESSIONS_AT_ONCE) {
    const batch = listed.right.slice(at, at + SESSIONS_AT_ONCE)
    summaries.push(
      ...(await Promise.all(batch.map((sessionId) => summarizeStoredSession(stores, sessionId, ownerLiveness)))),
    )
  }
  return E.right(summaries.sort(compareSessions))
}

/**
 * The most recent readable session from the session records alone (16 read at a time): picking a
 * session costs no run header, ledger or lock. `unreadable` names the sessions whose `session.json`
 * exists but cannot be read (by its store error's tag), so a caller that finds no readable session
 * does not mistake them for none; a folder whose `session.json` was never written is no session.
 * @category constructors
 */
export const findMostRecentSession = async (
  stores: SessionStores,
): Promise<
  E.Either<
    string,
    {
      readonly sessionId: string | undefined
      readonly unreadable: ReadonlyArray<{ readonly sessionId: string; readonly error: string }>
    }
  >
> => {
  const listed = await stores.sessions.list()()
  if (E.isLeft(listed)) return E.left(listed.left._tag)
  const ids = listed.right
  let best: { readonly createdAt: string; readonly sessionId: string } | undefined
  const unreadable: Array<{ readonly sessionId: string; readonly error: string }> = []
  for (let at = 0; at < ids.length; at += 16) {
    const batch = ids.slice(at, at + 16)
    const records = await Promise.all(batch.map((id) => stores.sessions.read(id)()))
    const readable = records.flatMap((record, i) => {
      if (E.isRight(record)) return [{ createdAt: record.right.createdAt, sessionId: record.right.sessionId }]
      if (record.left._tag !== 'NotFound') unreadable.push({ sessionId: batch[i] ?? '', error: record.left._tag })
      return []
    })
    best = mostRecentSession(best === undefined ? readable : [best, ...readable])
  }
  return E.right({ sessionId: best?.sessionId, unreadable })
}
