/**
 * A session's memory: the provider history a new turn starts from. Each turn of a session is a
 * lineage — a normal run and the continuations that continued it — and its history is what the
 * lineage's latest run would replay (the ancestor walk's runtime context plus that run's own Phase 0
 * replay). A continuation's history already holds its source's, so a lineage counts once, through
 * its latest run. Lineages follow one another in the order their first runs were created; child
 * runs (sub-agents) are not part of the conversation. Anything that cannot be read fails closed:
 * the model must never be handed a history with a hole the user cannot see.
 */
import {
  type AgentRun,
  type RuntimeEvent,
  isChildRun,
  isFunctionCallEvent,
  isFunctionResponseEvent,
  isModelVisible,
  makeNonEmptyStringUnsafe,
} from '@maka/events'
import type { LedgerSnapshot } from '@maka/stores'
import { projectResumePlan } from '@maka/projection'
import * as E from 'fp-ts/lib/Either.js'
import {
  type AncestorRead,
  type ParkFinding,
  MAX_ANCESTOR_DEPTH,
  compareRunCreation,
  walkAncestors,
} from '@maka/planner'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * One run folder of the session as the store listed it: a readable header with its ledger, a header
 * whose ledger could not be read, or a header that could not be read.
 * @category models
 */
export type SessionRunRead =
  | AncestorRead
  | { readonly header: AgentRun; readonly ledgerUnavailable: string }
  | { readonly runId: string; readonly headerUnavailable: string }

/**
 * Why the session's history cannot be built; names the run and the kind of problem, never a row's values.
 * @category models
 */
export interface SessionHistoryProblem {
  readonly runId: string
  readonly reason: string
}

/**
 * Which lineages to include: all of them (a new turn), or only those whose first run was created
 * before the first run of `before`'s lineage (a continuation, whose own lineage its plan replays).
 * @category models
 */
export interface SessionHistoryOptions {
  readonly before?: string
}

// -------------------------------------------------------------------------------------
// internals
// -------------------------------------------------------------------------------------

const problem = (runId: string, reason: string): E.Either<SessionHistoryProblem, never> => E.left({ runId, reason })

// The one order of runs, so a lineage's tip is the run the "latest" entry would pick.
const createdBefore = (a: AgentRun, b: AgentRun): boolean => compareRunCreation(a, b) < 0

const describeFindings = (findings: ReadonlyArray<ParkFinding>): string => {
  const first = findings[0]
  const reason = first?.detail['reason']
  return typeof reason === 'string' ? reason : (first?.code ?? 'chain_unreadable')
}

const ledgerProblemOf = (ledger: LedgerSnapshot): string | null => {
  if (ledger.problem === null) return null
  return ledger.problem._tag === 'Unreadable'
    ? `ledger unreadable at line ${ledger.problem.line}`
    : `ledger line ${ledger.problem.line} belongs to another ${ledger.problem.field === 'runId' ? 'run' : 'session'}`
}

/** The first run of a run's lineage, following `continuationSource` through the listed headers. */
const rootOf = (
  header: AgentRun,
  byRunId: ReadonlyMap<string, AgentRun>,
): E.Either<SessionHistoryProblem, AgentRun> => {
  let current = header
  for (let depth = 0; current.continuationSource !== undefined; depth += 1) {
    const sourceId: string = current.continuationSource.sourceRunId
    const source = byRunId.get(sourceId)
    if (source === undefined) return problem(current.runId, 'continuation source is missing')
    if (depth >= MAX_ANCESTOR_DEPTH) return problem(current.runId, 'chain_too_deep')
    current = source
  }
  return E.right(current)
}

/** What the model is told of a call its turn left without an outcome (decision 171). */
export const UNKNOWN_OUTCOME_RESULT = {
  error:
    'The turn was interrupted while this call was open: whether it ran, and what it did, is unknown. Check before relying on it or repeating it.',
} as const

/** What the model is told of a turn that ended before it answered (decision 171). */
export const INTERRUPTED_TURN_NOTE = '(This turn was interrupted before an answer.)'

// A lineage's history as the model will read it, closed: every call the tip's ledger holds gets a
// response (the replay's own, or one that says its outcome is unknown), and a turn that ended with
// the user's words gets a note, so the next turn never opens with two user messages in a row.
const closeInterruptedTurn = (
  context: ReadonlyArray<RuntimeEvent>,
  tipEvents: ReadonlyArray<RuntimeEvent>,
): ReadonlyArray<RuntimeEvent> => {
  const answered = new Set(context.filter(isFunctionResponseEvent).map((event) => event.content.id))
  const replayed = new Set(context.filter(isFunctionCallEvent).map((event) => event.content.id))
  const closed = [...context]
  for (const call of tipEvents) {
    if (!isFunctionCallEvent(call) || call.partial || answered.has(call.content.id)) continue
    if (!replayed.has(call.content.id)) closed.push(call)
    answered.add(call.content.id)
    closed.push({
      id: makeNonEmptyStringUnsafe(`${call.id}-outcome-unknown`),
      sessionId: call.sessionId,
      invocationId: call.invocationId,
      runId: call.runId,
      turnId: call.turnId,
      ts: call.ts,
      partial: false,
      role: 'tool',
      author: 'tool',
      content: {
        kind: 'function_response',
        id: call.content.id,
        name: call.content.name,
        result: UNKNOWN_OUTCOME_RESULT,
        isError: true,
      },
      refs: { toolCallId: call.content.id },
    })
  }
  const last = [...closed].reverse().find(isModelVisible)
  if (last !== undefined && last.role === 'user') {
    closed.push({
      id: makeNonEmptyStringUnsafe(`${last.id}-interrupted`),
      sessionId: last.sessionId,
      invocationId: last.invocationId,
      runId: last.runId,
      turnId: last.turnId,
      ts: last.ts,
      partial: false,
      role: 'model',
      author: 'agent',
      status: 'completed',
      content: { kind: 'text', text: INTERRUPTED_TURN_NOTE },
    })
  }
  return closed
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * The replayable history of a session's earlier turns, oldest lineage first; a new turn appends its
 * user message to it, a continuation its own runtime context.
 * @category constructors
 */
export const sessionHistory = (
  runs: ReadonlyArray<SessionRunRead>,
  options: SessionHistoryOptions = {},
): E.Either<SessionHistoryProblem, ReadonlyArray<RuntimeEvent>> => {
  const reads = new Map<string, AncestorRead>()
  const headers = new Map<string, AgentRun>()
  for (const entry of runs) {
    // A header that cannot be read may be any run, a turn of this conversation included.
    if ('headerUnavailable' in entry) return problem(entry.runId, `run header ${entry.headerUnavailable}`)
    if (isChildRun(entry.header)) continue
    headers.set(entry.header.runId, entry.header)
    if ('ledger' in entry) reads.set(entry.header.runId, entry)
  }
  const rootsAndTips = new Map<string, { readonly root: AgentRun; tip: AgentRun }>()
  for (const header of headers.values()) {
    const root = rootOf(header, headers)
    if (E.isLeft(root)) return root
    const lineage = rootsAndTips.get(root.right.runId)
    if (lineage === undefined) rootsAndTips.set(root.right.runId, { root: root.right, tip: header })
    else if (createdBefore(lineage.tip, header)) lineage.tip = header
  }
  let lineages = [...rootsAndTips.values()].sort((a, b) => (createdBefore(a.root, b.root) ? -1 : 1))
  if (options.before !== undefined) {
    const own = headers.get(options.before)
    if (own === undefined) return problem(options.before, 'run is not listed')
    const ownRoot = rootOf(own, headers)
    if (E.isLeft(ownRoot)) return ownRoot
    lineages = lineages.filter((lineage) => createdBefore(lineage.root, ownRoot.right))
  }
  const history: Array<RuntimeEvent> = []
  for (const { tip } of lineages) {
    const read = reads.get(tip.runId)
    if (read === undefined) {
      const unavailable = runs.find((entry) => 'ledgerUnavailable' in entry && entry.header.runId === tip.runId)
      return problem(
        tip.runId,
        unavailable !== undefined && 'ledgerUnavailable' in unavailable
          ? `ledger ${unavailable.ledgerUnavailable}`
          : 'ledger not loaded',
      )
    }
    const own = ledgerProblemOf(read.ledger)
    if (own !== null) return problem(tip.runId, own)
    // The same walk a resume of this lineage would make: the pinned ancestors' replay, then the tip's.
    const chain = walkAncestors({
      source: tip,
      sourceEvents: read.ledger.events,
      sourceReplay: projectResumePlan(read.ledger.events).replayRuntimeEvents,
      ancestors: (runId) => {
        const found = reads.get(runId)
        if (found !== undefined) return E.right(found)
        return E.left({ stage: headers.has(runId) ? 'ledger' : 'run', cause: 'not readable' })
      },
    })
    if (E.isLeft(chain)) return problem(tip.runId, describeFindings(chain.left))
    history.push(...closeInterruptedTurn(chain.right.runtimeContext, read.ledger.events))
  }
  return E.right(history)
}
