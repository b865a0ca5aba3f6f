/**
 * Recovery of shell runs: a record still `running` whose process is proven gone is marked failed.
 */
import * as E from 'fp-ts/lib/Either.js'
import { makeIsoTimestampUnsafe } from '@maka/events'
import { isRecordedProcessAlive } from '@maka/host-inspector'
import type { PendingRepair, RecoveryStep, StartupRecoveryDeps } from './RecoveryAction.js'

/**
 * The shell-run step of recovery.
 * @category constructors
 */
export const makeRecoverShellRuns =
  ({ stores, clock }: Pick<StartupRecoveryDeps, 'stores' | 'clock'>): RecoveryStep =>
  async (sessionId, actions, mode) => {
    const listed = await stores.shellRuns.list(sessionId)()
    if (E.isLeft(listed)) {
      actions.push({
        sessionId,
        action: 'left_untouched',
        detail: `shell runs unreadable: ${listed.left._tag}`,
        error: listed.left,
      })
      return []
    }
    const needed: Array<PendingRepair> = []
    for (const listing of listed.right) {
      if (!('shellRun' in listing)) {
        actions.push({ sessionId, shellRunId: listing.shellRunId, action: 'left_untouched', detail: 'unreadable' })
        continue
      }
      const entry = listing.shellRun
      if (entry.status !== 'running') continue
      // Only a process proven gone is an orphan; a live pid without a recorded identity still runs.
      if (await isRecordedProcessAlive(entry, 'live_pid')) continue
      needed.push({ kind: 'fail_shell_run', shellRunId: entry.shellRunId })
      if (mode === 'survey') continue
      const endedAt = makeIsoTimestampUnsafe(clock().toISOString())
      const written = await stores.shellRuns.write({ ...entry, status: 'failed', endedAt })()
      actions.push({
        sessionId,
        shellRunId: entry.shellRunId,
        action: E.isRight(written) ? 'shell_run_orphaned' : 'left_untouched',
        detail: E.isRight(written) ? 'its process is gone' : `could not be marked failed: ${written.left._tag}`,
        ...(E.isLeft(written) ? { error: written.left } : {}),
      })
    }
    return needed
  }
