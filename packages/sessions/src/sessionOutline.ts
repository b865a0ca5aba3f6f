/**
 * A session's runs as `maka show` and a desktop transcript show them, without holding a ledger: the
 * first read folds each ledger to its row count, its problems and the status of each tool operation;
 * a run's timeline is then streamed from a second, digest-checked read of the same rows. Read-only.
 */
import * as E from 'fp-ts/lib/Either.js'
import type { AgentRun, RuntimeEvent, SessionRecord } from '@maka/events'
import type { LedgerScan } from '@maka/stores'
import { type SessionStores, listSessionRuns } from './readSessionCatalog.js'
import {
  type LineageNode,
  type Settlement,
  type TimelineEntry,
  type TimelineFold,
  makeTimelineFold,
  sessionLineage,
} from './sessionQueries.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * One run of a session's outline: its place in the lineage tree, its header and what the first read
 * of its ledger found.
 * @category models
 */
export interface RunOutline extends LineageNode {
  readonly header: AgentRun | null
  readonly headerError?: string
  /** Committed rows; null when the ledger could not be read. */
  readonly highWater: number | null
  readonly ledgerProblem?: string
  readonly tornTail: boolean
  /**
   * What this run settled of its sources' open operations (Phase 2): reissued, found applied,
   * reattached, or adjudicated by a person (with the verdict and the host). Left out when none.
   */
  readonly settlements?: ReadonlyArray<Settlement>
}

/**
 * A session's runs: `roots` are runs with no parent in the session, `runs` readable runs in creation
 * order, then unreadable ones.
 * @category models
 */
export interface SessionOutline<S> {
  readonly session: SessionRecord
  readonly roots: ReadonlyArray<string>
  readonly runs: ReadonlyArray<RunOutline>
  /**
   * Streams the timeline of `runId` in ledger order, a batch per read. `Left` when the ledger no
   * longer holds the rows the outline folded (rewritten or cut; rows appended since are not read),
   * after the entries before the change were handed over. A run without a readable ledger has no
   * entry.
   */
  timeline(
    runId: string,
    onEntries: (entries: ReadonlyArray<TimelineEntry<S>>) => void | Promise<void>,
  ): Promise<E.Either<string, void>>
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

const describeProblem = (problem: { readonly _tag: string; readonly line: number }): string =>
  problem._tag === 'Unreadable' ? `unreadable at line ${problem.line}` : `a row of another run at line ${problem.line}`

type EntryOf = ReturnType<TimelineFold['finish']>

/**
 * A session's runs as a lineage tree, each ledger folded once; `summarize` is a factory of the host's
 * narration of a row, made once per streamed timeline.
 * @category constructors
 */
export const loadSessionOutline = async <S extends { readonly toolCallId?: string }>(
  stores: SessionStores,
  session: SessionRecord,
  summarize: () => (event: RuntimeEvent) => S,
): Promise<E.Either<string, SessionOutline<S>>> => {
  const { sessionId } = session
  const listed = await listSessionRuns(stores, sessionId)
  if (E.isLeft(listed)) return listed
  const headers = new Map(listed.right.flatMap((run) => ('header' in run ? [[run.runId, run.header] as const] : [])))
  const errors = new Map(listed.right.flatMap((run) => ('error' in run ? [[run.runId, run.error] as const] : [])))
  const lineage = sessionLineage(listed.right)
  const runs: Array<RunOutline> = []
  const folded = new Map<string, { readonly scan: LedgerScan; readonly entryOf: EntryOf }>()
  // Which later run closed each operation (the call's row shows it).
  const settledBy = new Map<string, Settlement>()
  for (const node of lineage.nodes) {
    const header = headers.get(node.runId)
    if (header === undefined) {
      runs.push({
        ...node,
        header: null,
        headerError: errors.get(node.runId) ?? 'Unreadable',
        highWater: null,
        tornTail: false,
      })
      continue
    }
    const fold = makeTimelineFold()
    const scan = await stores.events.fold(sessionId, header.runId, fold.add)()
    if (E.isLeft(scan)) {
      runs.push({ ...node, header, highWater: null, ledgerProblem: scan.left._tag, tornTail: false })
      continue
    }
    const { highWater, problem, tornTail } = scan.right
    folded.set(node.runId, { scan: scan.right, entryOf: fold.finish() })
    const settlements = fold.settlements()
    for (const settlement of settlements) {
      if (settlement.settlementOrigin !== null) settledBy.set(settlement.operationId, settlement)
    }
    runs.push({
      ...node,
      header,
      highWater,
      ...(problem === null ? {} : { ledgerProblem: describeProblem(problem) }),
      tornTail: tornTail !== null,
      ...(settlements.length === 0 ? {} : { settlements }),
    })
  }

  const timeline: SessionOutline<S>['timeline'] = async (runId, onEntries) => {
    const run = folded.get(runId)
    if (run === undefined) return E.right(undefined)
    const narrate = summarize()
    let index = 0
    const replayed = await stores.events.replay(
      sessionId,
      runId,
      { committedBytes: run.scan.committedBytes, digest: run.scan.digest, rows: run.scan.rows },
      async (events) => {
        const entries = events.map((event) => {
          index += 1
          const entry = run.entryOf(index, event, narrate(event))
          const settled = event.content?.kind === 'function_call' ? settledBy.get(`${runId}-o${index}`) : undefined
          return settled === undefined ? entry : { ...entry, settledBy: settled }
        })
        if (entries.length > 0) await onEntries(entries)
      },
    )()
    if (E.isLeft(replayed)) return E.left(replayed.left.message)
    return index === run.scan.rows
      ? E.right(undefined)
      : E.left(`run ${runId} holds other rows than the ones first read`)
  }

  return E.right({ session, roots: lineage.roots, runs, timeline })
}
