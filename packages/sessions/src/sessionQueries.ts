/**
 * The read model every host shows a data directory through: which run of a session is its latest,
 * whether the session was interrupted, the lineage tree of its runs and each ledger as a timeline.
 * One rule orders runs — the instant of `createdAt`, then `runId`, `@maka/planner`'s
 * `compareRunCreation` — and the planner's "latest" entry uses the same rule, so a listing and
 * `resume plan` never name different runs. Pure: the loaders of this package read headers, ledgers
 * and owner locks over the store ports and pass them in.
 */
import {
  type AdjudicationActor,
  type AdjudicationVerdict,
  type AgentRun,
  type RuntimeEvent,
  type SettlementAction,
  type SettlementOrigin,
  type SessionRecord,
  isChildRun,
  isContinuationRun,
  isTerminalRunStatus,
} from '@maka/events'
import { compareRunCreation, latestTopLevelRun } from '@maka/planner'
import { makeResumeProjector } from '@maka/projection'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * What kind of run a header describes.
 * @category models
 */
export type RunKind = 'turn' | 'continuation' | 'child'

/**
 * One run folder as a host listed it: a readable header, or why it could not be read. A folder
 * whose header was never created is no run (decisions #10) and must not be listed.
 * @category models
 */
export type ListedRun =
  { readonly runId: string; readonly header: AgentRun } | { readonly runId: string; readonly error: string }

/**
 * A run as the listings show it.
 * @category models
 */
export interface RunBrief {
  readonly runId: string
  readonly kind: RunKind
  readonly status: AgentRun['status']
  readonly failureClass?: string
  readonly createdAt: string
}

/**
 * A run whose header exists but cannot be read, and why.
 * @category models
 */
export interface UnreadableRun {
  readonly runId: string
  readonly error: string
}

/**
 * What a host read of one session for its summary.
 * @category models
 */
export interface SessionFacts {
  readonly sessionId: string
  /** The session record, or why `session.json` could not be read. */
  readonly record:
    { readonly _tag: 'Read'; readonly record: SessionRecord } | { readonly _tag: 'Unread'; readonly error: string }
  readonly runs: ReadonlyArray<ListedRun>
  /** A live process owns the session now. */
  readonly ownerAlive: boolean
}

/**
 * One session of a listing.
 * @category models
 */
export interface SessionSummary {
  readonly sessionId: string
  readonly cwd: string | null
  readonly createdAt: string | null
  readonly title?: string
  /** Why `session.json` could not be read, when it could not. */
  readonly error?: string
  /** Runs with a header, readable or not. */
  readonly runCount: number
  /**
   * Runs whose `run.json` exists but cannot be read: they cannot be ordered, so `latestRun` (the
   * newest readable one) may not be the session's latest, and resuming parks until they are fixed.
   */
  readonly unreadableRuns: ReadonlyArray<UnreadableRun>
  readonly latestRun: RunBrief | null
  /**
   * The latest top-level run failed with `app_restarted` (or `operator_resolved`: a person recorded an
   * interrupted call's outcome and the turn waits to be resumed), or is non-terminal with no live owner.
   */
  readonly interrupted: boolean
  /** A live process owns the session now. */
  readonly ownerAlive: boolean
}

/**
 * A run's place in the session's lineage tree.
 * @category models
 */
export interface LineageNode {
  readonly runId: string
  /** `unreadable` when the header could not be read: such a run has no known parent. */
  readonly kind: RunKind | 'unreadable'
  /** The continuation's source or the child's parent, when that run is listed in the session. */
  readonly parentRunId: string | null
  readonly children: ReadonlyArray<string>
}

/**
 * A session's lineage tree: `roots` have no listed parent; `nodes` are readable runs in creation
 * order, then unreadable ones in listing order.
 * @category models
 */
export interface SessionLineage {
  readonly roots: ReadonlyArray<string>
  readonly nodes: ReadonlyArray<LineageNode>
}

/**
 * How an operation was closed in a later run than its call (Phase 2): a reissue, a probe that found
 * it applied, a command watched to its end, or a person's verdict (`resolve`) — with the verdict and
 * the host it was recorded through. `settlementOrigin` is null for an entry of a run's settlement
 * plan whose response was never written (the run stopped first; the operation stayed open).
 * @category models
 */
export interface Settlement {
  readonly operationId: string
  readonly toolCallId: string
  /** The run whose ledger holds the settlement. */
  readonly runId: string
  readonly action: SettlementAction | null
  readonly settlementOrigin: SettlementOrigin | null
  readonly isError?: boolean
  readonly verdict?: AdjudicationVerdict
  readonly actor?: AdjudicationActor
}

/**
 * One row of a ledger timeline: the host's own summary of the event, its 1-based position, and the
 * Phase 0 status of the tool operation it belongs to. A response that settles an earlier run's
 * operation carries `settlement` instead of a status; a call settled in a later run of the
 * lineage carries `settledBy` (from a session outline).
 * @category models
 */
export type TimelineEntry<S> = S & {
  readonly index: number
  readonly eventId: string
  readonly operationStatus?: string
  readonly settlement?: Settlement
  readonly settledBy?: Settlement
}

/**
 * The timeline of a ledger too long to hold, in two passes over the same rows: `add` takes each row
 * of the first pass, in ledger order; `finish` then answers the entry of a row of the second pass
 * from its 1-based index, the row and the host's summary of it. Holds the status of each tool
 * operation only.
 * @category models
 */
export interface TimelineFold {
  readonly add: (event: RuntimeEvent) => void
  /** The settlements the folded run holds (its plan's entries and the responses that close them). */
  readonly settlements: () => ReadonlyArray<Settlement>
  readonly finish: () => <S extends { readonly toolCallId?: string }>(
    index: number,
    event: RuntimeEvent,
    summary: S,
  ) => TimelineEntry<S>
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

// The instant a timestamp stands for; an unparsable one sorts first (the codecs let none through).
const instantOf = (createdAt: string | null): number => {
  const ms = createdAt === null ? Number.NaN : Date.parse(createdAt)
  return Number.isNaN(ms) ? Number.NEGATIVE_INFINITY : ms
}

const byIdThen = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/**
 * A continuation hangs under its source; a child run under its parent.
 * @category constructors
 */
export const runKindOf = (header: AgentRun): RunKind =>
  isContinuationRun(header) ? 'continuation' : isChildRun(header) ? 'child' : 'turn'

// An adjudication run (`resolve`) ends `operator_resolved`: its turn waits to be resumed, like a crashed one.
const INTERRUPTED_CLASSES: ReadonlySet<string> = new Set(['app_restarted', 'operator_resolved'])

/**
 * A run was interrupted when it failed because the app restarted (or a person resolved its open
 * call), or has not ended and no live process owns its session.
 * @category constructors
 */
export const isInterrupted = (run: AgentRun, ownerAlive: boolean): boolean =>
  (run.status === 'failed' && run.failureClass !== undefined && INTERRUPTED_CLASSES.has(run.failureClass)) ||
  (!isTerminalRunStatus(run.status) && !ownerAlive)

const brief = (header: AgentRun): RunBrief => ({
  runId: header.runId,
  kind: runKindOf(header),
  status: header.status,
  ...(header.failureClass === undefined ? {} : { failureClass: header.failureClass }),
  createdAt: header.createdAt,
})

/**
 * A session's summary: its latest top-level run and whether it was interrupted.
 * @category constructors
 */
export const summarizeSession = (facts: SessionFacts): SessionSummary => {
  const headers = facts.runs.flatMap((run) => ('header' in run ? [run.header] : []))
  const unreadableRuns = facts.runs.flatMap((run) => ('error' in run ? [{ runId: run.runId, error: run.error }] : []))
  const latest = latestTopLevelRun(headers)
  const record = facts.record._tag === 'Read' ? facts.record.record : null
  return {
    sessionId: facts.sessionId,
    cwd: record?.cwd ?? null,
    createdAt: record?.createdAt ?? null,
    ...(record?.title === undefined ? {} : { title: record.title }),
    ...(facts.record._tag === 'Unread' ? { error: facts.record.error } : {}),
    runCount: facts.runs.length,
    unreadableRuns,
    latestRun: latest === undefined ? null : brief(latest),
    interrupted: latest !== undefined && isInterrupted(latest, facts.ownerAlive),
    ownerAlive: facts.ownerAlive,
  }
}

/**
 * Sessions oldest first, by the instant of their `createdAt` (an unreadable record first), then
 * their id — the order runs follow, for the same reason.
 * @category constructors
 */
export const compareSessions = (
  a: { readonly sessionId: string; readonly createdAt: string | null },
  b: { readonly sessionId: string; readonly createdAt: string | null },
): number => instantOf(a.createdAt) - instantOf(b.createdAt) || byIdThen(a.sessionId, b.sessionId)

/**
 * The most recent session with a readable record, by {@link compareSessions}.
 * @category constructors
 */
export const mostRecentSession = <S extends { readonly sessionId: string; readonly createdAt: string | null }>(
  sessions: ReadonlyArray<S>,
): S | undefined =>
  sessions
    .filter((s) => s.createdAt !== null)
    .reduce<S | undefined>((best, s) => (best === undefined || compareSessions(best, s) < 0 ? s : best), undefined)

const parentOf = (header: AgentRun): string | null =>
  header.continuationSource?.sourceRunId ?? header.parentRunId ?? null

/**
 * A session's runs as a lineage tree: a continuation under its source, a child run under its parent.
 * @category constructors
 */
export const sessionLineage = (runs: ReadonlyArray<ListedRun>): SessionLineage => {
  const headers = runs.flatMap((run) => ('header' in run ? [run.header] : [])).sort(compareRunCreation)
  const known = new Set(runs.map((run) => run.runId))
  const listedParent = (header: AgentRun): string | null => {
    const parent = parentOf(header)
    return parent !== null && known.has(parent) ? parent : null
  }
  const children = new Map<string, Array<string>>()
  for (const header of headers) {
    const parent = listedParent(header)
    if (parent !== null) children.set(parent, [...(children.get(parent) ?? []), header.runId])
  }
  const nodes: Array<LineageNode> = [
    ...headers.map((header) => ({
      runId: header.runId,
      kind: runKindOf(header),
      parentRunId: listedParent(header),
      children: children.get(header.runId) ?? [],
    })),
    ...runs.flatMap((run) =>
      'error' in run ? [{ runId: run.runId, kind: 'unreadable' as const, parentRunId: null, children: [] }] : [],
    ),
  ]
  return { roots: nodes.filter((node) => node.parentRunId === null).map((node) => node.runId), nodes }
}

/**
 * The continuations of a run, oldest first.
 * @category constructors
 */
export const continuationsOf = (headers: ReadonlyArray<AgentRun>, runId: string): ReadonlyArray<AgentRun> =>
  headers.filter((header) => header.continuationSource?.sourceRunId === runId).sort(compareRunCreation)

/**
 * Starts a {@link TimelineFold}; fed the rows of `ledgerTimeline`, it answers the same entries.
 * @category constructors
 */
export const makeTimelineFold = (): TimelineFold => {
  const projector = makeResumeProjector({ retainArgs: false })
  // Settlements of earlier runs' operations, by operation id, in plan order; and by row.
  const settlements = new Map<string, Settlement>()
  const settlingRows = new Map<number, string>()
  let rows = 0
  const add = (event: RuntimeEvent): void => {
    rows += 1
    const plan = rows === 1 ? event.actions?.settlementPlan : undefined
    for (const entry of plan ?? []) {
      settlements.set(entry.operationId, {
        operationId: entry.operationId,
        toolCallId: entry.toolCallId,
        runId: event.runId,
        action: entry.action,
        settlementOrigin: null,
      })
    }
    const outcome = event.actions?.toolOutcome
    // A response for an operation of another run closes it there; Phase 0 of this ledger, which
    // knows no call for it, must not read it as an unmatched result.
    if (
      outcome !== undefined &&
      !event.partial &&
      event.content?.kind === 'function_response' &&
      !outcome.operationId.startsWith(`${event.runId}-o`)
    ) {
      const planned = settlements.get(outcome.operationId)
      settlements.set(outcome.operationId, {
        operationId: outcome.operationId,
        toolCallId: event.content.id,
        runId: event.runId,
        action: planned?.action ?? null,
        settlementOrigin: outcome.settlementOrigin,
        isError: event.content.isError === true,
        ...(outcome.adjudication === undefined
          ? {}
          : { verdict: outcome.adjudication.verdict, actor: outcome.adjudication.actor }),
      })
      settlingRows.set(rows, outcome.operationId)
      return
    }
    projector.add(event)
  }
  return {
    add,
    settlements: () => [...settlements.values()],
    finish: () => {
      const operations = new Map(projector.finish().operations.map((op) => [op.toolCallId, op.status]))
      return (index, event, summary) => {
        const settling = settlingRows.get(index)
        const settlement = settling === undefined ? undefined : settlements.get(settling)
        const status =
          settlement !== undefined || summary.toolCallId === undefined ? undefined : operations.get(summary.toolCallId)
        return {
          index,
          eventId: event.id,
          ...summary,
          ...(status === undefined ? {} : { operationStatus: status }),
          ...(settlement === undefined ? {} : { settlement }),
        }
      }
    },
  }
}

/**
 * A ledger as a timeline: each event as the host summarises it, with the Phase 0 status of the
 * tool operation its `toolCallId` names.
 * @category constructors
 */
export const ledgerTimeline = <S extends { readonly toolCallId?: string }>(
  events: ReadonlyArray<RuntimeEvent>,
  summarize: (event: RuntimeEvent) => S,
): ReadonlyArray<TimelineEntry<S>> => {
  const fold = makeTimelineFold()
  for (const event of events) fold.add(event)
  const entryOf = fold.finish()
  return events.map((event, i) => entryOf(i + 1, event, summarize(event)))
}
