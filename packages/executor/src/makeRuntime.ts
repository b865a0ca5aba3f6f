/**
 * The runtime: normal turns, safe continuation execution, session ownership and startup
 * recovery, composed from stores, the host inspector, the planner, providers and tools. The
 * writes are decided as data (`decide*.ts`) and carried out by one performer (`performWrites.ts`)
 * in the order the executor contract fixes; the source ledger of a continuation is only ever read.
 */
import { makeRuntimeContinuationPlanner } from '@maka/planner'
import { makeExecuteContinuation } from './executeContinuation.js'
import { emitSafely } from './lifecycle.js'
import { plannerHostPort, plannerStorePort } from './portAdapters.js'
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
  const planner = makeRuntimeContinuationPlanner({
    store: plannerStorePort(deps.stores),
    host: plannerHostPort(deps.stores, deps.inspector),
    ids: {
      newContinuationIds: () => ({
        invocationId: ctx.newInvocationId(),
        runId: ctx.newRunId(),
        turnId: ctx.newTurnId(),
      }),
    },
    safeBoundaryResumeEnabled: deps.safeBoundaryResumeEnabled,
  })

  const plan: Runtime['plan'] = async (request) => {
    const result = await planner.plan(request)()
    if (result.disposition === 'continue' && result.continuation !== undefined) {
      emitSafely(deps.sink, {
        type: 'plan_approved',
        sessionId: request.sessionId,
        sourceRunId: result.continuation.sourceRunId,
        targetRunId: result.continuation.runId,
      })
    } else {
      emitSafely(deps.sink, {
        type: 'plan_parked',
        sessionId: request.sessionId,
        sourceRunId: result.sourceRunId,
        rejectionReasons: result.rejectionReasons,
      })
    }
    return result
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

  return { runTurn: makeRunTurn(ctx), plan, execute, resume, recover, cancel: ctx.guard.cancel }
}
