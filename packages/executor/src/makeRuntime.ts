/**
 * The runtime: normal turns, safe continuation execution, session ownership and startup
 * recovery, composed from stores, the host inspector, the planner, providers and tools. The
 * writes are decided as data (`decide*.ts`) and carried out by one performer (`performWrites.ts`)
 * in the order the executor contract fixes; the source ledger of a continuation is only ever read.
 */
import type { AgentRun } from '@maka/events'
import {
  type Continuation,
  type ContinuationPlan,
  type OutlinedPlan,
  makeRuntimeContinuationPlanner,
  planUnrecovered,
} from '@maka/planner'
import type { LedgerScan } from '@maka/stores'
import * as E from 'fp-ts/lib/Either.js'
import { pipe } from 'fp-ts/lib/function.js'
import * as TE from 'fp-ts/lib/TaskEither.js'
import { makeExecuteContinuation } from './executeContinuation.js'
import { emitSafely } from './lifecycle.js'
import { shellRunDirOf } from '@maka/tools'
import { plannerHostPort, plannerStorePort, reattachObserver } from './portAdapters.js'
import { observeJournal } from './observeJournal.js'
import { onlyStillRunning, pause, shellTimeoutOf, waitingOperations } from './waitForCommands.js'
import { replaySegment } from './replaySegment.js'
import type { ContinuationResult, ResumeObserver, Runtime } from './Runtime.js'
import type { ResolvedProvider, RuntimeDeps } from './RuntimeDeps.js'
import { makeRunContext } from './runContext.js'
import { makeRunTurn } from './runTurn.js'
import { makeStartupRecovery } from './startupRecovery.js'
import { makeResolve } from './resolveCall.js'

export type {
  TurnRequest,
  TurnResult,
  ContinuationResult,
  ResumeRequest,
  ResumeObserver,
  ResolveRequest,
  ResolveResult,
  Runtime,
} from './Runtime.js'

/**
 * Builds a runtime from its parts.
 * @category constructors
 */
export const makeRuntime = (deps: RuntimeDeps): Runtime => {
  const ctx = makeRunContext(deps)
  const plannerDeps = {
    host: plannerHostPort(deps.stores, deps.inspector, {
      protocol: ctx.protocol,
      tools: deps.tools,
      ...(deps.dataDir === undefined ? {} : { reattach: reattachObserver(deps.stores, deps.dataDir) }),
      ...(deps.unavailableToolServers === undefined ? {} : { unavailableToolServers: deps.unavailableToolServers }),
    }),
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

  // The plan, and the headers it was made from: the continuation's model is resolved from the source
  // header planning read, so no second read stands between the plan and the execution — a source
  // that changes after planning is execution's to find (revalidation), not the resolver's.
  // `quiet`: a plan made again while waiting for a command is not announced (the wait is one decision).
  const planReading = async (request: { readonly sessionId: string; readonly runId?: string }, quiet = false) => {
    const headers = new Map<string, AgentRun>()
    const reading = makeRuntimeContinuationPlanner({
      ...plannerDeps,
      store: {
        ...storePort,
        readRun: (sessionId, runId) =>
          pipe(
            storePort.readRun(sessionId, runId),
            TE.map((header) => {
              headers.set(runId, header)
              return header
            }),
          ),
      },
    })
    const result = await reading.plan(request)()
    if (!quiet) announce(request.sessionId, result)
    return { plan: result, headers }
  }

  const plan: Runtime['plan'] = async (request) => (await planReading(request)).plan

  const planOutline: Runtime['planOutline'] = async (request) => {
    // What each fold read, for the second read to prove the same bytes are there.
    const scans = new Map<string, LedgerScan>()
    const outliner = makeRuntimeContinuationPlanner({
      ...plannerDeps,
      store: {
        ...storePort,
        foldLedger: (sessionId, runId, onEvent, options) =>
          pipe(
            deps.stores.events.fold(sessionId, runId, onEvent, options),
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

  // The provider a continuation runs with: the host resolver's, from the source header planning read
  // (or, without a resolver, `providerFor`); a model that cannot be built ends `resume` as data.
  const continuationProvider = async (
    c: Continuation,
    headers: ReadonlyMap<string, AgentRun>,
    observer: ResumeObserver,
  ): Promise<E.Either<ContinuationResult, ResolvedProvider>> => {
    if (deps.resolveContinuationProvider === undefined) return E.right({ providerFor: deps.providerFor })
    const source = headers.get(c.sourceRunId)
    // A continue plan was made from its source header; without one the planner is broken.
    if (source === undefined) throw new Error(`the plan of ${c.sourceRunId} was made without its header`)
    const resolved = await deps.resolveContinuationProvider({ source, continuation: c })
    if (E.isLeft(resolved)) {
      return E.left({ _tag: 'ProviderUnavailable', sourceRunId: c.sourceRunId, message: resolved.left.message })
    }
    if (resolved.right.note !== undefined) await observer.onProviderNote?.(resolved.right.note)
    return E.right(resolved.right)
  }

  const resume: Runtime['resume'] = async (request, observer = {}) => {
    const { recoveryRefusal, ...planRequest } = request
    // A session recovery could not repair parks at early exit 1a without being read (nor announced:
    // nothing was planned from its files).
    const { plan: planned, headers } =
      recoveryRefusal === undefined
        ? await planReading(planRequest)
        : {
            plan: planUnrecovered({
              safeBoundaryResumeEnabled: deps.safeBoundaryResumeEnabled,
              refusal: recoveryRefusal,
              ...(request.runId === undefined ? {} : { runId: request.runId }),
            }),
            headers: new Map<string, AgentRun>(),
          }
    const waited =
      request.wait === undefined
        ? { plan: planned, headers }
        : await waitWhileRunning(request, planned, headers, observer)
    const final = waited.plan
    await observer.onPlanned?.(final)
    const c = final.continuation
    if (final.disposition !== 'continue' || c === undefined) return { _tag: 'Parked', plan: final }
    const provider = await continuationProvider(c, waited.headers, observer)
    if (E.isLeft(provider)) return provider.left
    await observer.onExecuting?.(final)
    return execute(final, provider.right.providerFor, provider.right.permissionMode)
  }

  // Plans again while the only reasons to park are commands still running (Phase 2).
  const waitWhileRunning = async (
    request: Parameters<Runtime['resume']>[0],
    first: ContinuationPlan,
    firstHeaders: Map<string, AgentRun>,
    observer: ResumeObserver,
  ): Promise<{ readonly plan: ContinuationPlan; readonly headers: Map<string, AgentRun> }> => {
    const { recoveryRefusal: _refusal, wait, ...planRequest } = request
    let current = { plan: first, headers: firstHeaders }
    if (!onlyStillRunning(first)) return current
    // The commands' timeouts come from their call rows, read once.
    const source = firstHeaders.get(first.sourceRunId ?? '')
    const journal = source === undefined ? null : await observeJournal(deps.stores, request.sessionId, source)
    const timeoutOf = (operationId: string) =>
      shellTimeoutOf(journal?.projection?.openOperations.find((op) => op.operationId === operationId)?.args)
    const now = () => ctx.clock().getTime()
    while (onlyStillRunning(current.plan)) {
      const waiting = await waitingOperations(deps.stores, request.sessionId, current.plan, timeoutOf, now)
      const deadlines = waiting.map((op) => op.deadline)
      if (deadlines.some((d) => d === null || now() > d)) return current
      await observer.onWaiting?.(waiting.map(({ deadline: _d, ...op }) => op))
      if (await pause(wait?.pollMs ?? 500, wait?.signal)) return current
      current = await planReading(planRequest, true)
    }
    // The wait ended with another decision: that one is announced.
    announce(request.sessionId, current.plan)
    return current
  }

  const dataDir = deps.dataDir
  const recover = makeStartupRecovery({
    stores: deps.stores,
    inspector: deps.inspector,
    clock: ctx.clock,
    ...ctx.ownership,
    ...(dataDir === undefined
      ? {}
      : { shellRunDir: (sessionId: string, shellRunId: string) => shellRunDirOf(dataDir, sessionId, shellRunId) }),
  })

  return {
    runTurn: makeRunTurn(ctx),
    plan,
    planOutline,
    execute: (approved) => execute(approved),
    resume,
    recover,
    // A resolve's plan is not a resume decision: it is not announced.
    resolve: makeResolve(ctx, async (request) => (await planReading(request, true)).plan, recover),
    cancel: ctx.guard.cancel,
  }
}
