/**
 * Recovery of runs: each run the decider (`decideRunRecovery`) finds inconsistent gets a durable
 * terminal row first, then its header. A finished run whose ledger ends consistently is told from
 * the ledger's last row alone and never read whole.
 */
import * as E from 'fp-ts/lib/Either.js'
import {
  type AgentRun,
  type RuntimeEvent,
  makeIsoTimestampUnsafe,
  isTerminalEvent,
  isTerminalRunStatus,
  runStatusFromTerminalStatus,
} from '@maka/events'
import type { StoreError } from '@maka/stores'
import { decideRunRecovery } from './decideRecovery.js'
import {
  type PendingRepair,
  type RecoveryAction,
  type RecoveryStep,
  type StartupRecoveryDeps,
  isDataDirRefusal,
} from './RecoveryAction.js'
import { rowStamp } from './runWriter.js'

const run = async <A, L>(task: () => Promise<E.Either<L, A>>): Promise<E.Either<L, A>> => task()

/**
 * The run step of recovery.
 * @category constructors
 */
export const makeRecoverRuns = ({ stores, clock }: Pick<StartupRecoveryDeps, 'stores' | 'clock'>): RecoveryStep => {
  const nowIso = () => makeIsoTimestampUnsafe(clock().toISOString())

  // A terminal header whose ledger's last row is the matching terminal event needs no repair. The
  // terminal invariant makes that the normal state of a finished run, and it is told from the tail
  // alone; anything else (no such row, another status, a tail that cannot tell) needs the full read.
  const endsConsistently = (header: AgentRun, last: E.Either<StoreError, RuntimeEvent | null>): boolean =>
    isTerminalRunStatus(header.status) &&
    E.isRight(last) &&
    last.right !== null &&
    isTerminalEvent(last.right) &&
    runStatusFromTerminalStatus(last.right.status) === header.status

  const recoverRuns: RecoveryStep = async (
    sessionId: string,
    actions: Array<RecoveryAction>,
    mode: 'survey' | 'repair',
  ): Promise<ReadonlyArray<PendingRepair>> => {
    const runs = await run(stores.runs.list(sessionId))
    if (E.isLeft(runs)) {
      actions.push({
        sessionId,
        action: 'left_untouched',
        detail: `runs unreadable: ${runs.left._tag}`,
        error: runs.left,
      })
      return []
    }
    const needed: Array<PendingRepair> = []
    for (const entry of runs.right) {
      if (!('header' in entry)) {
        const detail =
          entry.error._tag === 'NotFound'
            ? 'run.json was never created (a run create that did not complete); the folder is kept'
            : 'run.json is unreadable'
        actions.push({ sessionId, runId: entry.runId, action: 'left_untouched', detail })
        continue
      }
      const header = entry.header
      const terminal = isTerminalRunStatus(header.status)
      // The survey reads the tail of a run it would close too: a ledger the data dir refuses to show
      // (a link, a folder) is met before the lock is taken, not by the repair's full read under it.
      const last = terminal || mode === 'survey' ? await run(stores.events.readLastRow(sessionId, header.runId)) : null
      if (last !== null && endsConsistently(header, last)) continue
      // The survey reads no ledger whole: a run that may need a write is enough to take the lock.
      needed.push({ kind: terminal ? 'check_run_ending' : 'close_run', runId: header.runId })
      if (mode === 'survey') {
        if (last !== null && E.isLeft(last) && isDataDirRefusal(last.left)) {
          actions.push({
            sessionId,
            runId: header.runId,
            action: 'left_untouched',
            detail: `ledger: ${last.left._tag}`,
            error: last.left,
          })
        }
        continue
      }
      await recoverRun(sessionId, header, actions)
    }
    return needed
  }

  const recoverRun = async (sessionId: string, header: AgentRun, actions: Array<RecoveryAction>): Promise<void> => {
    const ledger = await run(stores.events.read(sessionId, header.runId))
    if (E.isLeft(ledger)) {
      actions.push({
        sessionId,
        runId: header.runId,
        action: 'left_untouched',
        detail: `ledger: ${ledger.left._tag}`,
        error: ledger.left,
      })
      return
    }
    const decision = decideRunRecovery(header, ledger.right, {
      now: nowIso(),
      ...rowStamp(header.runId, ledger.right.highWater + 1, clock().getTime()),
    })
    switch (decision._tag) {
      case 'Consistent':
        return
      case 'LeaveUntouched':
        actions.push({ sessionId, runId: header.runId, action: 'left_untouched', detail: decision.reason })
        return
      case 'RepairHeader': {
        const updated = await run(stores.runs.update(decision.header, { durable: true }))
        actions.push({
          sessionId,
          runId: header.runId,
          action: E.isRight(updated) ? 'header_repaired' : 'left_untouched',
          detail: E.isRight(updated) ? `header set to ${decision.header.status} from the ledger` : updated.left._tag,
          ...(E.isLeft(updated) ? { error: updated.left } : {}),
        })
        return
      }
      case 'AppendTerminal': {
        const appended = await run(
          stores.events.append(sessionId, header.runId, decision.event, {
            durable: true,
            expectedHighWater: ledger.right.highWater,
          }),
        )
        if (E.isLeft(appended)) {
          actions.push({
            sessionId,
            runId: header.runId,
            action: 'left_untouched',
            detail: appended.left._tag,
            error: appended.left,
          })
          return
        }
        const closed = await run(stores.runs.update(decision.header, { durable: true }))
        if (E.isLeft(closed)) {
          // The terminal event is durable; the next pass repairs the header from it.
          actions.push({
            sessionId,
            runId: header.runId,
            action: 'left_untouched',
            detail: `terminal header: ${closed.left._tag}`,
            error: closed.left,
          })
          return
        }
        actions.push({
          sessionId,
          runId: header.runId,
          action: decision.failureClass === 'missing_terminal_event' ? 'missing_terminal_event' : 'recovered_terminal',
          detail: `closed as failed (${decision.failureClass})`,
        })
        return
      }
    }
  }

  return recoverRuns
}
