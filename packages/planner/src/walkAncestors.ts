/**
 * The ancestor walk (early exit 7). A continuation's provider history is its ancestors' replay,
 * each sliced at the high-water its child pinned, followed by its own. The walk follows
 * `continuationSource` from the source back to the first normal run and fails closed on anything
 * that breaks the chain: a cycle, more than 64 ancestors, an unreadable ancestor, an ancestor
 * shorter than its pin, or a continuation whose ledger does not open with the continuation-start
 * fact its header promises. Rows owned by another run are collected for early exit 8, which is
 * judged only once the whole chain proved readable.
 */
import {
  type AgentRun,
  type ContinuationSource,
  type RuntimeEvent,
  isContinuationStartEvent,
  isTerminalEvent,
} from '@maka/events'
import * as E from 'fp-ts/lib/Either.js'
import { type ReplaySegment, segmentEvents } from './ContinuationPlan.js'
import { type FoldedLedger, foldEvents } from './internal/foldLedger.js'
import { type LedgerCounts, countsOf, foreignRowsOf, isRowOfRun, ledgerReadable } from './internal/ledgerChecks.js'
import { type ParkFindings, park } from './ParkFinding.js'
import type { AncestorLookup, AncestorRead, AncestorUnavailable, Ancestors } from './PlanningInput.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * The most ancestors a chain may have; one more is a broken chain.
 * @category models
 */
export const MAX_ANCESTOR_DEPTH = 64

/**
 * One ancestor of the chain and the high-water its child pinned.
 * @category models
 */
export interface ChainLink {
  readonly runId: string
  readonly pinnedHighWater: number
}

/**
 * The walked chain: the history to replay and what early exit 8 must still judge.
 * @category models
 */
export interface AncestorChain {
  /** Ancestors, oldest first. */
  readonly links: ReadonlyArray<ChainLink>
  /** Ancestors' replay segments and then the source's own, oldest first. */
  readonly runtimeContext: ReadonlyArray<RuntimeEvent>
  /** The source's own replay segment. */
  readonly sourceRuntimeContext: ReadonlyArray<RuntimeEvent>
  /** Rows of an ancestor that belong to another session or run (detail for early exit 8). */
  readonly foreignRows: ReadonlyArray<Readonly<Record<string, unknown>>>
}

/**
 * What the walk reads.
 * @category models
 */
export interface WalkInput {
  readonly source: AgentRun
  readonly sourceEvents: ReadonlyArray<RuntimeEvent>
  /** The Phase 0 replay of the source's own ledger. */
  readonly sourceReplay: ReadonlyArray<RuntimeEvent>
  readonly ancestors?: Ancestors | undefined
}

/**
 * A ledger as the planner keeps it: its run header, the counts of its read and its rows folded
 * (an ancestor's to the high-water its child pinned).
 * @category models
 */
export interface FoldedRead {
  readonly header: AgentRun
  readonly counts: LedgerCounts
  readonly folded: FoldedLedger
  /** Lowercase hex SHA-256 of the rows up to the pin its child recorded, when the read gave it. */
  readonly pinDigest?: string | undefined
}

/**
 * Finds an ancestor, folded to the pin `pinnedHighWater`, by run id.
 * @category models
 */
export type FoldedAncestorLookup = (runId: string, pinnedHighWater: number) => E.Either<AncestorUnavailable, FoldedRead>

/**
 * One segment of the chain's history and the fold it came from.
 * @category models
 */
export interface FoldedSegment {
  readonly segment: ReplaySegment
  readonly folded: FoldedLedger
}

/**
 * The walked chain without its rows: the history is a list of segments, oldest first, the source's last.
 * @category models
 */
export interface ChainOutline {
  readonly links: ReadonlyArray<ChainLink>
  readonly segments: ReadonlyArray<FoldedSegment>
  readonly foreignRows: ReadonlyArray<Readonly<Record<string, unknown>>>
  /** Links whose recorded prefix digest the ancestor no longer hashes to (early exit 8a). */
  readonly digestMismatches: ReadonlyArray<Readonly<Record<string, unknown>>>
}

// -------------------------------------------------------------------------------------
// internals
// -------------------------------------------------------------------------------------

const unreadable = (detail: Readonly<Record<string, unknown>>) => park<never>('runtime_ledger_unreadable', detail)

const toLookup = (ancestors: Ancestors | undefined): AncestorLookup => {
  if (typeof ancestors === 'function') return ancestors
  const byRunId = new Map<string, AncestorRead>()
  for (const ancestor of ancestors ?? []) {
    if (!byRunId.has(ancestor.header.runId)) byRunId.set(ancestor.header.runId, ancestor)
  }
  return (runId) => {
    const found = byRunId.get(runId)
    return found === undefined ? E.left({ stage: 'run', cause: 'ancestor run was not loaded' }) : E.right(found)
  }
}

/**
 * The segment a fold replays: rows `[0, prefixRows)` of `runId` that its projection keeps.
 * @category constructors
 */
export const segmentOf = (runId: string, folded: FoldedLedger): FoldedSegment => ({
  segment: {
    runId,
    rows: folded.prefixRows,
    count: folded.projection.replayCount,
    isReplayed: folded.projection.isReplayed,
  },
  folded,
})

/**
 * Ancestors given as loaded ledgers, folded when the walk asks for them; the rows of each one
 * found are kept in `rowsOf`, to fill its segment in.
 * @category constructors
 */
export const foldedLookup =
  (ancestors: Ancestors | undefined, rowsOf: Map<string, ReadonlyArray<RuntimeEvent>>): FoldedAncestorLookup =>
  (runId, pinnedHighWater) => {
    const found = toLookup(ancestors)(runId)
    if (E.isLeft(found)) return found
    const { header, ledger, pinDigest } = found.right
    rowsOf.set(runId, ledger.events)
    return E.right({
      header,
      counts: countsOf(ledger),
      folded: foldEvents(header, ledger.events, { limit: pinnedHighWater }),
      pinDigest,
    })
  }

// -------------------------------------------------------------------------------------
// gates
// -------------------------------------------------------------------------------------

const opensWithStart = (
  header: AgentRun,
  first: RuntimeEvent | undefined,
  onlyTerminalRows: boolean,
): E.Either<ParkFindings, void> => {
  const source = header.continuationSource
  if (source === undefined) return E.right(undefined)
  if (onlyTerminalRows) return E.right(undefined)
  // A row of another run cannot open this one's chain, but it is not a broken chain either: it is
  // the foreign row early exit 8 reports, wherever it stands.
  if (first !== undefined && !isRowOfRun(first, header)) return E.right(undefined)
  const refs = first?.refs
  // A protocol link records the source prefix digest in its start row and its header alike; the
  // start row's copy is the one that counts, and a header that says otherwise is not this run's.
  const matches =
    first !== undefined &&
    isContinuationStartEvent(first) &&
    refs?.sourceInvocationId === source.sourceInvocationId &&
    refs.sourceRunId === source.sourceRunId &&
    refs.sourceTurnId === source.sourceTurnId &&
    refs.sourceRuntimeEventHighWater === source.sourceRuntimeEventHighWater &&
    (source.sourceRuntimeEventPrefixDigest === undefined ||
      refs.sourceRuntimeEventPrefixDigest === source.sourceRuntimeEventPrefixDigest)
  return matches
    ? E.right(undefined)
    : unreadable({
        reason: 'continuation_start_missing',
        runId: header.runId,
        firstEventId: first?.id ?? null,
      })
}

/**
 * Early exit 7 for one run: a continuation's ledger must open with the continuation-start fact
 * whose refs equal its header's `continuationSource` — unless the run provably never started: a
 * ledger holding nothing but terminal facts (a claim recovery closed, or a crash before the start
 * row was durable). The provider is called only after that row is durable, so such a run called
 * no model and ran no tool; its history is exactly its source's. A first row of another run is
 * left to early exit 8.
 * @category gates
 */
export const opensWithContinuationStart = (
  header: AgentRun,
  events: ReadonlyArray<RuntimeEvent>,
): E.Either<ParkFindings, void> => opensWithStart(header, events[0], events.length > 0 && events.every(isTerminalEvent))

/** Checks one ancestor against the boundary its child recorded. */
const checkAncestor = (
  child: AgentRun,
  pinned: ContinuationSource,
  ancestor: FoldedRead,
): E.Either<ParkFindings, void> => {
  const { header, counts, folded } = ancestor
  const pin = pinned.sourceRuntimeEventHighWater
  if (
    header.runId !== pinned.sourceRunId ||
    header.sessionId !== child.sessionId ||
    header.invocationId !== pinned.sourceInvocationId ||
    header.turnId !== pinned.sourceTurnId
  ) {
    return unreadable({ reason: 'ancestor_identity_differs', runId: pinned.sourceRunId, childRunId: child.runId })
  }
  const readable = ledgerReadable(header.runId, counts, 'ancestor_ledger_unreadable')
  if (E.isLeft(readable)) return readable
  if (counts.rows < pin) {
    return unreadable({
      reason: 'ancestor_shorter_than_pin',
      runId: header.runId,
      pinnedHighWater: pin,
      highWater: counts.rows,
    })
  }
  // A fold to another pin would judge another prefix: only the walk's own pin may be replayed.
  if (folded.prefixRows !== pin) {
    return unreadable({
      reason: 'ancestor_unreadable',
      runId: header.runId,
      stage: 'ledger',
      cause: 'folded to another pin',
    })
  }
  return opensWithStart(header, folded.firstRow, folded.onlyTerminalRows)
}

/**
 * Walks the continuation chain from the source back to its first normal run (early exit 7),
 * over folded ledgers: the history comes out as segments.
 * @category gates
 */
export const walkChain = (source: FoldedRead, lookup: FoldedAncestorLookup): E.Either<ParkFindings, ChainOutline> => {
  const opening = opensWithStart(source.header, source.folded.firstRow, source.folded.onlyTerminalRows)
  if (E.isLeft(opening)) return opening
  const visited = new Set<string>([source.header.runId])
  const segments: Array<FoldedSegment> = []
  const links: Array<ChainLink> = []
  const foreignRows: Array<Readonly<Record<string, unknown>>> = []
  const digestMismatches: Array<Readonly<Record<string, unknown>>> = []
  let child = source.header
  for (let cs = child.continuationSource; cs !== undefined; cs = child.continuationSource) {
    if (links.length >= MAX_ANCESTOR_DEPTH) {
      return unreadable({ reason: 'chain_too_deep', maxDepth: MAX_ANCESTOR_DEPTH, runId: cs.sourceRunId })
    }
    if (visited.has(cs.sourceRunId)) {
      return unreadable({ reason: 'chain_cycle', runId: cs.sourceRunId, childRunId: child.runId })
    }
    visited.add(cs.sourceRunId)
    const found = lookup(cs.sourceRunId, cs.sourceRuntimeEventHighWater)
    if (E.isLeft(found)) {
      return unreadable({
        reason: 'ancestor_unreadable',
        runId: cs.sourceRunId,
        stage: found.left.stage,
        cause: found.left.cause,
      })
    }
    const checked = checkAncestor(child, cs, found.right)
    if (E.isLeft(checked)) return checked
    foreignRows.push(...foreignRowsOf(found.right.header, found.right.counts, found.right.folded))
    const recorded = cs.sourceRuntimeEventPrefixDigest
    const pinDigest = found.right.pinDigest
    if (recorded !== undefined && pinDigest !== undefined && recorded !== `sha256:${pinDigest}`) {
      digestMismatches.push({
        runId: cs.sourceRunId,
        childRunId: child.runId,
        pinnedHighWater: cs.sourceRuntimeEventHighWater,
      })
    }
    segments.push(segmentOf(found.right.header.runId, found.right.folded))
    links.push({ runId: cs.sourceRunId, pinnedHighWater: cs.sourceRuntimeEventHighWater })
    child = found.right.header
  }
  return E.right({
    links: [...links].reverse(),
    segments: [...segments.reverse(), segmentOf(source.header.runId, source.folded)],
    foreignRows,
    digestMismatches,
  })
}

/**
 * Walks the continuation chain from the source back to its first normal run (early exit 7).
 * @category gates
 */
export const walkAncestors = (input: WalkInput): E.Either<ParkFindings, AncestorChain> => {
  const { source, sourceEvents, sourceReplay } = input
  const rowsOf = new Map<string, ReadonlyArray<RuntimeEvent>>()
  const outline = walkChain(
    {
      header: source,
      counts: { problem: null, highWater: sourceEvents.length, rows: sourceEvents.length },
      folded: foldEvents(source, sourceEvents),
    },
    foldedLookup(input.ancestors, rowsOf),
  )
  if (E.isLeft(outline)) return outline
  const ancestors = outline.right.segments.slice(0, -1)
  return E.right({
    links: outline.right.links,
    runtimeContext: [
      ...ancestors.flatMap(({ segment }) => segmentEvents(segment, rowsOf.get(segment.runId) ?? [])),
      ...sourceReplay,
    ],
    sourceRuntimeContext: sourceReplay,
    foreignRows: outline.right.foreignRows,
  })
}
