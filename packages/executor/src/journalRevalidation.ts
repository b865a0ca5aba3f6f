/**
 * The world reads and small checks a continuation of a chain with a tool journal makes again right
 * before it claims (Phase 2): each probe the plan relied on, and the source prefix digest. A reissue
 * that a probe chose makes its probe once more right before its dispatch (`probeOperation`).
 */
import type { ExecutionRejection } from '@maka/events'
import type { ContinuationPlan } from '@maka/planner'
import type { OpenOperation } from '@maka/projection'
import { type ProbeVerdict, type Tool, runProbe } from '@maka/tools'
import type { ApprovedContinuation } from './decideContinuation.js'
import type { JournalObservation } from './observeJournal.js'

/**
 * Makes one operation's probe on its last dispatch's basis, in the source's cwd; null when the
 * operation has no basis or its tool is gone.
 * @category constructors
 */
export const probeOperation = async (
  tools: ReadonlyArray<Tool>,
  operation: OpenOperation,
  context: { readonly sessionId: string; readonly cwd: string },
): Promise<ProbeVerdict | null> => {
  const tool = tools.find((t) => t.name === operation.toolName)
  if (tool === undefined || operation.reconcileBasis === null) return null
  return runProbe(tool, operation.args, context, operation.reconcileBasis)
}

/**
 * Makes again each probe the plan relied on, on the operation as re-read, in the source's cwd.
 * @category constructors
 */
export const reprobe = async (
  tools: ReadonlyArray<Tool>,
  journal: JournalObservation,
  c: ApprovedContinuation,
  cwd: string,
): Promise<ReadonlyMap<string, { readonly verdict: string; readonly output?: unknown }>> => {
  const probes = new Map<string, { readonly verdict: string; readonly output?: unknown }>()
  for (const { operationId } of c.safetySnapshot.probeVerdicts ?? []) {
    const operation = journal.projection?.openOperations.find((op) => op.operationId === operationId)
    const probed =
      operation === undefined ? null : await probeOperation(tools, operation, { sessionId: c.sessionId, cwd })
    if (probed !== null) probes.set(operationId, probed)
  }
  return probes
}

/**
 * The digest check alone, for a chain without a journal continued by a run that writes one.
 * @category gates
 */
export const digestChanged = (
  plan: ContinuationPlan,
  journal: JournalObservation,
): ReadonlyArray<ExecutionRejection> =>
  plan.sourceRuntimeEventPrefixDigest !== null &&
  journal.sourceEvents.length === plan.sourceRuntimeEventHighWater &&
  journal.sourceDigest !== plan.sourceRuntimeEventPrefixDigest
    ? ['source_prefix_digest_changed']
    : []
