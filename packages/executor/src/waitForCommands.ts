/**
 * Waiting for commands that outlived their agent (Phase 2, `reattach`): while a plan parks only with
 * `tool_still_running`, a resume waits and plans again once a command ended — holding no owner lock
 * and writing nothing. Each command has a deadline (its start + its timeout + 5 s): its supervisor
 * kills it at its timeout, so past the deadline something is wrong and the plan parks as it is.
 */
import type { ContinuationPlan, OpenToolOperation } from '@maka/planner'
import { findReattachRecord } from '@maka/host-inspector'
import type { StorePorts } from '@maka/stores'
import { SHELL_DEFAULT_TIMEOUT_MS } from '@maka/tools'
import * as E from 'fp-ts/lib/Either.js'
import type { WaitingOperation } from './Runtime.js'

/** How long after a command's timeout the wait gives up: the supervisor's kill and its exit file. */
const DEADLINE_GRACE_MS = 5_000

/**
 * True when the plan parks with `tool_still_running` and nothing else.
 * @category guards
 */
export const onlyStillRunning = (plan: ContinuationPlan): boolean =>
  plan.disposition === 'park' && plan.rejectionReasons.length === 1 && plan.rejectionReasons[0] === 'tool_still_running'

/**
 * The commands a plan waits for, with their elapsed time and deadline.
 * @category constructors
 */
export const waitingOperations = async (
  stores: StorePorts,
  sessionId: string,
  plan: ContinuationPlan,
  timeoutOf: (operationId: string) => number,
  now: () => number,
): Promise<ReadonlyArray<WaitingOperation & { readonly deadline: number | null }>> => {
  const running = (plan.openToolOperations ?? []).filter((op: OpenToolOperation) => op.reason === 'tool_still_running')
  const listed = await stores.shellRuns.list(sessionId)()
  const entries = E.isRight(listed) ? listed.right.map((e) => ('shellRun' in e ? e.shellRun : e)) : []
  return running.map((op) => {
    const record = findReattachRecord(entries, sessionId, op.operationId)
    const startedAt = E.isRight(record) && record.right !== null ? Date.parse(record.right.startedAt) : Number.NaN
    const started = Number.isFinite(startedAt)
    return {
      operationId: op.operationId,
      toolCallId: op.toolCallId,
      toolName: op.toolName,
      elapsedMs: started ? Math.max(0, now() - startedAt) : null,
      deadline: started ? startedAt + timeoutOf(op.operationId) + DEADLINE_GRACE_MS : null,
    }
  })
}

/**
 * A shell call's timeout from its args, as the tool reads it (its default when absent or invalid).
 * @category constructors
 */
export const shellTimeoutOf = (args: unknown): number => {
  const value = typeof args === 'object' && args !== null ? (args as { timeoutMs?: unknown }).timeoutMs : undefined
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : SHELL_DEFAULT_TIMEOUT_MS
}

/**
 * Sleeps `ms`, or less when `signal` aborts; answers whether it was aborted.
 * @category constructors
 */
export const pause = (ms: number, signal: AbortSignal | undefined): Promise<boolean> =>
  new Promise((resolve) => {
    if (signal?.aborted === true) return resolve(true)
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve(false)
    }, ms)
    const onAbort = () => {
      clearTimeout(timer)
      resolve(true)
    }
    signal?.addEventListener('abort', onAbort, { once: true })
  })
