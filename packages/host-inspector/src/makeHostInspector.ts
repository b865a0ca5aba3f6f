/**
 * The host inspector: one call that observes every fact the planner reads about the host (cwd,
 * workspace identity, unsettled operations, tool catalog, checkpoint) and returns them as a plain
 * `HostFacts` value. The plan snapshots these facts and execution calls `inspect` again to compare,
 * so any fact that cannot be observed fails the whole call: a partial observation must never pass.
 */
import { hostname as osHostname } from 'node:os'
import { pipe } from 'fp-ts/lib/function.js'
import * as TE from 'fp-ts/lib/TaskEither.js'
import { isSafeId, type OwnerLock } from '@maka/events'
import type { HostFacts, WorkspaceCheckpoint } from '@maka/planner'
import { observeWorkspace } from './canonicalCwd.js'
import {
  checkpointUnavailable,
  invalidSessionId,
  isInspectError,
  toolCatalogUnavailable,
  type InspectError,
} from './InspectError.js'
import { ownerLockLiveness, type OwnerLockLiveness } from './ownerLockLiveness.js'
import type { CheckpointProvider, SessionStatePort } from './SessionStatePort.js'
import { unsettledOperationsOf } from './unsettledOperations.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * What the inspector reads through: the session's durable state, the host's tools and, optionally, checkpoints.
 * @category models
 */
export interface HostInspectorDeps {
  readonly port: SessionStatePort
  /** The names of the tools the host registers now; read on every `inspect`. */
  readonly toolNames: () => ReadonlyArray<string>
  readonly checkpointProvider?: CheckpointProvider
  /** This host's name, which owner locks are compared against; defaults to `os.hostname()`. */
  readonly hostname?: string
}

/**
 * One observation request.
 * @category models
 */
export interface InspectInput {
  readonly sessionId: string
  /** The cwd recorded for the session (absolute). */
  readonly sessionCwd: string
  /** Runs to leave out of the unsettled-run check, typically the source run being resumed. */
  readonly excludeRunIds?: ReadonlyArray<string>
  /**
   * Operations open in the planned chain: a supervised shell run naming one of them is left out of the
   * unsettled operations (the `reattach` observation judges it). Absent: none is left out.
   */
  readonly openOperationIds?: ReadonlyArray<string>
  /** The run whose checkpoint is wanted; passed to the checkpoint provider as `runId`. */
  readonly sourceRunId?: string
  /** Copied into the facts unchanged. */
  readonly expectedRuntimeEventHighWater?: number
}

/**
 * Observes host facts for one session.
 * @category models
 */
export interface HostInspector {
  inspect(input: InspectInput): TE.TaskEither<InspectError, HostFacts>
  /** {@link ownerLockLiveness} against this inspector's hostname. */
  ownerLiveness(lock: OwnerLock | null): Promise<OwnerLockLiveness>
}

// -------------------------------------------------------------------------------------
// internals
// -------------------------------------------------------------------------------------

// Code-unit order, not localeCompare: the snapshot must compare equal on every host and locale.
const sortedUnique = (names: ReadonlyArray<string>): ReadonlyArray<string> => [...new Set(names)].sort()

const readToolNames = (toolNames: () => ReadonlyArray<string>): TE.TaskEither<InspectError, ReadonlyArray<string>> =>
  pipe(
    TE.tryCatch(
      () => Promise.resolve(toolNames()),
      (cause): InspectError => toolCatalogUnavailable(cause),
    ),
    TE.flatMap((names) =>
      Array.isArray(names) && names.every((n) => typeof n === 'string')
        ? TE.right(sortedUnique(names))
        : TE.left<InspectError>(toolCatalogUnavailable('the tool catalog is not a list of names')),
    ),
  )

const isWellFormedCheckpoint = (c: WorkspaceCheckpoint): boolean =>
  typeof c === 'object' &&
  typeof c.restored === 'boolean' &&
  Number.isSafeInteger(c.runtimeEventHighWater) &&
  c.runtimeEventHighWater >= 0 &&
  (c.ref === undefined || typeof c.ref === 'string')

const readCheckpoint = (
  provider: CheckpointProvider | undefined,
  sessionId: string,
  runId: string | undefined,
): TE.TaskEither<InspectError, WorkspaceCheckpoint | null> => {
  if (provider === undefined) return TE.right(null)
  const query = runId === undefined ? { sessionId } : { sessionId, runId }
  const unavailable = (cause: unknown): InspectError => checkpointUnavailable(sessionId, cause, runId)
  return pipe(
    TE.tryCatch(() => provider.checkpointFor(query)(), unavailable),
    TE.flatMap((result) =>
      result._tag === 'Left'
        ? TE.left(isInspectError(result.left) ? result.left : unavailable(result.left))
        : TE.right(result.right),
    ),
    TE.flatMap((checkpoint) => {
      if (checkpoint === null) return TE.right(null)
      if (!isWellFormedCheckpoint(checkpoint))
        return TE.left(unavailable('the provider returned a malformed checkpoint'))
      // Copied field by field so nothing the provider attached rides along into the plan's snapshot.
      return TE.right<InspectError, WorkspaceCheckpoint>({
        ...(checkpoint.ref === undefined ? {} : { ref: checkpoint.ref }),
        restored: checkpoint.restored,
        runtimeEventHighWater: checkpoint.runtimeEventHighWater,
      })
    }),
  )
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Creates a host inspector over a session-state port, the host's tool catalog and an optional checkpoint provider.
 * @category constructors
 */
export const makeHostInspector = (deps: HostInspectorDeps): HostInspector => ({
  ownerLiveness: (lock) => ownerLockLiveness(lock, deps.hostname ?? osHostname()),
  inspect: (input) => {
    // Checked before the port is asked anything, so an unsafe id never becomes a path.
    if (!isSafeId(input.sessionId)) return TE.left(invalidSessionId(input.sessionId))
    return pipe(
      TE.Do,
      TE.apS('workspace', observeWorkspace(input.sessionCwd)),
      TE.apS(
        'operations',
        unsettledOperationsOf(deps.port, input.sessionId, input.excludeRunIds ?? [], input.openOperationIds ?? []),
      ),
      TE.apS('tools', readToolNames(deps.toolNames)),
      TE.apS('checkpoint', readCheckpoint(deps.checkpointProvider, input.sessionId, input.sourceRunId)),
      TE.map(({ workspace, operations, tools, checkpoint }): HostFacts => ({
        currentCwd: workspace.canonicalPath,
        currentWorkspaceIdentity: workspace.identity,
        backgroundOperationsSettled: operations.length === 0,
        unsettledOperations: operations,
        availableToolNames: tools,
        ...(checkpoint === null ? {} : { workspaceCheckpoint: checkpoint }),
        ...(input.expectedRuntimeEventHighWater === undefined
          ? {}
          : { expectedRuntimeEventHighWater: input.expectedRuntimeEventHighWater }),
      })),
    )
  },
})
