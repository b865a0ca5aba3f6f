/**
 * The runtime: normal turns, safe continuation execution, session ownership and startup
 * recovery, composed from stores, the host inspector, the planner, providers and tools. The
 * writes are decided as data (`decide*.ts`) and carried out by one performer (`performWrites.ts`)
 * in the order the executor contract fixes; the source ledger of a continuation is only ever read.
 */
import { type ContinuationPlan, type OutlinedPlan, makeRuntimeContinuationPlanner } from '@maka/planner'
import type { LedgerScan } from '@maka/stores'
import { pipe } from 'fp-ts/lib/function.js'
import * as TE from 'fp-ts/lib/TaskEither.js'
import { makeExecuteContinuation } from './executeContinuation.js'
import { emitSafely } from './lifecycle.js'
import { plannerHostPort, plannerStorePort } from './portAdapters.js'
import { replaySegment } from './replaySegment.js'
import type { Runtime } from './Runtime.js'
import type { RuntimeDeps } from './RuntimeDeps.js'
import { makeRunContext } from './runContext.js'
import { makeRunTurn } from './runTurn.js'
import { makeStartupRecovery } from './startupRecovery.js'

export type { TurnRequest, TurnResult, ContinuationResult, Runtime } from './Runtime.js'

/**
 * Builds a runtime from its parts.
 * @category constructors
 */
export const makeRuntime = (deps: RuntimeDeps): Runtime => {
  const ctx = makeRunContext(deps)
  const plannerDeps = {
    host: plannerHostPort(deps.stores, deps.inspector),
    ids: {
      newContinuationIds: () => ({
        invocationId: ctx.newInvocationId(),
        runId: ctx.newRunId(),
        turnId: ctx.newTurnId(),
      }),
    },
    safeBoundaryResumeEnabled: deps.safeBoundaryResumeEnabled,
  }
  const storePort = plannerStorePort(deps.stores)
  const planner = makeRuntimeContinuationPlanner({ ...plannerDeps, store: storePort })

  const announce = (sessionId: string, result: OutlinedPlan | ContinuationPlan): void => {
    if (result.disposition === 'continue' && result.continuation !== undefined) {
      emitSafely(deps.sink, {
        type: 'plan_approved',
        sessionId,
        sourceRunId: result.continuation.sourceRunId,
        targetRunId: result.continuation.runId,
      })
    } else {
      emitSafely(deps.sink, {
        type: 'plan_parked',
        sessionId,
        sourceRunId: result.sourceRunId,
        rejectionReasons: result.rejectionReasons,
      })
    }
  }

  const plan: Runtime['plan'] = async (request) => {
    const result = await planner.plan(request)()
    announce(request.sessionId, result)
    return result
  }

  const planOutline: Runtime['planOutline'] = async (request) => {
    // What each fold read, for the second read to prove the same bytes are there.
    const scans = new Map<string, LedgerScan>()
    const outliner = makeRuntimeContinuationPlanner({
      ...plannerDeps,
      store: {
        ...storePort,
        foldLedger: (sessionId, runId, onEvent) =>
          pipe(
            deps.stores.events.fold(sessionId, runId, onEvent),
            TE.map((scan) => {
              scans.set(runId, scan)
              return scan
            }),
          ),
      },
    })
    const result = await outliner.outline(request)()
    announce(request.sessionId, result)
    return {
      plan: result,
      replay: (segment, onEvents) =>
        replaySegment(deps.stores, request.sessionId, scans.get(segment.runId), segment, onEvents),
    }
  }

  const execute = makeExecuteContinuation(ctx)

  const resume: Runtime['resume'] = async (request) => {
    const planned = await plan(request)
    return planned.disposition === 'continue' ? execute(planned) : { _tag: 'Parked', plan: planned }
  }

  const recover = makeStartupRecovery({
    stores: deps.stores,
    inspector: deps.inspector,
    clock: ctx.clock,
    ...ctx.ownership,
  })

  return { runTurn: makeRunTurn(ctx), plan, planOutline, execute, resume, recover, cancel: ctx.guard.cancel }
}
