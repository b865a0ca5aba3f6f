/**
 * The background shell-run port: one record per shell run of a session. Each write replaces the
 * whole record atomically and durably, because recovery decides from these records whether a
 * background operation is still running.
 */
import type { ShellRun, ShellRunId } from '@maka/events'
import type * as TE from 'fp-ts/lib/TaskEither.js'
import type { StoreError } from './StoreError.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * One shell-run file: its record, or why it could not be read (never dropped).
 * @category models
 */
export type ShellRunListing =
  | { readonly shellRunId: ShellRunId; readonly shellRun: ShellRun }
  | { readonly shellRunId: ShellRunId; readonly error: StoreError }

/**
 * The background shell runs of every session in a data dir.
 * @category models
 */
export interface ShellRunStore {
  /** Writes (creates or replaces) one shell-run record, atomically and durably. */
  write(run: ShellRun): TE.TaskEither<StoreError, void>
  /** Lists every `<shellRunId>.json` of a session, sorted by id; none when the folder is missing. */
  list(sessionId: string): TE.TaskEither<StoreError, ReadonlyArray<ShellRunListing>>
}
