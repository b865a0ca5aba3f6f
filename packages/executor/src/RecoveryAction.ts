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
 * Everything a recovery pass did.
 * @category models
 */
export interface RecoveryReport {
  readonly actions: ReadonlyArray<RecoveryAction>
}

/**
 * What recovery needs from the runtime.
 * @category models
 */
export interface StartupRecoveryDeps extends Ownership {
  readonly stores: StorePorts
  readonly inspector: HostInspector
  readonly clock: () => Date
}

/**
 * One of recovery's three steps (shell runs, claims, runs) over a session. In `survey` mode it only
 * reports and says whether it would write; in `repair` mode it writes and says whether it did.
 * @category models
 */
export type RecoveryStep = (
  sessionId: string,
  actions: Array<RecoveryAction>,
  mode: 'survey' | 'repair',
) => Promise<boolean>
