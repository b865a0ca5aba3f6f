/**
 * The early exits 1–9 of docs/contract.md §2, and maka's exit 1a, as small validators. They run as a
 * short-circuiting pipeline (Either's monad): each needs the previous one to have passed, and the
 * first failure is the plan's only reason. Exit 7's chain walk lives in `walkAncestors.ts`.
 */
import type { AgentRun } from '@maka/events'
import type { LedgerSnapshot, RunListing } from '@maka/stores'
import * as E from 'fp-ts/lib/Either.js'
import { pipe } from 'fp-ts/lib/function.js'
import type { HostFacts } from '../HostFacts.js'
import { type Gate, type ParkFindings, describeCause, park } from '../ParkFinding.js'
import type { OwnerLiveness } from '../PlannerPorts.js'
import type { PortFailure } from '../PortFailure.js'
import type { BoundaryHolders, RecoveryRefusal } from '../PlanningInput.js'
import { latestTopLevelRun } from '../runOrder.js'
import { boundaryHolderOf } from '../boundaryHolder.js'
import type { FoldedLedger } from './foldLedger.js'
import { type LedgerCounts, foreignRowsOf, ledgerReadable } from './ledgerChecks.js'
import type { ChainOutline } from '../walkAncestors.js'

// -------------------------------------------------------------------------------------
// internals
// -------------------------------------------------------------------------------------

// -------------------------------------------------------------------------------------
// gates
// -------------------------------------------------------------------------------------

/**
 * Exit 1: the safe-boundary resume flag must be on.
 * @category gates
 */
export const resumeFeatureEnabled: Gate<boolean, void> = (enabled) =>
  enabled ? E.right(undefined) : park('resume_feature_disabled', { flag: 'MAKA_RUNTIME_SAFE_BOUNDARY_RESUME' })

/**
 * Exit 1a: startup recovery must have been able to write what the session needs. A refusal means the
 * session is not in a state planning can trust (a run may still read `running`, a claim may have no
 * target), and nothing would make it so until the data directory is fixed.
 * @category gates
 */
export const recoveryWritten: Gate<RecoveryRefusal | null, void> = (refusal) =>
  refusal === null ? E.right(undefined) : recoveryRefused(refusal)

/**
 * Exit 1a for a refusal the host already holds: it always parks.
 * @category gates
 */
export const recoveryRefused = (refusal: RecoveryRefusal): E.Either<ParkFindings, never> =>
  park('recovery_unwritable', { operation: refusal.operation, code: refusal.code, path: refusal.path })

/**
 * Exit 2 over a listing with no top-level run (none at all, or child runs only): nothing to resume.
 * @category gates
 */
export const noTopLevelRun: E.Either<ParkFindings, never> = park('resume_candidate_missing', {
  reason: 'no_top_level_run',
})

/**
 * Exit 2: the "latest" entry's candidate — the newest top-level run (normal or continuation, not a
 * child), unless it completed. A listed run whose header cannot be read cannot be ordered, so it
 * might be the latest: the entry parks with `source_run_unreadable` naming it, instead of silently
 * resuming (or declaring nothing to resume) behind it. The store port lists no folder that never got
 * its header (decisions #10), so every error entry here is a header that exists and is broken.
 * @category gates
 */
export const latestCandidate: Gate<ReadonlyArray<RunListing>, string> = (listing) => {
  const unreadable = listing.flatMap((entry) => ('error' in entry ? [entry] : []))
  const first = unreadable[0]
  if (first !== undefined) {
    return park('source_run_unreadable', {
      reason: 'listed_run_unreadable',
      runId: first.runId,
      runIds: unreadable.map((entry) => entry.runId),
      cause: describeCause(first.error),
    })
  }
  const latest = latestTopLevelRun(listing.flatMap((entry) => ('header' in entry ? [entry.header] : [])))
  if (latest === undefined) return noTopLevelRun
  if (latest.status === 'completed') {
    return park('resume_candidate_missing', { reason: 'latest_run_completed', runId: latest.runId })
  }
  return E.right(latest.runId)
}

/**
 * Exit 2 when the session's runs cannot be listed: there is no candidate to name.
 * @category gates
 */
export const runsListed: Gate<E.Either<PortFailure, ReadonlyArray<RunListing>>, ReadonlyArray<RunListing>> = (
  listed,
) =>
  E.isLeft(listed)
    ? park('resume_candidate_missing', { reason: 'run_listing_failed', cause: describeCause(listed.left) })
    : listed

/**
 * Exit 3: no other live process may own the session. A liveness check that failed could not rule
 * an owner out, so it parks as an unavailable observation.
 * @category gates
 */
export const sessionOwnerNotAlive: Gate<E.Either<PortFailure, OwnerLiveness>, void> = (liveness) => {
  if (E.isLeft(liveness)) {
    return park('safety_observation_unavailable', { stage: 'ownerLiveness', cause: describeCause(liveness.left) })
  }
  return liveness.right === 'alive' ? park('session_owner_alive', {}) : E.right(undefined)
}

/**
 * Exit 4: the host must have produced its facts.
 * @category gates
 */
export const hostFactsObserved: Gate<E.Either<PortFailure, HostFacts>, HostFacts> = (observed) =>
  E.isLeft(observed)
    ? park('safety_observation_unavailable', { stage: 'observe', cause: describeCause(observed.left) })
    : observed

/**
 * Exit 5: the source `run.json` must be readable and be the run that was asked for.
 * @category gates
 */
export const sourceRunReadable =
  (expected: { readonly sessionId: string; readonly runId: string }): Gate<E.Either<PortFailure, AgentRun>, AgentRun> =>
  (read) => {
    if (E.isLeft(read)) {
      return park('source_run_unreadable', { runId: expected.runId, cause: describeCause(read.left) })
    }
    const header = read.right
    if (header.sessionId !== expected.sessionId || header.runId !== expected.runId) {
      return park('source_run_unreadable', {
        runId: expected.runId,
        cause: 'the header names another session or run',
        headerSessionId: header.sessionId,
        headerRunId: header.runId,
      })
    }
    return E.right(header)
  }

/**
 * Exit 6: the source header must record its workspace identity.
 * @category gates
 */
export const workspaceIdentityRecorded: Gate<AgentRun, string> = (source) =>
  source.workspaceIdentity === undefined
    ? park('workspace_identity_missing', { runId: source.runId })
    : E.right(source.workspaceIdentity)

/**
 * Exit 7 when the store could not read the source ledger at all.
 * @category gates
 */
export const sourceLedgerLoaded =
  <L = LedgerSnapshot>(runId: string): Gate<E.Either<PortFailure, L>, L> =>
  (read) =>
    E.isLeft(read)
      ? park('runtime_ledger_unreadable', { reason: 'ledger_read_failed', runId, cause: describeCause(read.left) })
      : read

/**
 * Exit 7 for the source ledger itself: no unreadable row, and a high-water equal to its row count.
 * @category gates
 */
export const sourceLedgerReadable =
  (runId: string): Gate<LedgerCounts, LedgerCounts> =>
  (ledger) =>
    pipe(
      ledgerReadable(runId, ledger, 'row_unreadable'),
      E.map(() => ledger),
    )

/**
 * Exit 8: no row of the source ledger or of the chain belongs to another session or run.
 * @category gates
 */
export const ledgerRowsOwned: Gate<
  {
    readonly source: AgentRun
    readonly ledger: Pick<LedgerCounts, 'problem'>
    readonly folded: Pick<FoldedLedger, 'foreignRow'>
    readonly chain: Pick<ChainOutline, 'foreignRows'>
  },
  void
> = ({ source, ledger, folded, chain }) => {
  const rows = [...foreignRowsOf(source, ledger, folded), ...chain.foreignRows]
  const first = rows[0]
  return first === undefined ? E.right(undefined) : park('runtime_identity_mismatch', { ...first, rows })
}

/**
 * Exit 9: no run and no claim may already hold this (source run, high-water) boundary. Runs or
 * claims that could not be listed cannot rule a holder out, so that parks as an unavailable
 * observation.
 * @category gates
 */
export const boundaryUnclaimed: Gate<
  { readonly source: AgentRun; readonly highWater: number; readonly holders: BoundaryHolders | undefined },
  void
> = ({ source, highWater, holders }) => {
  if (holders === undefined) return E.right(undefined)
  if ('unavailable' in holders) {
    return park('safety_observation_unavailable', { stage: 'boundaryHolders', cause: holders.unavailable })
  }
  const holder = boundaryHolderOf(holders.runs, holders.claims, { sourceRunId: source.runId, highWater })
  return holder === undefined
    ? E.right(undefined)
    : park('continuation_already_exists', { existingRunId: holder.runId, heldBy: holder.heldBy, highWater })
}

/**
 * Exit 8a (Phase 2): every link of the chain that recorded its source's prefix digest still finds
 * it — the ancestor's rows up to the pin hash to what the link recorded. A link without a digest
 * (legacy, or a store that cannot hash) is not checked.
 * @category gates
 */
export const chainDigestsHold: Gate<Pick<ChainOutline, 'digestMismatches'>, void> = ({ digestMismatches }) => {
  const first = digestMismatches[0]
  return first === undefined
    ? E.right(undefined)
    : park('source_prefix_digest_mismatch', { ...first, links: digestMismatches })
}
