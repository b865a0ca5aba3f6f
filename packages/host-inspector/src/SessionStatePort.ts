/**
 * The ports the inspector reads through. `stores` owns the files; the inspector only needs the
 * session's shell runs and run headers as decoded data, with unreadable entries reported as data
 * (not dropped) so that one corrupt file makes the facts unobservable instead of silently settled.
 */
import type * as TE from 'fp-ts/lib/TaskEither.js'
import type { ShellRun } from '@maka/events'
import type { WorkspaceCheckpoint } from '@maka/planner'
import type { RunListing, StoreError } from '@maka/stores'
import type { InspectError } from './InspectError.js'

/**
 * One entry of a session's shell-run listing: a decoded record, or the failure to read one.
 * @category models
 */
export type ShellRunEntry = ShellRun | { readonly shellRunId?: string; readonly error: unknown }

/**
 * Read access to a session's durable state; `stores` satisfies it (`shellRuns.list`, `runs.list`).
 * @category models
 */
export interface SessionStatePort {
  /** Every shell-run record of the session; an empty list when it has none. */
  listShellRuns(sessionId: string): TE.TaskEither<StoreError, ReadonlyArray<ShellRunEntry>>
  /** Every run of the session with its header; an empty list when it has none. */
  listRuns(sessionId: string): TE.TaskEither<StoreError, ReadonlyArray<RunListing>>
}

/**
 * What a checkpoint provider is asked: the session and, when known, the run being resumed.
 * @category models
 */
export interface CheckpointQuery {
  readonly sessionId: string
  readonly runId?: string
}

/**
 * A source of workspace checkpoints; `null` means the provider has none for this session.
 * @category models
 */
export interface CheckpointProvider {
  checkpointFor(input: CheckpointQuery): TE.TaskEither<InspectError, WorkspaceCheckpoint | null>
}
