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
import type { AgentRun, RuntimeEvent } from '@maka/events'
import type { LedgerSnapshot, RunListing, TornTail } from '@maka/stores'
import * as E from 'fp-ts/lib/Either.js'
import { pipe } from 'fp-ts/lib/function.js'
import * as T from 'fp-ts/lib/Task.js'
import * as TE from 'fp-ts/lib/TaskEither.js'
import {
  type ContinuationIds,
  type ContinuationPlan,
  type OutlinedPlan,
  type PlanBoundary,
  makeParkedPlan,
} from './ContinuationPlan.js'
import {
  hostFactsObserved,
  latestCandidate,
  resumeFeatureEnabled,
  runsListed,
  sessionOwnerNotAlive,
  sourceLedgerLoaded,
  sourceRunReadable,
  workspaceIdentityRecorded,
} from './internal/earlyExits.js'
import { type FoldedLedger, type LedgerFoldOptions, makeLedgerFolder } from './internal/foldLedger.js'
import type { HostFacts, OperationFacts } from './HostFacts.js'
import { type LedgerCounts, countsOf } from './internal/ledgerChecks.js'
import { type ParkFindings, describeCause, describeThrown, makeParkFinding, park } from './ParkFinding.js'
import {
  type FoldedPlanningInput,
  ledgerWarnings,
  operationsToObserve,
  operationsToObserveIn,
  planContinuation,
  planFolded,
  sourceFoldOptions,
} from './planContinuation.js'
import type {
  ObservedOperation,
  PlanRequest,
  PlannerStorePort,
  RuntimeContinuationPlanner,
  RuntimeContinuationPlannerDeps,
} from './PlannerPorts.js'
import type { PortFailure } from './PortFailure.js'
import type { AncestorLookup, AncestorUnavailable, BoundaryHolders } from './PlanningInput.js'
import { MAX_ANCESTOR_DEPTH } from './walkAncestors.js'

// -------------------------------------------------------------------------------------
// internals
// -------------------------------------------------------------------------------------

// A plan that ended before a continuation: assignable to both a plan and an outlined plan.
type ParkedPlan = Omit<ContinuationPlan, 'continuation'>

/** A stage either passes a value on or ends planning with a finished (parked) plan. */
type Stage<A> = TE.TaskEither<ParkedPlan, A>

// A port is a TaskEither, but nothing stops an adapter from throwing or rejecting; both are failures.
const attempt =
  <A>(call: () => TE.TaskEither<PortFailure, A>): TE.TaskEither<PortFailure, A> =>
  async () => {
    try {
      return await call()()
    } catch (thrown) {
      return E.left({ thrown: describeThrown(thrown) })
    }
  }

const parkedAt =
  (boundary: PlanBoundary, warnings: ReturnType<typeof ledgerWarnings> = []) =>
  <A>(result: E.Either<ParkFindings, A>): E.Either<ParkedPlan, A> =>
    pipe(
      result,
      E.mapLeft((findings) => makeParkedPlan(findings, boundary, warnings)),
    )

/** Loads the continuation chain up to the depth the walk accepts; the walk judges what was found. */
const loadChain =
  <L>(
    store: PlannerStorePort,
    sessionId: string,
    source: AgentRun,
    loadLedger: (
      header: AgentRun,
      pinnedHighWater: number,
      recordedDigest: string | undefined,
    ) => TE.TaskEither<PortFailure, L>,
  ): T.Task<ReadonlyMap<string, E.Either<AncestorUnavailable, { readonly header: AgentRun; readonly ledger: L }>>> =>
  async () => {
    const found = new Map<string, E.Either<AncestorUnavailable, { readonly header: AgentRun; readonly ledger: L }>>()
    const visited = new Set<string>([source.runId])
    let pin = source.continuationSource?.sourceRuntimeEventHighWater ?? 0
    let recorded = source.continuationSource?.sourceRuntimeEventPrefixDigest
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
      const ledger = await attempt(() => loadLedger(header.right, pin, recorded))()
      if (E.isLeft(ledger)) {
        found.set(runId, E.left({ stage: 'ledger', cause: describeCause(ledger.left) }))
        break
      }
      found.set(runId, E.right({ header: header.right, ledger: ledger.right }))
      next = header.right.continuationSource?.sourceRunId
      pin = header.right.continuationSource?.sourceRuntimeEventHighWater ?? 0
      recorded = header.right.continuationSource?.sourceRuntimeEventPrefixDigest
    }
    return found
  }

const notLoaded: AncestorUnavailable = { stage: 'run', cause: 'ancestor run was not loaded' }

/**
 * The source ledger read whole, and the digest of its committed rows as stored when the store can
 * fold: the rows a fold hands over are the rows a read keeps, so one fold serves as the read.
 */
const readWithDigest = (
  store: PlannerStorePort,
  sessionId: string,
  runId: string,
): TE.TaskEither<PortFailure, LedgerSnapshot & { readonly digest?: string }> => {
  if (store.foldLedger === undefined) return store.readLedger(sessionId, runId)
  const events: Array<RuntimeEvent> = []
  return pipe(
    store.foldLedger(sessionId, runId, (event) => {
      events.push(event)
    }),
    TE.map((scan) => ({
      events,
      highWater: scan.highWater,
      committedBytes: scan.committedBytes ?? 0,
      tornTail: scan.tornTail,
      problem: scan.problem,
      ...(scan.digest === undefined ? {} : { digest: scan.digest }),
    })),
  )
}

/** A ledger folded as it streams from the store (or, from a store that cannot stream, read whole and folded). */
const foldFromStore = (
  store: PlannerStorePort,
  sessionId: string,
  header: AgentRun,
  options: LedgerFoldOptions,
): TE.TaskEither<PortFailure, FoldedSourceRead> => {
  const folder = makeLedgerFolder(header, options)
  if (store.foldLedger === undefined) {
    return pipe(
      store.readLedger(sessionId, header.runId),
      TE.map((ledger) => {
        for (const event of ledger.events) folder.add(event)
        return { counts: countsOf(ledger), tornTail: ledger.tornTail, folded: folder.finish() }
      }),
    )
  }
  return pipe(
    store.foldLedger(
      sessionId,
      header.runId,
      folder.add,
      options.limit === undefined ? {} : { digestAt: options.limit },
    ),
    TE.map((scan) => ({
      counts: { problem: scan.problem, highWater: scan.highWater, rows: scan.rows },
      tornTail: scan.tornTail,
      folded: folder.finish(),
      digest: scan.digest,
      pinDigest: scan.digestAt?.digest,
    })),
  )
}

// What planning has read of the source once its ledger is in, whichever way it was read.
interface SourceRead<L> {
  readonly source: AgentRun
  readonly ledger: L
  readonly facts: HostFacts
  readonly boundaryHolders: BoundaryHolders
}

interface FoldedSourceRead {
  readonly counts: LedgerCounts
  readonly tornTail: TornTail | null
  readonly folded: FoldedLedger
  readonly digest?: string | undefined
  /** The digest at the fold's limit (an ancestor's pin), when the store gave it. */
  readonly pinDigest?: string | undefined
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
  listed: E.Either<PortFailure, ReadonlyArray<RunListing>>,
  fallback: PlanBoundary,
): PlanBoundary => {
  const first = E.isRight(listed) ? listed.right.find((entry) => 'error' in entry) : undefined
  return first === undefined ? fallback : { sourceRunId: first.runId, sourceRuntimeEventHighWater: null }
}

const newIds = (deps: RuntimeContinuationPlannerDeps): E.Either<ParkFindings, ContinuationIds> => {
  try {
    return E.right(deps.ids.newContinuationIds())
  } catch (thrown) {
    return park('safety_observation_unavailable', { stage: 'newContinuationIds', cause: describeThrown(thrown) })
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
        TE.rightTask<ParkedPlan, E.Either<PortFailure, AgentRun>>(attempt(() => store.readRun(sessionId, runId))),
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
  const readSourceLedger = <L>(source: AgentRun, read: () => TE.TaskEither<PortFailure, L>): Stage<L> => {
    const at = parkedAt({ sourceRunId: source.runId, sourceRuntimeEventHighWater: null })
    return pipe(
      TE.fromEither(at(workspaceIdentityRecorded(source))),
      TE.flatMap(() => TE.rightTask<ParkedPlan, E.Either<PortFailure, L>>(attempt(read))),
      TE.flatMap((loaded) => TE.fromEither(at(sourceLedgerLoaded<L>(source.runId)(loaded)))),
    )
  }

  // Exits 3–9 and the gates, over a source ledger read one way or the other.
  const planRun = <L extends { readonly tornTail: TornTail | null }, P>(
    sessionId: string,
    runId: string,
    mode: {
      readonly readSource: (source: AgentRun, facts: HostFacts) => TE.TaskEither<PortFailure, L>
      readonly rowsOf: (ledger: L) => number
      readonly plan: (input: SourceRead<L>, ids: ContinuationIds) => T.Task<P>
    },
  ): TE.TaskEither<ParkedPlan, P> =>
    pipe(
      observeSource(sessionId, runId),
      TE.flatMap(({ source, facts }) =>
        pipe(
          readSourceLedger(source, () => mode.readSource(source, facts)),
          TE.flatMap((ledger) =>
            pipe(
              loadBoundaryHolders(store, sessionId),
              T.flatMap((boundaryHolders) =>
                pipe(
                  newIds(deps),
                  parkedAt(
                    { sourceRunId: source.runId, sourceRuntimeEventHighWater: mode.rowsOf(ledger) },
                    ledgerWarnings(source, ledger),
                  ),
                  E.match(
                    (parked) => T.of(E.left<ParkedPlan, P>(parked)),
                    (ids) => pipe(mode.plan({ source, ledger, facts, boundaryHolders }, ids), T.map(E.right)),
                  ),
                ),
              ),
            ),
          ),
        ),
      ),
    )

  // Phase 2: the world reads the open operations' decisions need, made once the ledgers are folded.
  // A host that cannot make them parks the plan as an unavailable observation (exit 4's reason).
  const withOperationFacts = <P>(
    sessionId: string,
    source: AgentRun,
    operations: ReturnType<typeof operationsToObserve>,
    plan: (facts: ReadonlyMap<string, OperationFacts> | undefined) => P,
    parked: (findings: ParkFindings) => P,
  ): T.Task<P> => {
    const observeOperations = host.observeOperations?.bind(host)
    if (operations.length === 0 || observeOperations === undefined) return T.of(plan(undefined))
    const asked = operations.map((op) => ({
      operationId: op.operationId,
      toolCallId: op.toolCallId,
      toolName: op.toolName,
      runId: op.runId,
      args: op.args,
      recordedMode: op.recordedMode,
      reconcileBasis: op.reconcileBasis,
    }))
    return pipe(
      attempt(() => observeOperations({ sessionId, sourceRun: source, operations: asked })),
      T.map(
        E.match(
          (cause) =>
            parked([
              makeParkFinding('safety_observation_unavailable', {
                stage: 'observeOperations',
                cause: describeCause(cause),
              }),
            ]),
          (observed: ReadonlyArray<ObservedOperation>) =>
            plan(new Map(observed.map(({ operationId, ...facts }) => [operationId, facts]))),
        ),
      ),
    )
  }

  const wholeLedgers = (sessionId: string) => ({
    readSource: (source: AgentRun) => readWithDigest(store, sessionId, source.runId),
    rowsOf: (ledger: LedgerSnapshot) => ledger.events.length,
    plan: (
      input: SourceRead<LedgerSnapshot & { readonly digest?: string }>,
      ids: ContinuationIds,
    ): T.Task<ContinuationPlan> =>
      pipe(
        loadChain(store, sessionId, input.source, (header, pin, recorded) =>
          pipe(
            store.readLedger(sessionId, header.runId),
            // A link that recorded a digest is checked against the ancestor's rows up to its pin
            // (exit 8a): one more read, for protocol chains only.
            TE.flatMap((ledger) =>
              recorded === undefined || store.foldLedger === undefined
                ? TE.right({ ledger, pinDigest: undefined as string | undefined })
                : pipe(
                    store.foldLedger(sessionId, header.runId, () => undefined, { digestAt: pin }),
                    TE.map((scan) => ({ ledger, pinDigest: scan.digestAt?.digest })),
                  ),
            ),
          ),
        ),
        T.flatMap((found) => {
          const ancestors: AncestorLookup = (runId) =>
            pipe(
              found.get(runId) ?? E.left(notLoaded),
              E.map(({ header, ledger }) => ({ header, ledger: ledger.ledger, pinDigest: ledger.pinDigest })),
            )
          const planning = { ...input, ancestors }
          return withOperationFacts(
            sessionId,
            input.source,
            operationsToObserveIn(planning),
            (operationFacts) =>
              planContinuation(
                {
                  ...planning,
                  ...(operationFacts === undefined ? {} : { operationFacts }),
                  ...(input.ledger.digest === undefined ? {} : { sourceDigest: input.ledger.digest }),
                },
                ids,
              ),
            (findings) =>
              makeParkedPlan(findings, {
                sourceRunId: input.source.runId,
                sourceRuntimeEventHighWater: input.ledger.events.length,
              }),
          )
        }),
      ),
  })

  const foldedLedgers = (sessionId: string) => ({
    readSource: (source: AgentRun, facts: HostFacts) =>
      foldFromStore(store, sessionId, source, sourceFoldOptions(facts)),
    rowsOf: (ledger: FoldedSourceRead) => ledger.counts.rows,
    plan: (input: SourceRead<FoldedSourceRead>, ids: ContinuationIds): T.Task<OutlinedPlan> =>
      pipe(
        loadChain(store, sessionId, input.source, (header, pin) =>
          foldFromStore(store, sessionId, header, { limit: pin }),
        ),
        T.flatMap((found) => {
          const planning: FoldedPlanningInput = {
            source: input.source,
            ledger: { ...input.ledger.counts, tornTail: input.ledger.tornTail, digest: input.ledger.digest },
            folded: input.ledger.folded,
            ancestors: (runId) =>
              pipe(
                found.get(runId) ?? E.left(notLoaded),
                E.map(({ header, ledger }) => ({
                  header,
                  counts: ledger.counts,
                  folded: ledger.folded,
                  pinDigest: ledger.pinDigest,
                })),
              ),
            boundaryHolders: input.boundaryHolders,
            facts: input.facts,
          }
          return withOperationFacts(
            sessionId,
            input.source,
            operationsToObserve(planning),
            (operationFacts): OutlinedPlan =>
              planFolded(operationFacts === undefined ? planning : { ...planning, operationFacts }, ids),
            (findings): OutlinedPlan =>
              makeParkedPlan(findings, {
                sourceRunId: input.source.runId,
                sourceRuntimeEventHighWater: input.ledger.counts.rows,
              }),
          )
        }),
      ),
  })

  const planned =
    <P>(planSession: (sessionId: string, runId: string) => TE.TaskEither<ParkedPlan, P>) =>
    (request: PlanRequest): T.Task<ParkedPlan | P> => {
      const unknownRun: PlanBoundary = { sourceRunId: request.runId ?? null, sourceRuntimeEventHighWater: null }
      return pipe(
        TE.fromEither(parkedAt(unknownRun)(resumeFeatureEnabled(deps.safeBoundaryResumeEnabled))),
        TE.flatMap(() => resolveRunId(request, unknownRun)),
        TE.flatMap((runId) => planSession(request.sessionId, runId)),
        TE.toUnion,
      )
    }

  return {
    plan: planned((sessionId, runId) => planRun(sessionId, runId, wholeLedgers(sessionId))),
    outline: planned((sessionId, runId) => planRun(sessionId, runId, foldedLedgers(sessionId))),
  }
}
