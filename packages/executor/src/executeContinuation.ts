/**
 * Execution of an approved plan: the in-process guard, ownership, fresh revalidation, then the
 * decided claim, target header and continuation-start row, the provider replay and the terminal
 * writes — with a lifecycle event for each way it can end. The source ledger is only ever read.
 */
import * as E from 'fp-ts/lib/Either.js'
import { SettlementPlan, Sha256Digest, carriesJournalKey, describeCode } from '@maka/events'
import type { ContinuationPlan } from '@maka/planner'
import type { ModelProvider } from '@maka/providers'
import { loadSessionHistory } from '@maka/sessions'
import { type StoreError, describeStoreError } from '@maka/stores'
import { type ApprovedContinuation, decideContinuation } from './decideContinuation.js'
import { providerIdentityOf } from './decideTurnStart.js'
import { failureClassOfOutcome, failureOf } from './decideTerminal.js'
import { emitSafely } from './lifecycle.js'
import { observeBoundary } from './observeBoundary.js'
import { type WriteFailure, continuationStartWrites, runningWrites } from './performWrites.js'
import { orderRejections, revalidate, revalidateJournal } from './revalidate.js'
import { digestChanged, probeOperation, reprobe } from './journalRevalidation.js'
import { performSettlements } from './settleOperations.js'
import { type RunContext, errorClassOf, storeErrorOf } from './runContext.js'
import type { ContinuationResult } from './Runtime.js'
import type { ContinuationRejectionCode, PermissionMode, ProviderRun } from './RuntimeDeps.js'
import { type RunStop, rowStamp, runThrew } from './runWriter.js'

const reject = (codes: ReadonlyArray<ContinuationRejectionCode>): ContinuationResult => ({
  _tag: 'Rejected',
  codes,
  messages: codes.map(describeCode),
})

/**
 * The runtime's `execute` over the shared parts; `resume` passes the provider its resolver built.
 * @category constructors
 */
export const makeExecuteContinuation = (
  ctx: RunContext,
): ((
  approved: ContinuationPlan,
  providerFor?: (run: ProviderRun) => ModelProvider,
  permissionMode?: PermissionMode,
) => Promise<ContinuationResult>) => {
  const { deps, stores } = ctx

  const emitExecutionFailed = (c: ApprovedContinuation, targetRunId: string | null, errorClass: string) =>
    emitSafely(deps.sink, {
      type: 'execution_failed',
      sessionId: c.sessionId,
      sourceRunId: c.sourceRunId,
      targetRunId,
      errorClass,
    })

  const executeOwned = async (
    approved: ContinuationPlan,
    c: ApprovedContinuation,
    signal: AbortSignal,
    providerFor: (run: ProviderRun) => ModelProvider,
    permissionMode: PermissionMode,
  ): Promise<ContinuationResult> => {
    const hostJournal = {
      protocol: ctx.protocol,
      tools: deps.tools,
      ...(deps.unavailableToolServers === undefined ? {} : { unavailableToolServers: deps.unavailableToolServers }),
    }
    // A chain with a tool journal, or a run that will write one, re-reads the journal and the digest.
    const journaled = (approved.openToolOperations?.length ?? 0) > 0 || c.runtimeContext.some(carriesJournalKey)
    const observed = await observeBoundary(stores, deps.inspector, c, hostJournal, journaled || ctx.protocol)
    const journal = observed.journal
    const probes =
      journal === null || observed.sourceHeader === null
        ? new Map<string, { readonly verdict: string; readonly output?: unknown }>()
        : await reprobe(deps.tools, journal, c, observed.sourceHeader.cwd)
    const codes = orderRejections([
      ...revalidate(c, { ...observed, journaled }),
      ...(journal === null
        ? []
        : journaled
          ? revalidateJournal(approved, { observed: journal, probes, facts: observed.facts })
          : digestChanged(approved, journal)),
    ])
    if (codes.length > 0 || observed.sourceHeader === null) {
      emitExecutionFailed(c, c.runId, codes[0] ?? 'revalidation_failed')
      return reject(codes)
    }
    // The turns before this lineage; the plan's runtime context carries the lineage itself.
    const earlier = await loadSessionHistory(stores, c.sessionId, { before: c.sourceRunId })
    if (E.isLeft(earlier)) {
      emitExecutionFailed(c, c.runId, 'session_history_unreadable')
      return reject(['session_history_unreadable'])
    }
    const provider = providerFor({ kind: 'continuation', runId: c.runId })
    const createdAt = ctx.nowIso()
    const start = decideContinuation({
      continuation: c,
      sourceHeader: observed.sourceHeader,
      provider: providerIdentityOf(provider),
      permissionMode,
      createdAt,
      stamp: rowStamp(c.runId, 1, ctx.clock().getTime()),
      ...(ctx.protocol && journal?.sourceDigest != null && Sha256Digest.is(journal.sourceDigest)
        ? {
            journal: {
              prefixDigest: journal.sourceDigest,
              ...(c.settlementPlan === undefined || !SettlementPlan.is(c.settlementPlan)
                ? {}
                : { settlementPlan: c.settlementPlan }),
            },
          }
        : {}),
    })
    const failed = (
      stage: 'claim' | 'continuation_start' | 'run',
      errorClass: string,
      message: string,
      cause: { readonly error?: StoreError } = {},
    ): ContinuationResult => {
      emitExecutionFailed(c, c.runId, errorClass)
      return { _tag: 'Failed', stage, targetRunId: c.runId, errorClass, message, ...cause }
    }

    const opened = await ctx.perform(continuationStartWrites(start))
    if (E.isLeft(opened)) {
      if (opened.left._tag === 'Interrupted') {
        // Fail closed: no provider call, no terminal header; recovery closes the target later.
        const stop = opened.left.failure
        return failed(
          'continuation_start',
          errorClassOf(stop),
          'The continuation-start event could not be made durable.',
          storeErrorOf(stop),
        )
      }
      const error = opened.left.error
      const conflict: ContinuationRejectionCode | null =
        error._tag === 'ClaimConflict'
          ? 'continuation_claim_conflict'
          : error._tag === 'RunAlreadyExists'
            ? 'target_run_conflict'
            : null
      if (conflict === null) return failed('claim', `store_${error._tag}`, describeStoreError(error), { error })
      // Reported like the same code found by revalidation: a lost claim race is a refused execution too.
      emitExecutionFailed(c, c.runId, conflict)
      return reject([conflict])
    }
    const writer = opened.right
    const sourceCwd = observed.sourceHeader.cwd
    emitSafely(deps.sink, {
      type: 'execution_started',
      sessionId: c.sessionId,
      sourceRunId: c.sourceRunId,
      targetRunId: c.runId,
    })
    const stopped = (stop: RunStop) =>
      failed(
        'run',
        errorClassOf(stop),
        'The continuation stopped before it could finish; recovery will close it.',
        storeErrorOf(stop),
      )
    // The run's header exists, so a header refusal cannot happen here; it would read as a runtime error.
    const stopOf = (failure: WriteFailure): RunStop => (failure._tag === 'Interrupted' ? failure.failure : runThrew)
    try {
      const running = await ctx.perform(runningWrites, writer)
      if (E.isLeft(running)) return stopped(stopOf(running.left))
      const history = [...earlier.right, ...c.runtimeContext]
      const loopInput = { writer, provider, history, cwd: start.header.cwd, signal, permissionMode }
      const settlements = c.settlementPlan ?? []
      if (settlements.length > 0 && journal?.projection != null) {
        const settled = await performSettlements(
          {
            loop: ctx.loopInput(loopInput),
            stores,
            dataDir: deps.dataDir,
            sink: deps.sink,
            sourceRunId: c.sourceRunId,
            operations: new Map(journal.projection.openOperations.map((op) => [op.operationId, op])),
            probes,
            probe: (operation) => probeOperation(deps.tools, operation, { sessionId: c.sessionId, cwd: sourceCwd }),
          },
          settlements,
        )
        if (E.isLeft(settled)) return stopped(settled.left)
      }
      const looped = await ctx.runLoop(loopInput)()
      if (E.isLeft(looped)) return stopped(looped.left)
      const outcome = looped.right
      const status = await ctx.finishRun(writer, outcome)
      if (E.isLeft(status)) return stopped(stopOf(status.left))
      const failureClass = failureClassOfOutcome(outcome)
      if (failureClass !== undefined) {
        emitExecutionFailed(c, c.runId, failureClass)
      } else {
        emitSafely(deps.sink, {
          type: 'execution_completed',
          sessionId: c.sessionId,
          sourceRunId: c.sourceRunId,
          targetRunId: c.runId,
        })
      }
      return {
        _tag: 'Finished',
        sessionId: c.sessionId,
        sourceRunId: c.sourceRunId,
        targetRunId: c.runId,
        targetTurnId: c.turnId,
        status: status.right,
        ...failureOf(outcome),
      }
    } catch {
      // A throw is a bug or a crash point that simulates a kill: the run stops where it is.
      return stopped(runThrew)
    }
  }

  return async (approved, providerFor = deps.providerFor, permissionMode = ctx.permissionMode) => {
    const c = approved.continuation
    if (approved.disposition !== 'continue' || c === undefined) return { _tag: 'Parked', plan: approved }
    // A plan made elsewhere is not a licence: without the flag nothing is executed.
    if (!deps.safeBoundaryResumeEnabled) return reject(['resume_feature_disabled'])
    const entered = ctx.guard.enterContinuation(c)
    if (E.isLeft(entered)) return reject([entered.left])
    const lease = entered.right
    try {
      const owned = await ctx.ownership.acquireOwnership(c.sessionId)
      if (E.isLeft(owned)) {
        if (owned.left._tag === 'OwnerLockHeld') {
          emitExecutionFailed(c, null, 'session_owner_alive')
          return reject(['session_owner_alive'])
        }
        // Not a live owner: a write that failed (a full disk, a read-only folder) is a failure,
        // never reported as someone else owning the session.
        const errorClass = `store_${owned.left._tag}`
        emitExecutionFailed(c, null, errorClass)
        return {
          _tag: 'Failed',
          stage: 'ownership',
          targetRunId: c.runId,
          errorClass,
          message: describeStoreError(owned.left),
          error: owned.left,
        }
      }
      try {
        return await executeOwned(approved, c, lease.signal, providerFor, permissionMode)
      } finally {
        await ctx.ownership.releaseOwnership(c.sessionId, owned.right)
      }
    } finally {
      lease.release()
    }
  }
}
