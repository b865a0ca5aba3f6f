/**
 * What startup recovery reports, and what it needs from the runtime.
 */
import type { HostInspector } from '@maka/host-inspector'
import type { StorePorts, StoreError } from '@maka/stores'
import type { Ownership } from './ownership.js'

/**
 * One repair (or refusal to repair) made by startup recovery.
 * @category models
 */
export interface RecoveryAction {
  readonly sessionId: string
  readonly runId?: string
  readonly shellRunId?: string
  readonly action:
    | 'shell_run_orphaned'
    | 'continuation_abandoned'
    | 'header_repaired'
    | 'recovered_terminal'
    | 'missing_terminal_event'
    | 'left_untouched'
    | 'session_skipped'
  readonly detail: string
  /** The store failure behind a skip or an untouched entry; hosts report an `IoFailed` as a failed write. */
  readonly error?: StoreError
}

/**
 * A repair the survey found a session needs, by identities only.
 * @category models
 */
export type PendingRepair =
  /** A non-terminal run header: recovery closes the run (its terminal event, else `app_restarted`). */
  | { readonly kind: 'close_run'; readonly runId: string }
  /** A terminal header whose ledger's last row does not show its ending: read whole, maybe repaired. */
  | { readonly kind: 'check_run_ending'; readonly runId: string }
  /** A shell run still `running` whose process is gone: marked `failed`. */
  | { readonly kind: 'fail_shell_run'; readonly shellRunId: string }
  /** A claim whose target header never appeared: closed as `continuation_abandoned_before_start`. */
  | { readonly kind: 'close_abandoned_claim'; readonly runId: string }

/**
 * A session the data directory did not let recovery repair: a read or write refused by its
 * permissions or its layout (see `isDataDirRefusal`).
 * @category models
 */
export interface UnwritableSession {
  readonly sessionId: string
  /** The first refusal met. */
  readonly error: StoreError
  /**
   * Where it was met: `survey` (a read before any lock) and `lock` (taking `owner.lock`) mean nothing
   * was written to the session; `repair` means the lock was taken and a repair write was refused.
   */
  readonly stage: 'survey' | 'lock' | 'repair'
  /** What the survey found to repair (with stage `repair`, some of it may have been written). */
  readonly pending: ReadonlyArray<PendingRepair>
}

/**
 * Everything a recovery pass did.
 * @category models
 */
export interface RecoveryReport {
  readonly actions: ReadonlyArray<RecoveryAction>
  /** The sessions whose repair the data directory refused, in session order. */
  readonly unwritable: ReadonlyArray<UnwritableSession>
}

/**
 * What recovery needs from the runtime.
 * @category models
 */
export interface StartupRecoveryDeps extends Ownership {
  readonly stores: StorePorts
  readonly inspector: HostInspector
  readonly clock: () => Date
  /** Where a supervised shell run's files are (Phase 2), so its record is closed from its `exit` file. */
  readonly shellRunDir?: (sessionId: string, shellRunId: string) => string
}

/**
 * One of recovery's three steps (shell runs, claims, runs) over a session. In `survey` mode it only
 * reports and returns the repairs it would make; in `repair` mode it makes them and returns the
 * repairs it found needed.
 * @category models
 */
export type RecoveryStep = (
  sessionId: string,
  actions: Array<RecoveryAction>,
  mode: 'survey' | 'repair',
) => Promise<ReadonlyArray<PendingRepair>>

// -------------------------------------------------------------------------------------
// guards
// -------------------------------------------------------------------------------------

// What the data directory itself refuses: its permissions (a read-only mount, another user's files)
// or its layout (a link, a file where a folder belongs, a folder where a file belongs). Retrying
// changes none of them, unlike a full disk or an I/O error.
const REFUSING_ERRNOS: ReadonlySet<string> = new Set(['EROFS', 'EACCES', 'EPERM', 'ENOTDIR', 'EISDIR', 'ELOOP'])

/**
 * True when a store error is the data directory refusing access by its permissions or its layout.
 * @category guards
 */
export const isDataDirRefusal = (error: StoreError): boolean =>
  error._tag === 'SymlinkInDataDir' || (error._tag === 'IoFailed' && REFUSING_ERRNOS.has(error.code))
