/**
 * The runtime: normal turns, safe continuation execution, session ownership and startup
 * recovery, composed from stores, the host inspector, the planner, providers and tools. Every
 * durable write happens in the order the executor contract fixes; the source ledger of a
 * continuation is only ever read.
 */
import { randomUUID } from 'node:crypto'
import { realpath } from 'node:fs/promises'
import * as E from 'fp-ts/lib/Either.js'
import {
  type AgentRun,
  type ContinuationClaim,
  type ContinuationSource,
  type IsoTimestamp,
  type NonEmptyString,
  type NonNegativeInt,
  type RuntimeEvent,
  type RunId,
  type SessionId,
  type TerminalRunStatus,
  ExecutionRejectionSentences,
  FailureClass,
  describeParkReason,
  isSafeId,
  makeContinuationStartEvent,
  makeInitialUserEvent,
  makeTerminalEvent,
} from '@maka/events'
import type { ModelProvider } from '@maka/providers'
import { observeWorkspace } from '@maka/host-inspector'
import { type ContinuationPlan, makeRuntimeContinuationPlanner } from '@maka/planner'
import { type FileStores, type StoreError, describeStoreError } from '@maka/stores'
import { type LoopOutcome, runAgentLoop } from './agentLoop.js'
import { emitSafely } from './lifecycle.js'
import { makeOwnership } from './ownership.js'
import { observeHostFacts, plannerHostPort, plannerStorePort } from './portAdapters.js'
import { revalidate } from './revalidate.js'
import { describeSessionHistoryProblem, loadSessionHistory } from './sessionMemory.js'
import type { ContinuationRejectionCode, CrashPoint, RuntimeDeps } from './RuntimeDeps.js'
import { RunWriteError, makeRunWriter, type RunWriter } from './runWriter.js'
import { type RecoveryReport, makeStartupRecovery } from './startupRecovery.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * A normal turn's request.
 * @category models
 */
export interface TurnRequest {
  /** An existing session, or the id of a new one; a fresh id when omitted. */
  readonly sessionId?: string
  /** The workspace of a new session; an existing session keeps its recorded cwd. */
  readonly cwd: string
  readonly prompt: string
}

/**
 * How a normal turn ended.
 * @category models
 */
export type TurnResult =
  | {
      readonly _tag: 'Finished'
      readonly sessionId: string
      readonly runId: string
      readonly status: TerminalRunStatus
      readonly failureClass?: string
      /** The failure's human sentence (secret-free, as in the terminal event). */
      readonly failureMessage?: string
    }
  | {
      readonly _tag: 'Refused'
      readonly code: string
      readonly message: string
      /** The store failure that refused the turn (`store_failed`), kept typed for the host. */
      readonly error?: StoreError
    }
  | {
      readonly _tag: 'Interrupted'
      readonly sessionId: string
      readonly runId: string
      readonly message: string
      /** The write that failed mid-run; the run stays non-terminal until recovery closes it. */
      readonly error?: StoreError
    }

/**
 * How the execution of a plan ended.
 * @category models
 */
export type ContinuationResult =
  | { readonly _tag: 'Parked'; readonly plan: ContinuationPlan }
  | {
      readonly _tag: 'Rejected'
      readonly codes: ReadonlyArray<ContinuationRejectionCode>
      readonly messages: ReadonlyArray<string>
    }
  | {
      readonly _tag: 'Failed'
      /** `ownership`: owner.lock could not be taken for a reason other than a live owner. */
      readonly stage: 'ownership' | 'claim' | 'continuation_start' | 'run'
      readonly targetRunId: string
      readonly errorClass: string
      readonly message: string
      /** The store failure behind it, kept typed for the host (`IoFailed` names operation and errno). */
      readonly error?: StoreError
    }
  | {
      readonly _tag: 'Finished'
      readonly sessionId: string
      readonly sourceRunId: string
      readonly targetRunId: string
      readonly targetTurnId: string
      readonly status: TerminalRunStatus
      readonly failureClass?: string
      /** The failure's human sentence (secret-free, as in the terminal event). */
      readonly failureMessage?: string
    }

/**
 * The runtime's operations.
 * @category models
 */
export interface Runtime {
  runTurn(request: TurnRequest): Promise<TurnResult>
  plan(request: { readonly sessionId: string; readonly runId?: string }): Promise<ContinuationPlan>
  execute(plan: ContinuationPlan): Promise<ContinuationResult>
  /** Plans the latest safe boundary and executes it when the plan says continue. */
  resume(request: { readonly sessionId: string; readonly runId?: string }): Promise<ContinuationResult>
  recover(options?: { readonly sessionIds?: ReadonlyArray<string> }): Promise<RecoveryReport>
  /**
   * Cancels the active run (a normal turn or a continuation), e.g. on Ctrl+C: the model stream is
   * aborted, a running shell command's process group is killed (other tools finish), then the
   * terminal event (`cancelled`, `user_interrupted`) and the terminal header are written durably
   * and the owner lock is released when the pending `runTurn`/`execute` call returns. Returns the
   * cancelled run's id, or null when no run is active.
   */
  cancel(): string | null
}

// -------------------------------------------------------------------------------------
// internals
// -------------------------------------------------------------------------------------

const DEFAULT_SYSTEM_PROMPT =
  'You are a careful coding agent. Use the tools to inspect and change files in the workspace, then answer briefly.'

const defaultNewId = (kind: 'session' | 'run' | 'invocation' | 'turn'): string =>
  `${kind === 'invocation' ? 'inv' : kind}-${randomUUID().replace(/-/g, '').slice(0, 20)}`

const stripTrailingSeparator = (path: string): string => (path.length > 1 ? path.replace(/\/+$/, '') : path)

const run = async <A>(task: () => Promise<E.Either<StoreError, A>>): Promise<E.Either<StoreError, A>> => task()

// The endpoint is recorded so a resume can build the same provider; a local model has none.
const providerBaseUrlOf = (provider: ModelProvider): Pick<AgentRun, 'providerBaseUrl'> =>
  provider.baseUrl === undefined || provider.baseUrl === ''
    ? {}
    : { providerBaseUrl: provider.baseUrl as NonEmptyString }

const failureClassOfOutcome = (outcome: LoopOutcome): string | undefined =>
  outcome._tag === 'Failed'
    ? outcome.failureClass
    : outcome._tag === 'Cancelled'
      ? FailureClass.user_interrupted
      : undefined

// What a Finished result says of a run that did not complete: its class, and the failure's sentence.
const failureOf = (outcome: LoopOutcome): { failureClass?: string; failureMessage?: string } => {
  const failureClass = failureClassOfOutcome(outcome)
  if (failureClass === undefined) return {}
  return outcome._tag === 'Failed' ? { failureClass, failureMessage: outcome.message } : { failureClass }
}

const errorClassOf = (error: unknown): string =>
  error instanceof RunWriteError ? `store_${error.storeError._tag}` : 'runtime_error'

const storeErrorOf = (error: unknown): { readonly error?: StoreError } =>
  error instanceof RunWriteError ? { error: error.storeError } : {}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Builds a runtime from its parts.
 * @category constructors
 */
export const makeRuntime = (deps: RuntimeDeps): Runtime => {
  const stores: FileStores = deps.stores
  const clock = deps.clock ?? (() => new Date())
  const newId = deps.newId ?? defaultNewId
  const nowIso = () => clock().toISOString() as IsoTimestamp
  const maxModelSteps = deps.maxModelSteps ?? 24
  const systemPrompt = deps.systemPrompt ?? DEFAULT_SYSTEM_PROMPT
  const permissionMode = deps.permissionMode ?? 'allow'

  // The in-process guard: one active run per runtime, one claim per boundary or session in flight.
  let activeRunId: string | null = null
  // One controller per active run; `cancel` aborts it. Made when the run becomes active, so a cancel
  // that arrives before the first write is still seen by the loop.
  let activeAbort: AbortController | null = null
  const inflight = new Set<string>()

  const crashPoint = (runId: string) => async (point: CrashPoint) => {
    if (deps.onCrashPoint !== undefined) await deps.onCrashPoint(point, { runId })
  }

  const planner = makeRuntimeContinuationPlanner({
    store: plannerStorePort(stores),
    host: plannerHostPort(stores, deps.inspector),
    ids: {
      newContinuationIds: () => ({ invocationId: newId('invocation'), runId: newId('run'), turnId: newId('turn') }),
    },
    safeBoundaryResumeEnabled: deps.safeBoundaryResumeEnabled,
  })

  const { acquireOwnership, releaseOwnership } = makeOwnership(stores, deps.inspector)

  const newRunWriter = (header: AgentRun): RunWriter =>
    makeRunWriter({ stores, header, rowsBefore: 0, clock, ...(deps.observer ? { observer: deps.observer } : {}) })

  /** The model/tool loop with this runtime's tools, prompt, permissions and observers. */
  const runLoop = (
    writer: RunWriter,
    provider: ModelProvider,
    history: ReadonlyArray<RuntimeEvent>,
    cwd: string,
    runId: string,
    signal: AbortSignal,
  ): Promise<LoopOutcome> =>
    runAgentLoop({
      signal,
      writer,
      provider,
      history,
      tools: deps.tools,
      systemPrompt,
      permissionMode,
      ...(deps.askPermission ? { askPermission: deps.askPermission } : {}),
      ...(deps.observer ? { observer: deps.observer } : {}),
      stores,
      cwd,
      maxModelSteps,
      crashPoint: crashPoint(runId),
    })

  const finishRun = async (writer: RunWriter, outcome: LoopOutcome, runId: string) => {
    const terminal = makeTerminalEvent(
      writer.header(),
      writer.stamp(),
      outcome._tag === 'Completed'
        ? { status: 'completed' }
        : outcome._tag === 'Cancelled'
          ? { status: 'cancelled', failureClass: FailureClass.user_interrupted, reason: 'The run was interrupted.' }
          : {
              status: 'failed',
              failureClass: outcome.failureClass,
              message: outcome.message,
              ...(outcome.detail === undefined ? {} : { stateDelta: outcome.detail }),
            },
    )
    await writer.appendRow(terminal, { durable: true })
    await crashPoint(runId)('after_terminal_event_committed')
    const status: TerminalRunStatus =
      outcome._tag === 'Completed' ? 'completed' : outcome._tag === 'Cancelled' ? 'cancelled' : 'failed'
    const failureClass = failureClassOfOutcome(outcome)
    await writer.setStatus(
      status,
      {
        completedAt: nowIso(),
        ...(failureClass === undefined ? {} : { failureClass: failureClass as NonEmptyString }),
        ...(outcome._tag === 'Cancelled' ? { abortSource: 'user' } : {}),
      },
      { durable: true },
    )
    await crashPoint(runId)('after_terminal_header_committed')
    return status
  }

  // -----------------------------------------------------------------------------------
  // normal turns
  // -----------------------------------------------------------------------------------

  const runTurn = async (request: TurnRequest): Promise<TurnResult> => {
    const sessionId = request.sessionId ?? newId('session')
    if (!isSafeId(sessionId)) {
      return { _tag: 'Refused', code: 'invalid_id', message: 'The session id may only use letters, digits, _ and -.' }
    }
    if (activeRunId !== null) {
      return { _tag: 'Refused', code: 'another_run_active', message: ExecutionRejectionSentences.another_run_active }
    }
    const runId = newId('run')
    activeRunId = runId
    const abort = new AbortController()
    activeAbort = abort
    try {
      const owned = await acquireOwnership(sessionId)
      if (E.isLeft(owned)) {
        return owned.left._tag === 'OwnerLockHeld'
          ? { _tag: 'Refused', code: 'session_owner_alive', message: describeParkReason('session_owner_alive') }
          : { _tag: 'Refused', code: 'store_failed', message: describeStoreError(owned.left), error: owned.left }
      }
      try {
        return await runTurnOwned(sessionId, runId, request, abort.signal)
      } finally {
        await releaseOwnership(sessionId, owned.right)
      }
    } finally {
      activeRunId = null
      activeAbort = null
    }
  }

  const storeRefusal = (error: StoreError): TurnResult => ({
    _tag: 'Refused',
    code: 'store_failed',
    message: describeStoreError(error),
    error,
  })

  const sessionCwd = async (sessionId: string, requestedCwd: string): Promise<E.Either<TurnResult, string>> => {
    const existing = await stores.sessions.read(sessionId)()
    if (E.isRight(existing)) return E.right(existing.right.cwd)
    if (existing.left._tag !== 'NotFound') return E.left(storeRefusal(existing.left))
    let cwd: string
    try {
      cwd = stripTrailingSeparator(await realpath(requestedCwd))
    } catch {
      return E.left({
        _tag: 'Refused',
        code: 'workspace_unavailable',
        message: 'The workspace directory does not exist or cannot be read.',
      })
    }
    const created = await stores.sessions.create({
      sessionId: sessionId as SessionId,
      cwd: cwd as AgentRun['cwd'],
      createdAt: nowIso(),
    })()
    return E.isLeft(created) ? E.left(storeRefusal(created.left)) : E.right(cwd)
  }

  const runTurnOwned = async (
    sessionId: string,
    runId: string,
    request: TurnRequest,
    signal: AbortSignal,
  ): Promise<TurnResult> => {
    const cwdResult = await sessionCwd(sessionId, request.cwd)
    if (E.isLeft(cwdResult)) return cwdResult.left
    let cwd = cwdResult.right
    let workspaceIdentity: string | undefined
    // Without the flag, a normal turn runs no safety inspection at all (the pre-resume happy path).
    if (deps.safeBoundaryResumeEnabled) {
      const observed = await observeWorkspace(cwd)()
      if (E.isLeft(observed)) return { _tag: 'Refused', code: 'workspace_unavailable', message: observed.left.message }
      cwd = observed.right.canonicalPath
      workspaceIdentity = observed.right.identity
    }
    // The session's earlier turns, read before anything of this turn is written (fail closed).
    const history = await loadSessionHistory(stores, sessionId)
    if (E.isLeft(history)) {
      return {
        _tag: 'Refused',
        code: 'session_history_unreadable',
        message: describeSessionHistoryProblem(history.left),
      }
    }
    const provider = deps.providerFor({ kind: 'turn', runId })
    const createdAt = nowIso()
    const header: AgentRun = {
      runId: runId as RunId,
      sessionId: sessionId as SessionId,
      turnId: newId('turn') as NonEmptyString,
      invocationId: newId('invocation') as NonEmptyString,
      status: 'created',
      cwd: cwd as AgentRun['cwd'],
      providerId: provider.providerId as NonEmptyString,
      modelId: provider.modelId as NonEmptyString,
      ...providerBaseUrlOf(provider),
      createdAt,
      updatedAt: createdAt,
      ...(workspaceIdentity === undefined ? {} : { workspaceIdentity: workspaceIdentity as NonEmptyString }),
    }
    const created = await stores.runs.create(header)()
    if (E.isLeft(created)) return storeRefusal(created.left)
    const writer = newRunWriter(header)
    try {
      await crashPoint(runId)('after_run_created')
      await writer.appendRow(makeInitialUserEvent(header, writer.stamp(), request.prompt), { durable: true })
      await crashPoint(runId)('after_initial_user_committed')
      await writer.setStatus('running')
      const outcome = await runLoop(writer, provider, history.right, cwd, runId, signal)
      const status = await finishRun(writer, outcome, runId)
      return {
        _tag: 'Finished',
        sessionId,
        runId,
        status,
        ...failureOf(outcome),
      }
    } catch (error) {
      // A write failed mid-run: the run stays non-terminal and startup recovery will close it.
      return {
        _tag: 'Interrupted',
        sessionId,
        runId,
        message: `The run stopped: ${errorClassOf(error)}.`,
        ...storeErrorOf(error),
      }
    }
  }

  // -----------------------------------------------------------------------------------
  // continuations
  // -----------------------------------------------------------------------------------

  const plan = async (request: { readonly sessionId: string; readonly runId?: string }) => {
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

  const reject = (codes: ReadonlyArray<ContinuationRejectionCode>): ContinuationResult => ({
    _tag: 'Rejected',
    codes,
    messages: codes.map((code) =>
      code === 'session_owner_alive' || code === 'resume_feature_disabled'
        ? describeParkReason(code)
        : ExecutionRejectionSentences[code],
    ),
  })

  const emitExecutionFailed = (
    c: NonNullable<ContinuationPlan['continuation']>,
    targetRunId: string | null,
    errorClass: string,
  ) =>
    emitSafely(deps.sink, {
      type: 'execution_failed',
      sessionId: c.sessionId,
      sourceRunId: c.sourceRunId,
      targetRunId,
      errorClass,
    })

  const execute = async (approved: ContinuationPlan): Promise<ContinuationResult> => {
    const c = approved.continuation
    if (approved.disposition !== 'continue' || c === undefined) return { _tag: 'Parked', plan: approved }
    // A plan made elsewhere is not a licence: without the flag nothing is executed.
    if (!deps.safeBoundaryResumeEnabled) return reject(['resume_feature_disabled'])
    const boundaryKey = `${c.sessionId}/${c.sourceRunId}@${c.sourceRuntimeEventHighWater}`
    const sessionKey = `${c.sessionId}/*`
    // A second claim of the same session is named as such; any other active run is just busy.
    if (inflight.has(boundaryKey) || inflight.has(sessionKey)) return reject(['continuation_in_progress'])
    if (activeRunId !== null) return reject(['another_run_active'])
    inflight.add(boundaryKey)
    inflight.add(sessionKey)
    activeRunId = c.runId
    const abort = new AbortController()
    activeAbort = abort
    try {
      const owned = await acquireOwnership(c.sessionId)
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
        return await executeOwned(c, abort.signal)
      } finally {
        await releaseOwnership(c.sessionId, owned.right)
      }
    } finally {
      activeRunId = null
      activeAbort = null
      inflight.delete(boundaryKey)
      inflight.delete(sessionKey)
    }
  }

  const observeForRevalidation = async (c: NonNullable<ContinuationPlan['continuation']>) => {
    const header = await run(stores.runs.read(c.sessionId, c.sourceRunId))
    const ledger = await run(stores.events.read(c.sessionId, c.sourceRunId))
    const facts = E.isRight(header) ? await observeHostFacts(stores, deps.inspector)(c.sessionId, header.right)() : null
    const runs = await run(stores.runs.list(c.sessionId))
    const claim = await run(stores.claims.read(c.sessionId, c.sourceRunId, c.sourceRuntimeEventHighWater))
    let holder: string | null = null
    let targetExists = false
    if (E.isRight(runs)) {
      for (const entry of runs.right) {
        if (entry.runId === c.runId) targetExists = true
        if ('header' in entry) {
          const source = entry.header.continuationSource
          if (
            source !== undefined &&
            source.sourceRunId === c.sourceRunId &&
            source.sourceRuntimeEventHighWater === c.sourceRuntimeEventHighWater
          ) {
            holder = entry.runId
          }
        }
      }
    } else {
      // Without the list we cannot prove the boundary is free: fail closed.
      holder = 'unknown'
    }
    if (E.isLeft(claim)) holder = holder ?? 'unknown'
    else if (claim.right !== null) holder = holder ?? claim.right.targetRunId
    return {
      sourceHeader: E.isRight(header) ? header.right : null,
      ledger: E.isRight(ledger) ? ledger.right : null,
      facts: facts !== null && E.isRight(facts) ? facts.right : null,
      existingBoundaryHolder: holder,
      targetRunExists: targetExists,
    }
  }

  const executeOwned = async (
    c: NonNullable<ContinuationPlan['continuation']>,
    signal: AbortSignal,
  ): Promise<ContinuationResult> => {
    const observed = await observeForRevalidation(c)
    const codes = revalidate(c, observed)
    if (codes.length > 0) {
      emitExecutionFailed(c, c.runId, codes[0] ?? 'revalidation_failed')
      return reject(codes)
    }
    const source = observed.sourceHeader as AgentRun
    // The turns before this lineage; the plan's runtime context carries the lineage itself.
    const earlier = await loadSessionHistory(stores, c.sessionId, { before: c.sourceRunId })
    if (E.isLeft(earlier)) {
      emitExecutionFailed(c, c.runId, 'session_history_unreadable')
      return reject(['session_history_unreadable'])
    }
    const provider = deps.providerFor({ kind: 'continuation', runId: c.runId })
    const createdAt = nowIso()
    const continuationSource: ContinuationSource = {
      sourceInvocationId: c.sourceInvocationId as NonEmptyString,
      sourceRunId: c.sourceRunId as RunId,
      sourceTurnId: c.sourceTurnId as NonEmptyString,
      sourceRuntimeEventHighWater: c.sourceRuntimeEventHighWater as NonNegativeInt,
    }
    const header: AgentRun = {
      runId: c.runId as RunId,
      sessionId: c.sessionId as SessionId,
      turnId: c.turnId as NonEmptyString,
      invocationId: c.invocationId as NonEmptyString,
      status: 'created',
      cwd: source.cwd,
      providerId: provider.providerId as NonEmptyString,
      modelId: provider.modelId as NonEmptyString,
      ...providerBaseUrlOf(provider),
      createdAt,
      updatedAt: createdAt,
      workspaceIdentity: c.safetySnapshot.workspaceIdentity as NonEmptyString,
      parentRunId: c.sourceRunId as RunId,
      parentTurnId: c.sourceTurnId as NonEmptyString,
      continuationSource,
    }
    const claim: ContinuationClaim = {
      sessionId: c.sessionId as SessionId,
      ...continuationSource,
      targetInvocationId: header.invocationId,
      targetRunId: header.runId,
      targetTurnId: header.turnId,
      claimedAt: createdAt,
    }
    const failed = (
      stage: 'claim' | 'continuation_start' | 'run',
      errorClass: string,
      message: string,
      cause: { readonly error?: StoreError } = {},
    ): ContinuationResult => {
      emitExecutionFailed(c, c.runId, errorClass)
      return { _tag: 'Failed', stage, targetRunId: c.runId, errorClass, message, ...cause }
    }

    // The durable claim: the boundary file, then the target header, before any provider call.
    const claimed = await stores.claims.claimBoundary(claim, header)()
    if (E.isLeft(claimed)) {
      const conflict: ContinuationRejectionCode | null =
        claimed.left._tag === 'ClaimConflict'
          ? 'continuation_claim_conflict'
          : claimed.left._tag === 'RunAlreadyExists'
            ? 'target_run_conflict'
            : null
      if (conflict === null) {
        return failed('claim', `store_${claimed.left._tag}`, describeStoreError(claimed.left), { error: claimed.left })
      }
      // Reported like the same code found by revalidation: a lost claim race is a refused execution too.
      emitExecutionFailed(c, c.runId, conflict)
      return reject([conflict])
    }
    await crashPoint(c.runId)('after_run_created')

    const writer = newRunWriter(header)
    try {
      await writer.appendRow(makeContinuationStartEvent(header, writer.stamp(), continuationSource), { durable: true })
    } catch (error) {
      // Fail closed: no provider call, no terminal header; recovery closes the target later.
      return failed(
        'continuation_start',
        errorClassOf(error),
        'The continuation-start event could not be made durable.',
        storeErrorOf(error),
      )
    }
    await crashPoint(c.runId)('after_continuation_start_committed')
    emitSafely(deps.sink, {
      type: 'execution_started',
      sessionId: c.sessionId,
      sourceRunId: c.sourceRunId,
      targetRunId: c.runId,
    })
    try {
      await writer.setStatus('running')
      const outcome = await runLoop(
        writer,
        provider,
        [...earlier.right, ...c.runtimeContext],
        source.cwd,
        c.runId,
        signal,
      )
      const status = await finishRun(writer, outcome, c.runId)
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
        status,
        ...failureOf(outcome),
      }
    } catch (error) {
      return failed(
        'run',
        errorClassOf(error),
        'The continuation stopped before it could finish; recovery will close it.',
        storeErrorOf(error),
      )
    }
  }

  const resume = async (request: { readonly sessionId: string; readonly runId?: string }) => {
    const planned = await plan(request)
    return planned.disposition === 'continue' ? execute(planned) : ({ _tag: 'Parked', plan: planned } as const)
  }

  const recover = makeStartupRecovery({ stores, inspector: deps.inspector, clock, acquireOwnership, releaseOwnership })

  const cancel = (): string | null => {
    if (activeAbort === null || activeRunId === null) return null
    activeAbort.abort()
    return activeRunId
  }

  return { runTurn, plan, execute, resume, recover, cancel }
}
