/**
 * Read-only views of a data directory for `sessions`, `show` and the TUI: session summaries with the
 * latest top-level run and an "interrupted" mark, and a session's runs as a lineage tree with each
 * ledger as a timeline. Only reads through the stores; never repairs or writes anything.
 */
import * as E from 'fp-ts/lib/Either.js'
import { type AgentRun, type SessionRecord, isTerminalRunStatus } from '@maka/events'
import { ownerLockLiveness } from '@maka/host-inspector'
import { projectResumePlan } from '@maka/projection'
import type { FileStores } from '@maka/stores'
import { type EventSummary, makeEventNarrator } from './eventSummary.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * What kind of run a header describes.
 * @category models
 */
export type RunKind = 'turn' | 'continuation' | 'child'

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
 * A run whose header exists but cannot be read, and why (the store's error tag).
 * @category models
 */
export interface UnreadableRun {
  readonly runId: string
  readonly error: string
}

/**
 * One line of `maka sessions`.
 * @category models
 */
export interface SessionSummary {
  readonly sessionId: string
  readonly cwd: string | null
  readonly createdAt: string | null
  readonly title?: string
  /** Why `session.json` could not be read, when it could not. */
  readonly error?: string
  /** Runs with a header, readable or not (a folder whose header was never created is no run). */
  readonly runCount: number
  /**
   * Runs whose `run.json` exists but cannot be read: they cannot be ordered, so `latestRun` (the
   * newest readable one) may not be the session's latest, and resuming parks until they are fixed.
   */
  readonly unreadableRuns: ReadonlyArray<UnreadableRun>
  readonly latestRun: RunBrief | null
  /** The latest top-level run failed with `app_restarted`, or is non-terminal with no live owner. */
  readonly interrupted: boolean
  /** A live process owns the session now. */
  readonly ownerAlive: boolean
}

/**
 * One row of a ledger timeline.
 * @category models
 */
export interface TimelineEntry extends EventSummary {
  readonly index: number
  readonly eventId: string
  /** The Phase 0 status of the tool operation a call or response belongs to. */
  readonly operationStatus?: string
}

/**
 * One run of `maka show`, with its place in the lineage tree.
 * @category models
 */
export interface RunDetail {
  readonly runId: string
  readonly kind: RunKind | 'unreadable'
  readonly parentRunId: string | null
  readonly header: AgentRun | null
  readonly headerError?: string
  readonly highWater: number | null
  readonly ledgerProblem?: string
  readonly tornTail: boolean
  readonly timeline: ReadonlyArray<TimelineEntry>
  readonly children: ReadonlyArray<string>
}

/**
 * A session's runs: `roots` are runs with no parent in the session, `runs` every run by id order of
 * creation.
 * @category models
 */
export interface SessionDetail {
  readonly session: SessionRecord
  readonly roots: ReadonlyArray<string>
  readonly runs: ReadonlyArray<RunDetail>
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * A continuation hangs under its source; a child run under its parent.
 * @category constructors
 */
export const kindOf = (header: AgentRun): RunKind =>
  header.continuationSource !== undefined ? 'continuation' : header.parentRunId !== undefined ? 'child' : 'turn'

const parentOf = (header: AgentRun): string | null =>
  header.continuationSource?.sourceRunId ?? header.parentRunId ?? null

const byCreation = (a: AgentRun, b: AgentRun): number =>
  a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0

/**
 * The newest run that is not a child run (by `createdAt`, then `runId`).
 * @category constructors
 */
export const latestTopLevelRun = (headers: ReadonlyArray<AgentRun>): AgentRun | undefined =>
  [...headers]
    .filter((h) => kindOf(h) !== 'child')
    .sort(byCreation)
    .at(-1)

const brief = (header: AgentRun): RunBrief => ({
  runId: header.runId,
  kind: kindOf(header),
  status: header.status,
  ...(header.failureClass === undefined ? {} : { failureClass: header.failureClass }),
  createdAt: header.createdAt,
})

// A folder without run.json is a create that never completed (decisions #10): no run, not a broken one.
const readHeaders = async (
  stores: FileStores,
  sessionId: string,
): Promise<{ readonly headers: ReadonlyArray<AgentRun>; readonly unreadable: ReadonlyArray<UnreadableRun> }> => {
  const listed = await stores.runs.list(sessionId)()
  if (E.isLeft(listed)) return { headers: [], unreadable: [] }
  return {
    headers: listed.right.flatMap((entry) => ('header' in entry ? [entry.header] : [])),
    unreadable: listed.right.flatMap((entry) =>
      'error' in entry && entry.error._tag !== 'NotFound' ? [{ runId: entry.runId, error: entry.error._tag }] : [],
    ),
  }
}

/**
 * Every session of the data directory with its latest top-level run. A missing `sessions/` folder
 * is no session; an unlistable one is a Left.
 * @category constructors
 */
export const listSessionSummaries = async (
  stores: FileStores,
): Promise<E.Either<string, ReadonlyArray<SessionSummary>>> => {
  const listed = await stores.sessions.list()()
  if (E.isLeft(listed)) return E.left(listed.left._tag)
  const summaries: Array<SessionSummary> = []
  for (const sessionId of listed.right) {
    const record = await stores.sessions.read(sessionId)()
    const { headers, unreadable } = await readHeaders(stores, sessionId)
    const latest = latestTopLevelRun(headers)
    const lock = await stores.ownerLocks.read(sessionId)()
    const ownerAlive = E.isRight(lock) && (await ownerLockLiveness(lock.right)) === 'alive'
    const interrupted =
      latest !== undefined &&
      ((latest.status === 'failed' && latest.failureClass === 'app_restarted') ||
        (!isTerminalRunStatus(latest.status) && !ownerAlive))
    summaries.push({
      sessionId,
      cwd: E.isRight(record) ? record.right.cwd : null,
      createdAt: E.isRight(record) ? record.right.createdAt : null,
      ...(E.isRight(record) && record.right.title !== undefined ? { title: record.right.title } : {}),
      ...(E.isLeft(record) ? { error: record.left._tag } : {}),
      runCount: headers.length + unreadable.length,
      unreadableRuns: unreadable,
      latestRun: latest === undefined ? null : brief(latest),
      interrupted,
      ownerAlive,
    })
  }
  summaries.sort((a, b) =>
    (a.createdAt ?? '') < (b.createdAt ?? '')
      ? -1
      : (a.createdAt ?? '') > (b.createdAt ?? '')
        ? 1
        : a.sessionId < b.sessionId
          ? -1
          : 1,
  )
  return E.right(summaries)
}

/**
 * The most recent readable session, by its `createdAt`, then its id, from the session records
 * alone (16 read at a time): picking a session costs no run header, ledger or lock.
 * @category constructors
 */
export const findMostRecentSession = async (stores: FileStores): Promise<E.Either<string, string | undefined>> => {
  const listed = await stores.sessions.list()()
  if (E.isLeft(listed)) return E.left(listed.left._tag)
  const ids = listed.right
  let best: { readonly createdAt: string; readonly sessionId: string } | undefined
  for (let at = 0; at < ids.length; at += 16) {
    const records = await Promise.all(ids.slice(at, at + 16).map((id) => stores.sessions.read(id)()))
    for (const record of records) {
      if (E.isLeft(record)) continue
      const { createdAt, sessionId } = record.right
      if (
        best === undefined ||
        createdAt > best.createdAt ||
        (createdAt === best.createdAt && sessionId > best.sessionId)
      )
        best = { createdAt, sessionId }
    }
  }
  return E.right(best?.sessionId)
}

/**
 * The most recent readable session, by its `createdAt`, then its id.
 * @category constructors
 */
export const mostRecentSessionId = (summaries: ReadonlyArray<SessionSummary>): string | undefined =>
  summaries.filter((s) => s.createdAt !== null).at(-1)?.sessionId

const describeProblem = (problem: { readonly _tag: string; readonly line: number }): string =>
  problem._tag === 'Unreadable' ? `unreadable at line ${problem.line}` : `a row of another run at line ${problem.line}`

/**
 * A session's runs as a lineage tree, each with its ledger timeline.
 * @category constructors
 */
export const loadSessionDetail = async (
  stores: FileStores,
  session: SessionRecord,
): Promise<E.Either<string, SessionDetail>> => {
  const listed = await stores.runs.list(session.sessionId)()
  if (E.isLeft(listed)) return E.left(listed.left._tag)
  const headers = listed.right.flatMap((entry) => ('header' in entry ? [entry.header] : [])).sort(byCreation)
  const unreadable = listed.right.flatMap((entry) => ('error' in entry ? [entry] : []))
  const known = new Set<string>(listed.right.map((entry) => entry.runId))
  const children = new Map<string, Array<string>>()
  for (const header of headers) {
    const parent = parentOf(header)
    if (parent !== null && known.has(parent)) children.set(parent, [...(children.get(parent) ?? []), header.runId])
  }
  const runs: Array<RunDetail> = []
  for (const header of headers) {
    const ledger = await stores.events.read(session.sessionId, header.runId)()
    const parent = parentOf(header)
    const base = {
      runId: header.runId,
      kind: kindOf(header),
      parentRunId: parent !== null && known.has(parent) ? parent : null,
      header,
      children: children.get(header.runId) ?? [],
    }
    if (E.isLeft(ledger)) {
      runs.push({ ...base, highWater: null, ledgerProblem: ledger.left._tag, tornTail: false, timeline: [] })
      continue
    }
    const { events, highWater, problem, tornTail } = ledger.right
    const operations = new Map(projectResumePlan(events).operations.map((op) => [op.toolCallId, op.status]))
    const narrator = makeEventNarrator()
    const timeline = events.map((event, i): TimelineEntry => {
      const summary = narrator.summarize(event)
      const status = summary.toolCallId === undefined ? undefined : operations.get(summary.toolCallId)
      return {
        index: i + 1,
        eventId: event.id,
        ...summary,
        ...(status === undefined ? {} : { operationStatus: status }),
      }
    })
    runs.push({
      ...base,
      highWater,
      ...(problem === null ? {} : { ledgerProblem: describeProblem(problem) }),
      tornTail: tornTail !== null,
      timeline,
    })
  }
  for (const entry of unreadable) {
    runs.push({
      runId: entry.runId,
      kind: 'unreadable',
      parentRunId: null,
      header: null,
      headerError: entry.error._tag,
      highWater: null,
      tornTail: false,
      timeline: [],
      children: [],
    })
  }
  const roots = runs.filter((r) => r.parentRunId === null).map((r) => r.runId)
  return E.right({ session, roots, runs })
}
