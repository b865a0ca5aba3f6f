/**
 * The runtime's `resolve`: a person's verdict on an open tool call, recorded once in an adjudication
 * run. The shell around the pure decisions of `decideResolve.ts`: the input checks, the recovery
 * pass, a plan of the latest candidate, the owner lock and a re-read of the source under it, the
 * refusals, then the writes through the performer. Exactly one adjudication per boundary comes from
 * the boundary claim every continuation takes: a loser finds the claim and refuses.
 */
import {
  type AgentRun,
  type RuntimeEvent,
  Sha256Digest,
  describeCode,
  isFunctionCallEvent,
  operationIdOf,
} from '@maka/events'
import {
  type ContinuationPlan,
  ResolveRefusalSentences,
  boundaryHolderOf,
  isResolveRefusalCode,
  latestTopLevelRun,
} from '@maka/planner'
import { type StorePorts, describeStoreError } from '@maka/stores'
import * as E from 'fp-ts/lib/Either.js'
import {
  type ChainCall,
  type ResolveRefusal,
  checkResolveRequest,
  decideAdjudication,
  earlyExitRefusal,
  isAdjudicationStart,
  selectResolveOperation,
} from './decideResolve.js'
import { emitSafely } from './lifecycle.js'
import { observeJournal } from './observeJournal.js'
import { adjudicationWrites } from './performWrites.js'
import type { RecoveryReport } from './RecoveryAction.js'
import type { ResolveRequest, ResolveResult } from './Runtime.js'
import type { RunContext } from './runContext.js'

/** The most ancestors a chain may have (the planner's walk refuses more). */
const MAX_DEPTH = 64

const sentenceOf = (code: string): string =>
  isResolveRefusalCode(code) ? ResolveRefusalSentences[code] : describeCode(code)

const refused = (refusal: ResolveRefusal): ResolveResult => ({
  _tag: 'Refused',
  codes: refusal.codes,
  messages: refusal.codes.map(sentenceOf),
  ...(refusal.detail === undefined ? {} : { detail: refusal.detail }),
})

// Every call row of the chain: the source whole, each ancestor up to the high-water its child pinned.
const readChainCalls = async (
  stores: StorePorts,
  sessionId: string,
  source: AgentRun,
): Promise<ReadonlyArray<ChainCall> | null> => {
  const segments: Array<ReadonlyArray<ChainCall>> = []
  const readSegment = async (runId: string, limit: number) => {
    const calls: Array<ChainCall> = []
    let row = 0
    const read = await stores.events.fold(sessionId, runId, (event) => {
      row += 1
      if (row <= limit && !event.partial && isFunctionCallEvent(event)) {
        calls.push({
          operationId: operationIdOf(runId, row),
          toolCallId: event.content.id,
          toolName: event.content.name,
          runId,
        })
      }
    })()
    return E.isLeft(read) || read.right.problem !== null ? null : calls
  }
  const own = await readSegment(source.runId, Number.MAX_SAFE_INTEGER)
  if (own === null) return null
  segments.push(own)
  let child = source
  for (let depth = 0; child.continuationSource !== undefined && depth < MAX_DEPTH; depth += 1) {
    const pin = child.continuationSource
    const header = await stores.runs.read(sessionId, pin.sourceRunId)()
    if (E.isLeft(header)) return null
    const calls = await readSegment(pin.sourceRunId, pin.sourceRuntimeEventHighWater)
    if (calls === null) return null
    segments.unshift(calls)
    child = header.right
  }
  return segments.flat()
}

/**
 * How long a resolve waits for a live owner of the session to let go (another resolve, a resume, a
 * recovery pass) before it refuses with `session_owner_alive`: the owner may be settling the very
 * boundary, and the answer is then the one-claim rule's (`continuation_claim_conflict`,
 * `resolve_call_settled`), not "someone is busy".
 */
const OWNER_WAIT_MS = 10_000
const OWNER_POLL_MS = 50

// A live owner holds the session, or (the planner's exit 9, met between another process's claim and
// its run's header) the boundary is being taken right now: judged again once that settles.
const WAITED_CODES: ReadonlySet<string> = new Set(['session_owner_alive', 'continuation_already_exists'])

const ownerHeld = (result: ResolveResult): boolean =>
  result._tag === 'Refused' && result.codes.length === 1 && WAITED_CODES.has(result.codes[0] ?? '')

/**
 * Builds `resolve` over the runtime's shared parts, its planner and its recovery pass.
 * @category constructors
 */
export const makeResolve = (
  ctx: RunContext,
  plan: (request: { readonly sessionId: string }) => Promise<ContinuationPlan>,
  recover: (options: { readonly sessionIds: ReadonlyArray<string> }) => Promise<RecoveryReport>,
): ((request: ResolveRequest) => Promise<ResolveResult>) => {
  const once = resolveOnce(ctx, plan, recover)
  return async (request) => {
    // Real time, not the runtime's clock: this is how long a person waits.
    const deadline = Date.now() + OWNER_WAIT_MS
    for (;;) {
      const result = await once(request)
      if (!ownerHeld(result) || Date.now() >= deadline) return result
      await new Promise((done) => setTimeout(done, OWNER_POLL_MS))
    }
  }
}

const resolveOnce =
  (
    ctx: RunContext,
    plan: (request: { readonly sessionId: string }) => Promise<ContinuationPlan>,
    recover: (options: { readonly sessionIds: ReadonlyArray<string> }) => Promise<RecoveryReport>,
  ) =>
  async (unchecked: ResolveRequest): Promise<ResolveResult> => {
    const { deps, stores } = ctx
    const checked = checkResolveRequest(unchecked, {
      safeBoundaryResumeEnabled: deps.safeBoundaryResumeEnabled,
      toolJournal: deps.toolJournal === true,
      durableAppend: stores.capabilities.durableAppend,
    })
    if (E.isLeft(checked)) return checked.left
    const request = checked.right
    const { sessionId } = request

    // The recovery pass, then the plan of the latest candidate: its early exits refuse first.
    const recovery = await recover({ sessionIds: [sessionId] })
    if (recovery.unwritable.some((u) => u.sessionId === sessionId)) return refused({ codes: ['recovery_unwritable'] })
    const planned = await plan({ sessionId })
    const early = earlyExitRefusal(planned)
    if (early !== null) return refused(early)
    const sourceRunId = planned.sourceRunId
    const highWater = planned.sourceRuntimeEventHighWater
    if (sourceRunId === null || highWater === null) return refused({ codes: ['resume_candidate_missing'] })

    const owned = await ctx.ownership.acquireOwnership(sessionId)
    if (E.isLeft(owned)) {
      if (owned.left._tag === 'OwnerLockHeld') return refused({ codes: ['session_owner_alive'] })
      return { _tag: 'Failed', stage: 'ownership', message: describeStoreError(owned.left), error: owned.left }
    }
    try {
      // The source re-read under the lock: the boundary planned, unchanged, and still free.
      const header = await stores.runs.read(sessionId, sourceRunId)()
      if (E.isLeft(header)) return refused({ codes: ['source_run_unreadable'] })
      const source = header.right
      const journal = await observeJournal(stores, sessionId, source)
      if (journal.sourceLedger === null || journal.projection === null || journal.sourceDigest === null) {
        return refused({ codes: ['runtime_ledger_unreadable'] })
      }
      if (journal.sourceEvents.length !== highWater || journal.sourceLedger.highWater !== highWater) {
        return refused({ codes: ['source_high_water_changed'] })
      }
      const plannedDigest = planned.sourceRuntimeEventPrefixDigest
      if ((plannedDigest !== null && plannedDigest !== journal.sourceDigest) || !journal.pinsHold) {
        return refused({ codes: ['source_prefix_digest_changed'] })
      }
      const runs = await stores.runs.list(sessionId)()
      const claim = await stores.claims.read(sessionId, sourceRunId, highWater)()
      if (E.isLeft(runs) || E.isLeft(claim)) return refused({ codes: ['continuation_claim_conflict'] })
      const headers = runs.right.flatMap((entry) => ('header' in entry ? [entry.header] : []))
      if (claim.right !== null || boundaryHolderOf(headers, [], { sourceRunId, highWater }) !== undefined) {
        return refused({ codes: ['continuation_claim_conflict'] })
      }
      const calls = await readChainCalls(stores, sessionId, source)
      if (calls === null) return refused({ codes: ['runtime_ledger_unreadable'] })

      const selected = selectResolveOperation(
        {
          plan: planned,
          calls,
          projection: journal.projection,
          sourceEvents: journal.sourceEvents,
          sourceProtocol: journal.sourceJournal?.protocol === true,
        },
        request,
      )
      if (E.isLeft(selected)) return refused(selected.left)
      const operation = selected.right
      if (!Sha256Digest.is(journal.sourceDigest)) {
        return { _tag: 'Failed', stage: 'adjudication', message: 'The source prefix digest could not be computed.' }
      }

      const ids = { runId: ctx.newRunId(), turnId: ctx.newTurnId(), invocationId: ctx.newInvocationId() }
      const adjudication = decideAdjudication({
        ids,
        sourceHeader: source,
        sourceRuntimeEventHighWater: highWater,
        prefixDigest: journal.sourceDigest,
        operation,
        verdict: request.verdict,
        actor: request.actor,
        ...(request.output === undefined ? {} : { output: request.output }),
        createdAt: ctx.nowIso(),
        ts: ctx.clock().getTime(),
      })
      let written: Awaited<ReturnType<typeof ctx.perform>>
      try {
        written = await ctx.perform(adjudicationWrites(adjudication))
      } catch {
        // A throw is a bug, or a crash point that simulates a kill: recovery closes the run.
        return { _tag: 'Failed', stage: 'adjudication', message: 'The adjudication stopped before it was recorded.' }
      }
      if (E.isLeft(written)) {
        const failure = written.left
        if (failure._tag === 'NotOpened') {
          if (failure.error._tag === 'ClaimConflict') return refused({ codes: ['continuation_claim_conflict'] })
          if (failure.error._tag === 'RunAlreadyExists') return refused({ codes: ['target_run_conflict'] })
          return { _tag: 'Failed', stage: 'claim', message: describeStoreError(failure.error), error: failure.error }
        }
        return {
          _tag: 'Failed',
          stage: 'adjudication',
          message: 'The adjudication could not be made durable; recovery will close its run.',
          ...(failure.failure._tag === 'RunWriteFailed' ? { error: failure.failure.error } : {}),
        }
      }
      emitSafely(deps.sink, {
        type: 'call_resolved',
        sessionId,
        sourceRunId,
        targetRunId: ids.runId,
        operationId: operation.operationId,
        verdict: request.verdict,
        actor: request.actor,
      })
      return {
        _tag: 'Resolved',
        sessionId,
        sourceRunId,
        targetRunId: ids.runId,
        operationId: operation.operationId,
        toolCallId: operation.toolCallId,
        verdict: request.verdict,
      }
    } finally {
      await ctx.ownership.releaseOwnership(sessionId, owned.right)
    }
  }

/**
 * True when the session's latest top-level run is an adjudication run (its start row lists an
 * `adjudicate` entry), whatever its failure class: resolving is an explicit act, and so is resuming
 * after it, so start-up auto-continuation leaves such a session to the person.
 * @category guards
 */
export const awaitsExplicitResume = async (stores: StorePorts, sessionId: string): Promise<boolean> => {
  const listed = await stores.runs.list(sessionId)()
  if (E.isLeft(listed)) return false
  const latest = latestTopLevelRun(listed.right.flatMap((entry) => ('header' in entry ? [entry.header] : [])))
  if (latest?.continuationSource === undefined) return false
  let first: RuntimeEvent | undefined
  const read = await stores.events.fold(sessionId, latest.runId, (event) => {
    first ??= event
  })()
  return E.isRight(read) && isAdjudicationStart(first)
}
