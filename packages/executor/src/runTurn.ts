/**
 * A normal turn: guard, ownership, the session's workspace and history (all read before anything
 * of the turn is written), then the decided first rows, the model/tool loop and the terminal writes.
 */
import { realpath } from 'node:fs/promises'
import * as E from 'fp-ts/lib/Either.js'
import {
  AbsolutePath,
  NonEmptyString,
  type RunId,
  ExecutionRejectionSentences,
  SessionId,
  describeParkReason,
} from '@maka/events'
import { observeWorkspace } from '@maka/host-inspector'
import { normalizeCwd } from '@maka/planner'
import { describeSessionHistoryProblem, loadSessionHistory, sessionTitleOf } from '@maka/sessions'
import { type StoreError, describeStoreError } from '@maka/stores'
import { decideTurnStart, providerIdentityOf } from './decideTurnStart.js'
import { failureOf } from './decideTerminal.js'
import { turnStartWrites } from './performWrites.js'
import { type RunContext, errorClassOf, storeErrorOf } from './runContext.js'
import { type RunStop, rowStamp, runThrew } from './runWriter.js'
import type { TurnRequest, TurnResult } from './Runtime.js'

const workspaceUnavailable: TurnResult = {
  _tag: 'Refused',
  code: 'workspace_unavailable',
  message: 'The workspace directory does not exist or cannot be read.',
}

const storeRefusal = (error: StoreError): TurnResult => ({
  _tag: 'Refused',
  code: 'store_failed',
  message: describeStoreError(error),
  error,
})

/**
 * The runtime's `runTurn` over the shared parts.
 * @category constructors
 */
export const makeRunTurn = (ctx: RunContext): ((request: TurnRequest) => Promise<TurnResult>) => {
  const { deps, stores, nowIso, newId } = ctx

  /** An existing session keeps its recorded cwd; a new one records the real path of the request's. */
  const sessionCwd = async (
    sessionId: SessionId,
    requestedCwd: string,
    prompt: string,
  ): Promise<E.Either<TurnResult, AbsolutePath>> => {
    const existing = await stores.sessions.read(sessionId)()
    if (E.isRight(existing)) return E.right(existing.right.cwd)
    if (existing.left._tag !== 'NotFound') return E.left(storeRefusal(existing.left))
    let cwd: string
    try {
      cwd = normalizeCwd(await realpath(requestedCwd))
    } catch {
      return E.left(workspaceUnavailable)
    }
    // realpath answers an absolute path; anything else is not a workspace (fail closed).
    if (!AbsolutePath.is(cwd)) return E.left(workspaceUnavailable)
    // A new session is titled by its first prompt, so listings name it by what it was for.
    const created = await stores.sessions.create({
      sessionId,
      cwd,
      createdAt: nowIso(),
      title: sessionTitleOf(prompt),
    })()
    return E.isLeft(created) ? E.left(storeRefusal(created.left)) : E.right(cwd)
  }

  const runTurnOwned = async (
    sessionId: SessionId,
    runId: RunId,
    request: TurnRequest,
    signal: AbortSignal,
  ): Promise<TurnResult> => {
    const cwdResult = await sessionCwd(sessionId, request.cwd, request.prompt)
    if (E.isLeft(cwdResult)) return cwdResult.left
    let cwd = cwdResult.right
    let workspaceIdentity: NonEmptyString | undefined
    // Every turn records its workspace identity, so a crash of a turn run without the flag can be
    // resumed once the flag is on (decision 189). With the flag the inspection is a gate (fail
    // closed); without it a workspace the inspector cannot read runs as before, with no identity.
    const observed = await observeWorkspace(cwd)()
    if (E.isRight(observed)) {
      const { canonicalPath, identity } = observed.right
      // The inspector answers a realpath and `fs:<dev>:<ino>:<path>`; anything else fails closed.
      if (AbsolutePath.is(canonicalPath) && NonEmptyString.is(identity)) {
        cwd = canonicalPath
        workspaceIdentity = identity
      } else if (deps.safeBoundaryResumeEnabled) return workspaceUnavailable
    } else if (deps.safeBoundaryResumeEnabled) {
      return { _tag: 'Refused', code: 'workspace_unavailable', message: observed.left.message }
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
    const turnId = ctx.newTurnId()
    const invocationId = ctx.newInvocationId()
    const start = decideTurnStart({
      sessionId,
      runId,
      turnId,
      invocationId,
      cwd,
      workspaceIdentity,
      provider: providerIdentityOf(provider),
      permissionMode: ctx.permissionMode,
      prompt: request.prompt,
      createdAt,
      stamp: rowStamp(runId, 1, ctx.clock().getTime()),
      protocol: ctx.protocol,
    })
    // A write failed mid-run: the run stays non-terminal and startup recovery will close it.
    const interrupted = (stop: RunStop): TurnResult => ({
      _tag: 'Interrupted',
      sessionId,
      runId,
      message: `The run stopped: ${errorClassOf(stop)}.`,
      ...storeErrorOf(stop),
    })
    try {
      const opened = await ctx.perform(turnStartWrites(start))
      if (E.isLeft(opened)) {
        return opened.left._tag === 'NotOpened' ? storeRefusal(opened.left.error) : interrupted(opened.left.failure)
      }
      const writer = opened.right
      const outcome = await ctx.runLoop({ writer, provider, history: history.right, cwd, signal })()
      if (E.isLeft(outcome)) return interrupted(outcome.left)
      const status = await ctx.finishRun(writer, outcome.right)
      if (E.isLeft(status)) {
        return status.left._tag === 'NotOpened' ? storeRefusal(status.left.error) : interrupted(status.left.failure)
      }
      return { _tag: 'Finished', sessionId, runId, status: status.right, ...failureOf(outcome.right) }
    } catch {
      // A throw is a bug or a crash point that simulates a kill: the run stops where it is.
      return interrupted(runThrew)
    }
  }

  return async (request) => {
    const sessionId: string = request.sessionId ?? newId('session')
    if (!SessionId.is(sessionId)) {
      return { _tag: 'Refused', code: 'invalid_id', message: 'The session id may only use letters, digits, _ and -.' }
    }
    const entered = ctx.guard.enterTurn(ctx.newRunId)
    if (E.isLeft(entered)) {
      return { _tag: 'Refused', code: 'another_run_active', message: ExecutionRejectionSentences.another_run_active }
    }
    const lease = entered.right
    try {
      const owned = await ctx.ownership.acquireOwnership(sessionId)
      if (E.isLeft(owned)) {
        return owned.left._tag === 'OwnerLockHeld'
          ? { _tag: 'Refused', code: 'session_owner_alive', message: describeParkReason('session_owner_alive') }
          : { _tag: 'Refused', code: 'store_failed', message: describeStoreError(owned.left), error: owned.left }
      }
      try {
        return await runTurnOwned(sessionId, lease.runId, request, lease.signal)
      } finally {
        await ctx.ownership.releaseOwnership(sessionId, owned.right)
      }
    } finally {
      lease.release()
    }
  }
}
