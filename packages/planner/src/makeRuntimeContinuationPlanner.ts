/**
 * The planner service over ports: it loads what the pure planner needs, in the order of the spec's
 * early exits 1–9, and stops at the first one that fails. Every port failure — a Left, a thrown
 * error or a rejected promise — becomes that exit's park reason, so `plan` never fails: it always
 * resolves to a plan. Planning reads only and is not a lease; the executor revalidates.
 *
 * One order is forced by the ports: observing host facts (exit 4) needs the source header, so the
 * header is read first and an unreadable header parks as `source_run_unreadable` (exit 5) without
 * attempting the observation.
 */
import type { AgentRun } from '@maka/events'
import type { LedgerSnapshot, RunListing } from '@maka/stores'
import * as E from 'fp-ts/lib/Either.js'
import { pipe } from 'fp-ts/lib/function.js'
import * as T from 'fp-ts/lib/Task.js'
import * as TE from 'fp-ts/lib/TaskEither.js'
import { type ContinuationIds, type ContinuationPlan, type PlanBoundary, makeParkedPlan } from './ContinuationPlan.js'
import {
  hostFactsObserved,
  latestCandidate,
  resumeFeatureEnabled,
  runsListed,
  sessionOwnerNotAlive,
  sourceLedgerLoaded,
  sourceRunReadable,
  workspaceIdentityRecorded,
} from './earlyExits.js'
import type { HostFacts } from './HostFacts.js'
import { type ParkFindings, describeCause, park } from './ParkFinding.js'
import { ledgerWarnings, planContinuation } from './planContinuation.js'
import type {
  PlanRequest,
  PlannerStorePort,
  RuntimeContinuationPlanner,
  RuntimeContinuationPlannerDeps,
} from './PlannerPorts.js'
import type { AncestorLookup, AncestorRead, AncestorUnavailable, BoundaryHolders } from './PlanningInput.js'
import { MAX_ANCESTOR_DEPTH } from './walkAncestors.js'

// -------------------------------------------------------------------------------------
// internals
// -------------------------------------------------------------------------------------

/** A stage either passes a value on or ends planning with a finished (parked) plan. */
type Stage<A> = TE.TaskEither<ContinuationPlan, A>

// A port is a TaskEither, but nothing stops an adapter from throwing or rejecting; both are failures.
const attempt =
  <A>(call: () => TE.TaskEither<unknown, A>): TE.TaskEither<unknown, A> =>
  async () => {
    try {
      return await call()()
    } catch (cause) {
      return E.left(cause)
    }
  }

const parkedAt =
  (boundary: PlanBoundary, warnings: ReturnType<typeof ledgerWarnings> = []) =>
  <A>(result: E.Either<ParkFindings, A>): E.Either<ContinuationPlan, A> =>
    pipe(
      result,
      E.mapLeft((findings) => makeParkedPlan(findings, boundary, warnings)),
    )

/** Loads the continuation chain up to the depth the walk accepts; the walk judges what was found. */
const loadAncestors =
  (store: PlannerStorePort, sessionId: string, source: AgentRun): T.Task<AncestorLookup> =>
  async () => {
    const found = new Map<string, E.Either<AncestorUnavailable, AncestorRead>>()
    const visited = new Set<string>([source.runId])
    let next = source.continuationSource?.sourceRunId
    while (next !== undefined && found.size < MAX_ANCESTOR_DEPTH && !visited.has(next)) {
      const runId = next
      visited.add(runId)
      next = undefined
      const header = await attempt(() => store.readRun(sessionId, runId))()
      if (E.isLeft(header)) {
        found.set(runId, E.left({ stage: 'run', cause: describeCause(header.left) }))
        break
      }
      const ledger = await attempt(() => store.readLedger(sessionId, runId))()
      if (E.isLeft(ledger)) {
        found.set(runId, E.left({ stage: 'ledger', cause: describeCause(ledger.left) }))
        break
      }
      found.set(runId, E.right({ header: header.right, ledger: ledger.right }))
      next = header.right.continuationSource?.sourceRunId
    }
    return (runId) => found.get(runId) ?? E.left({ stage: 'run', cause: 'ancestor run was not loaded' })
  }

/** The session's runs and claims; a failed listing is data for early exit 9, not an exception. */
const loadBoundaryHolders = (store: PlannerStorePort, sessionId: string): T.Task<BoundaryHolders> =>
  pipe(
    TE.Do,
    TE.apS(
      'runs',
      attempt(() => store.listRuns(sessionId)),
    ),
    TE.apS(
      'claims',
      attempt(() => store.listClaims(sessionId)),
    ),
    TE.match(
      (cause): BoundaryHolders => ({ unavailable: describeCause(cause) }),
      ({ runs, claims }): BoundaryHolders => ({
        runs: runs.flatMap((entry) => ('header' in entry ? [entry.header] : [])),
        claims,
      }),
    ),
  )

// A park on an unreadable listed header names that run as the plan's source: it is the one to repair.
const unreadableBoundary = (
  listed: E.Either<unknown, ReadonlyArray<RunListing>>,
  fallback: PlanBoundary,
): PlanBoundary => {
  const first = E.isRight(listed) ? listed.right.find((entry) => 'error' in entry) : undefined
  return first === undefined ? fallback : { sourceRunId: first.runId, sourceRuntimeEventHighWater: null }
}

const newIds = (deps: RuntimeContinuationPlannerDeps): E.Either<ParkFindings, ContinuationIds> => {
  try {
    return E.right(deps.ids.newContinuationIds())
  } catch (cause) {
    return park('safety_observation_unavailable', { stage: 'newContinuationIds', cause: describeCause(cause) })
  }
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Creates the planner service over the store, host and id ports.
 * @category constructors
 */
export const makeRuntimeContinuationPlanner = (deps: RuntimeContinuationPlannerDeps): RuntimeContinuationPlanner => {
  const { store, host } = deps

  // Exit 2: an explicit run, or the session's latest top-level run.
  const resolveRunId = (request: PlanRequest, unknownRun: PlanBoundary): Stage<string> =>
    request.runId !== undefined
      ? TE.right(request.runId)
      : pipe(
          attempt(() => store.listRuns(request.sessionId)),
          T.map((listed) =>
            pipe(runsListed(listed), E.flatMap(latestCandidate), parkedAt(unreadableBoundary(listed, unknownRun))),
          ),
        )

  // Exits 3–5.
  const observeSource = (
    sessionId: string,
    runId: string,
  ): Stage<{ readonly source: AgentRun; readonly facts: HostFacts }> => {
    const at = parkedAt({ sourceRunId: runId, sourceRuntimeEventHighWater: null })
    return pipe(
      attempt(() => host.ownerLiveness(sessionId)),
      T.map((liveness) => at(sessionOwnerNotAlive(liveness))),
      TE.flatMap(() =>
        TE.rightTask<ContinuationPlan, E.Either<unknown, AgentRun>>(attempt(() => store.readRun(sessionId, runId))),
      ),
      TE.flatMap((read) =>
        pipe(
          // Without a header there is nothing to observe for: exit 5 answers before exit 4 can be asked.
          TE.fromEither(at(E.isLeft(read) ? sourceRunReadable({ sessionId, runId })(read) : read)),
          TE.flatMap((header) =>
            pipe(
              attempt(() => host.observe({ sessionId, sourceRun: header })),
              T.map((observed) =>
                pipe(
                  hostFactsObserved(observed),
                  E.flatMap((facts) =>
                    pipe(
                      sourceRunReadable({ sessionId, runId })(read),
                      E.map((source) => ({ source, facts })),
                    ),
                  ),
                  at,
                ),
              ),
            ),
          ),
        ),
      ),
    )
  }

  // Exits 6–7 that need the ports; the rest of 7 and 8–9 are judged by the pure planner.
  const readSourceLedger = (sessionId: string, source: AgentRun): Stage<LedgerSnapshot> => {
    const at = parkedAt({ sourceRunId: source.runId, sourceRuntimeEventHighWater: null })
    return pipe(
      TE.fromEither(at(workspaceIdentityRecorded(source))),
      TE.flatMap(() =>
        TE.rightTask<ContinuationPlan, E.Either<unknown, LedgerSnapshot>>(
          attempt(() => store.readLedger(sessionId, source.runId)),
        ),
      ),
      TE.flatMap((read) => TE.fromEither(at(sourceLedgerLoaded(source.runId)(read)))),
    )
  }

  const planRun = (sessionId: string, runId: string): Stage<ContinuationPlan> =>
    pipe(
      observeSource(sessionId, runId),
      TE.flatMap(({ source, facts }) =>
        pipe(
          readSourceLedger(sessionId, source),
          TE.flatMap((ledger) =>
            pipe(
              T.Do,
              T.apS('ancestors', loadAncestors(store, sessionId, source)),
              T.apS('boundaryHolders', loadBoundaryHolders(store, sessionId)),
              T.map(({ ancestors, boundaryHolders }) =>
                pipe(
                  newIds(deps),
                  parkedAt(
                    { sourceRunId: source.runId, sourceRuntimeEventHighWater: ledger.events.length },
                    ledgerWarnings(source, ledger),
                  ),
                  E.map((ids) => planContinuation({ source, ledger, ancestors, boundaryHolders, facts }, ids)),
                ),
              ),
            ),
          ),
        ),
      ),
    )

  return {
    plan: (request) => {
      const unknownRun: PlanBoundary = { sourceRunId: request.runId ?? null, sourceRuntimeEventHighWater: null }
      return pipe(
        TE.fromEither(parkedAt(unknownRun)(resumeFeatureEnabled(deps.safeBoundaryResumeEnabled))),
        TE.flatMap(() => resolveRunId(request, unknownRun)),
        TE.flatMap((runId) => planRun(request.sessionId, runId)),
        TE.toUnion,
      )
    },
  }
}
