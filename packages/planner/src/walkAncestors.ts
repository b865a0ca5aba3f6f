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
import { projectResumePlan } from '@maka/projection'
import * as E from 'fp-ts/lib/Either.js'
import { foreignRowsOf, isRowOfRun, ledgerReadable } from './ledgerChecks.js'
import { type ParkFindings, park } from './ParkFinding.js'
import type { AncestorLookup, AncestorRead, Ancestors } from './PlanningInput.js'

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

// -------------------------------------------------------------------------------------
// guards
// -------------------------------------------------------------------------------------

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
): E.Either<ParkFindings, void> => {
  const source = header.continuationSource
  if (source === undefined) return E.right(undefined)
  if (events.length > 0 && events.every(isTerminalEvent)) return E.right(undefined)
  const first = events[0]
  // A row of another run cannot open this one's chain, but it is not a broken chain either: it is
  // the foreign row early exit 8 reports, wherever it stands.
  if (first !== undefined && !isRowOfRun(first, header)) return E.right(undefined)
  const refs = first?.refs
  const matches =
    first !== undefined &&
    isContinuationStartEvent(first) &&
    refs?.sourceInvocationId === source.sourceInvocationId &&
    refs.sourceRunId === source.sourceRunId &&
    refs.sourceTurnId === source.sourceTurnId &&
    refs.sourceRuntimeEventHighWater === source.sourceRuntimeEventHighWater
  return matches
    ? E.right(undefined)
    : unreadable({
        reason: 'continuation_start_missing',
        runId: header.runId,
        firstEventId: first?.id ?? null,
      })
}

/** Checks one ancestor against the boundary its child recorded; returns its pinned prefix. */
const checkAncestor = (
  child: AgentRun,
  pinned: ContinuationSource,
  ancestor: AncestorRead,
): E.Either<ParkFindings, ReadonlyArray<RuntimeEvent>> => {
  const { header, ledger } = ancestor
  const pin = pinned.sourceRuntimeEventHighWater
  if (
    header.runId !== pinned.sourceRunId ||
    header.sessionId !== child.sessionId ||
    header.invocationId !== pinned.sourceInvocationId ||
    header.turnId !== pinned.sourceTurnId
  ) {
    return unreadable({ reason: 'ancestor_identity_differs', runId: pinned.sourceRunId, childRunId: child.runId })
  }
  const readable = ledgerReadable(header.runId, ledger, 'ancestor_ledger_unreadable')
  if (E.isLeft(readable)) return readable
  if (ledger.events.length < pin) {
    return unreadable({
      reason: 'ancestor_shorter_than_pin',
      runId: header.runId,
      pinnedHighWater: pin,
      highWater: ledger.events.length,
    })
  }
  const opening = opensWithContinuationStart(header, ledger.events)
  return E.isLeft(opening) ? opening : E.right(ledger.events.slice(0, pin))
}

// -------------------------------------------------------------------------------------
// gates
// -------------------------------------------------------------------------------------

/**
 * Walks the continuation chain from the source back to its first normal run (early exit 7).
 * @category gates
 */
export const walkAncestors = (input: WalkInput): E.Either<ParkFindings, AncestorChain> => {
  const { source, sourceEvents, sourceReplay } = input
  const opening = opensWithContinuationStart(source, sourceEvents)
  if (E.isLeft(opening)) return opening
  const lookup = toLookup(input.ancestors)
  const visited = new Set<string>([source.runId])
  const segments: Array<ReadonlyArray<RuntimeEvent>> = []
  const links: Array<ChainLink> = []
  const foreignRows: Array<Readonly<Record<string, unknown>>> = []
  let child = source
  for (let cs = child.continuationSource; cs !== undefined; cs = child.continuationSource) {
    if (links.length >= MAX_ANCESTOR_DEPTH) {
      return unreadable({ reason: 'chain_too_deep', maxDepth: MAX_ANCESTOR_DEPTH, runId: cs.sourceRunId })
    }
    if (visited.has(cs.sourceRunId)) {
      return unreadable({ reason: 'chain_cycle', runId: cs.sourceRunId, childRunId: child.runId })
    }
    visited.add(cs.sourceRunId)
    const found = lookup(cs.sourceRunId)
    if (E.isLeft(found)) {
      return unreadable({
        reason: 'ancestor_unreadable',
        runId: cs.sourceRunId,
        stage: found.left.stage,
        cause: found.left.cause,
      })
    }
    const prefix = checkAncestor(child, cs, found.right)
    if (E.isLeft(prefix)) return prefix
    foreignRows.push(...foreignRowsOf(found.right.header, found.right.ledger, prefix.right))
    segments.push(projectResumePlan(prefix.right).replayRuntimeEvents)
    links.push({ runId: cs.sourceRunId, pinnedHighWater: cs.sourceRuntimeEventHighWater })
    child = found.right.header
  }
  return E.right({
    links: [...links].reverse(),
    runtimeContext: [...segments.reverse().flat(), ...sourceReplay],
    sourceRuntimeContext: sourceReplay,
    foreignRows,
  })
}
