/**
 * Recovery of shell runs: a record still `running` whose process is proven gone is marked failed.
 *
 * A supervised foreground run (its record names an `operationId`) is judged by its supervisor: when
 * the supervisor wrote `exit`, the record takes its status and exit code from it (exit code 0 →
 * `completed`, a signal → `killed`, else `failed`); without `exit`, it becomes `failed` once the
 * supervisor is proven gone. Its record's status only tells people and gate 8 what happened: the
 * operation itself is settled from the files, by the plan.
 */
import * as E from 'fp-ts/lib/Either.js'
import { makeIsoTimestampUnsafe, type ShellRun } from '@maka/events'
import { isRecordedProcessAlive } from '@maka/host-inspector'
import { readShellRunExit, shellRunStatusOf } from '@maka/tools'
import type { PendingRepair, RecoveryStep, StartupRecoveryDeps } from './RecoveryAction.js'

/**
 * What the shell-run step needs: the stores and the clock, and where a supervised run's files are
 * (`shellRunDirOf(dataDir, sessionId, shellRunId)`). Without `shellRunDir`, a supervised run is judged
 * by its supervisor alone, as a background run is by its process.
 * @category models
 */
export type RecoverShellRunsDeps = Pick<StartupRecoveryDeps, 'stores' | 'clock'> & {
  readonly shellRunDir?: (sessionId: string, shellRunId: string) => string
}

// How a `running` record ends, or null while its process (or supervisor) may still run.
type Ending = { readonly status: ShellRun['status']; readonly exitCode?: number | null; readonly detail: string }

const endingOf = async (entry: ShellRun, deps: RecoverShellRunsDeps): Promise<Ending | null> => {
  // Looked at before the folder: a supervisor writes `exit` before it ends, so "gone, then no exit"
  // can never be a run that ended between the two looks.
  const alive = await isRecordedProcessAlive(entry, 'live_pid')
  if (entry.operationId !== undefined && deps.shellRunDir !== undefined) {
    const exit = await readShellRunExit(deps.shellRunDir(entry.sessionId, entry.shellRunId))()
    if (E.isRight(exit) && exit.right !== null) {
      const status = shellRunStatusOf(exit.right)
      return { status, exitCode: exit.right.exitCode, detail: `its supervisor reported its end (${status})` }
    }
  }
  // Only a process proven gone is an orphan; a live pid without a recorded identity still runs.
  if (alive) return null
  return {
    status: 'failed',
    detail: entry.operationId === undefined ? 'its process is gone' : 'its supervisor is gone and reported no end',
  }
}

/**
 * The shell-run step of recovery.
 * @category constructors
 */
export const makeRecoverShellRuns =
  (deps: RecoverShellRunsDeps): RecoveryStep =>
  async (sessionId, actions, mode) => {
    const { stores, clock } = deps
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
      const ending = await endingOf(entry, deps)
      if (ending === null) continue
      needed.push({ kind: 'fail_shell_run', shellRunId: entry.shellRunId })
      if (mode === 'survey') continue
      const endedAt = makeIsoTimestampUnsafe(clock().toISOString())
      const written = await stores.shellRuns.write({
        ...entry,
        status: ending.status,
        endedAt,
        ...(ending.exitCode === undefined ? {} : { exitCode: ending.exitCode }),
      })()
      actions.push({
        sessionId,
        shellRunId: entry.shellRunId,
        action: E.isRight(written) ? 'shell_run_orphaned' : 'left_untouched',
        detail: E.isRight(written) ? ending.detail : `could not be marked ${ending.status}: ${written.left._tag}`,
        ...(E.isLeft(written) ? { error: written.left } : {}),
      })
    }
    return needed
  }
