/**
 * The in-process guard: one active run per runtime, and one claim per source boundary or session
 * in flight. It holds the active run's abort controller, made when the run becomes active so a
 * cancel that arrives before the first write is still seen by the loop.
 */
import * as E from 'fp-ts/lib/Either.js'

/**
 * A held place as the active run; `release` gives it back (call it exactly once, in a `finally`).
 * @category models
 */
export interface RunLease<Id extends string = string> {
  readonly runId: Id
  readonly signal: AbortSignal
  readonly release: () => void
}

/**
 * The boundary a continuation claims.
 * @category models
 */
export interface BoundaryKey {
  readonly sessionId: string
  readonly sourceRunId: string
  readonly sourceRuntimeEventHighWater: number
  readonly runId: string
}

/**
 * The guard's operations.
 * @category models
 */
export interface RunGuard {
  /** `newRunId` is called only once the runtime is free, so a refused turn spends no id. */
  readonly enterTurn: <Id extends string>(newRunId: () => Id) => E.Either<'another_run_active', RunLease<Id>>
  readonly enterContinuation: (
    boundary: BoundaryKey,
  ) => E.Either<'continuation_in_progress' | 'another_run_active', RunLease>
  /** Aborts the active run; its id, or null when none is active. */
  readonly cancel: () => string | null
}

/**
 * A fresh guard with no active run.
 * @category constructors
 */
export const makeRunGuard = (): RunGuard => {
  let active: { readonly runId: string; readonly abort: AbortController } | null = null
  const inflight = new Set<string>()

  const lease = <Id extends string>(runId: Id, keys: ReadonlyArray<string>): RunLease<Id> => {
    const abort = new AbortController()
    active = { runId, abort }
    for (const key of keys) inflight.add(key)
    return {
      runId,
      signal: abort.signal,
      release: () => {
        active = null
        for (const key of keys) inflight.delete(key)
      },
    }
  }

  return {
    enterTurn: (newRunId) => (active !== null ? E.left('another_run_active') : E.right(lease(newRunId(), []))),
    enterContinuation: (b) => {
      const boundaryKey = `${b.sessionId}/${b.sourceRunId}@${b.sourceRuntimeEventHighWater}`
      const sessionKey = `${b.sessionId}/*`
      // A second claim of the same session is named as such; any other active run is just busy.
      if (inflight.has(boundaryKey) || inflight.has(sessionKey)) return E.left('continuation_in_progress')
      if (active !== null) return E.left('another_run_active')
      return E.right(lease(b.runId, [boundaryKey, sessionKey]))
    },
    cancel: () => {
      if (active === null) return null
      active.abort.abort()
      return active.runId
    },
  }
}
