/**
 * The store as recovery's survey sees one session when the store read that session's facts in bulk
 * (`StorePorts.survey`): the reads the survey makes answer from the facts, everything else goes to
 * the store. Only the survey reads through it; a repair takes the session's lock and reads again.
 */
import { type SessionSurvey, type StorePorts } from '@maka/stores'
import * as E from 'fp-ts/lib/Either.js'
import * as TE from 'fp-ts/lib/TaskEither.js'

/**
 * `stores` with the survey's reads of `facts.sessionId` answered from `facts`.
 * @category constructors
 */
export const surveyedStores = (stores: StorePorts, facts: SessionSurvey): StorePorts => {
  const mine = (sessionId: string) => sessionId === facts.sessionId
  return {
    ...stores,
    ownerLocks: {
      ...stores.ownerLocks,
      read: (sessionId) => (mine(sessionId) ? TE.fromEither(facts.ownerLock) : stores.ownerLocks.read(sessionId)),
    },
    shellRuns: {
      ...stores.shellRuns,
      list: (sessionId) => (mine(sessionId) ? TE.fromEither(facts.shellRuns) : stores.shellRuns.list(sessionId)),
    },
    claims: {
      ...stores.claims,
      list: (sessionId) => (mine(sessionId) ? TE.fromEither(facts.claims) : stores.claims.list(sessionId)),
    },
    runs: {
      ...stores.runs,
      list: (sessionId) => (mine(sessionId) ? TE.fromEither(facts.runs) : stores.runs.list(sessionId)),
      read: (sessionId, runId) => {
        // A run the listing holds reads as listed; one it lacks is asked of the store (a claim's
        // target that was never created: rare, and its answer is the store's own).
        const listed =
          mine(sessionId) && E.isRight(facts.runs) ? facts.runs.right.find((entry) => entry.runId === runId) : undefined
        if (listed === undefined) return stores.runs.read(sessionId, runId)
        return 'header' in listed ? TE.right(listed.header) : TE.left(listed.error)
      },
    },
    events: {
      ...stores.events,
      readLastRow: (sessionId, runId) => {
        const last = mine(sessionId) ? facts.lastRows.get(runId) : undefined
        return last === undefined ? stores.events.readLastRow(sessionId, runId) : TE.fromEither(last)
      },
    },
  }
}
