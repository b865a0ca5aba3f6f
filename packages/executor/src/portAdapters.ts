/**
 * Adapters from the file stores to the ports the planner and the host inspector define. Each port
 * is owned by its consumer; this is the only place that knows both sides.
 */
import * as TE from 'fp-ts/lib/TaskEither.js'
import { pipe } from 'fp-ts/lib/function.js'
import type { AgentRun } from '@maka/events'
import {
  type HostInspector,
  type InspectError,
  type SessionStatePort,
  observeReattachOperation,
} from '@maka/host-inspector'
import type { HostFacts, HostFactsPort, PlannerStorePort, UnavailableToolServer } from '@maka/planner'
import type { StoreError, StorePorts } from '@maka/stores'
import { type Tool, recoveryModesOf, shellRunDirOf, toolCatalogOf } from '@maka/tools'
import { type ReattachObserver, makeObserveOperations } from './observeOperations.js'

// A run folder without run.json is a create that never completed (the header is linked last): that
// run never existed (decisions #10). Any other unreadable header stays listed, so that no consumer
// can mistake a broken header for no run at all.
const listCreatedRuns = (stores: StorePorts, sessionId: string) =>
  pipe(
    stores.runs.list(sessionId),
    TE.map((entries) => entries.filter((entry) => !('error' in entry) || entry.error._tag !== 'NotFound')),
  )

/**
 * The planner's store port over the file stores.
 * @category constructors
 */
export const plannerStorePort = (stores: StorePorts): PlannerStorePort => ({
  listRuns: (sessionId) => listCreatedRuns(stores, sessionId),
  readRun: (sessionId, runId) => stores.runs.read(sessionId, runId),
  readLedger: (sessionId, runId) => stores.events.read(sessionId, runId),
  foldLedger: (sessionId, runId, onEvent, options) => stores.events.fold(sessionId, runId, onEvent, options),
  listClaims: (sessionId) => stores.claims.list(sessionId),
})

/**
 * Observes host facts for a session, measured against the session's recorded cwd.
 * @category constructors
 */
export const observeHostFacts =
  (stores: StorePorts, inspector: HostInspector, journal?: HostJournal) =>
  (sessionId: string, sourceRun: AgentRun): TE.TaskEither<StoreError | InspectError, HostFacts> =>
    pipe(
      stores.sessions.read(sessionId),
      TE.flatMap((session) =>
        inspector.inspect({
          sessionId,
          sessionCwd: session.cwd,
          excludeRunIds: [sourceRun.runId],
          sourceRunId: sourceRun.runId,
        }),
      ),
      TE.map((facts) => (journal === undefined ? facts : withJournalFacts(facts, journal))),
    )

// The catalog facts are added only when there are some, so a host without MCP servers observes
// exactly what it observed before they existed.
const withJournalFacts = (facts: HostFacts, journal: HostJournal): HostFacts => {
  const catalog = toolCatalogOf(journal.tools)
  const down = journal.unavailableToolServers ?? []
  return {
    ...facts,
    toolJournal: journal.protocol,
    toolRecoveryModes: recoveryModesOf(journal.tools),
    ...(Object.keys(catalog).length === 0 ? {} : { toolCatalog: catalog }),
    ...(down.length === 0 ? {} : { unavailableToolServers: down }),
  }
}

/**
 * What this host says about the tool journal (Phase 2): whether a run started here writes it, and
 * the tools whose recovery modes and probes decide open operations.
 * @category models
 */
export interface HostJournal {
  readonly protocol: boolean
  readonly tools: ReadonlyArray<Tool>
  readonly reattach?: ReattachObserver
  /** Configured tool servers that did not start (their tools are absent), for the plan's detail. */
  readonly unavailableToolServers?: ReadonlyArray<UnavailableToolServer>
}

/**
 * The planner's host-facts port over the stores and the inspector.
 * @category constructors
 */
export const plannerHostPort = (
  stores: StorePorts,
  inspector: HostInspector,
  journal?: HostJournal,
): HostFactsPort => ({
  ownerLiveness: (sessionId) =>
    pipe(
      stores.ownerLocks.read(sessionId),
      TE.flatMap((lock) => TE.fromTask(() => inspector.ownerLiveness(lock))),
    ),
  observe: ({ sessionId, sourceRun }) => observeHostFacts(stores, inspector, journal)(sessionId, sourceRun),
  ...(journal === undefined ? {} : { observeOperations: makeObserveOperations(journal.tools, journal.reattach) }),
})

/**
 * The host inspector's session-state port over the file stores.
 * @category constructors
 */
export const sessionStatePort = (stores: StorePorts): SessionStatePort => ({
  listShellRuns: (sessionId) =>
    pipe(
      stores.shellRuns.list(sessionId),
      TE.map((entries) => entries.map((entry) => ('shellRun' in entry ? entry.shellRun : entry))),
    ),
  // A never-created run cannot be an unsettled operation; a broken header fails the observation closed.
  listRuns: (sessionId) => listCreatedRuns(stores, sessionId),
})

/**
 * How this host observes a `reattach` command after a crash: its shell-run record and the files its
 * supervisor writes under `dataDir`. An observation that fails is thrown: the planner turns it into
 * `safety_observation_unavailable` — a command that might still run is never read as `lost`.
 * @category constructors
 */
export const reattachObserver =
  (stores: StorePorts, dataDir: string): ReattachObserver =>
  async ({ sessionId, operationId }) => {
    const observed = await observeReattachOperation(sessionStatePort(stores), sessionId, operationId, (shellRunId) =>
      shellRunDirOf(dataDir, sessionId, shellRunId),
    )()
    if (observed._tag === 'Left') throw new Error(`reattach observation: ${observed.left._tag}`)
    return observed.right
  }
