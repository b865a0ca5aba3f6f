/**
 * What execution re-reads of a chain's tool journal (Phase 2), right before it claims: the source
 * folded once (its rows, its journal and the digest of its committed prefix), then each ancestor cut
 * at the high-water its child pinned, joined into the Phase 2 projection. The open operations come
 * with the args of their call rows as re-read here — the only args a reissue may run with.
 */
import type { AgentRun, RuntimeEvent } from '@maka/events'
import { type ChainProjection, type SegmentJournal, makeSegmentJournalFolder, projectChain } from '@maka/projection'
import type { LedgerSnapshot, StorePorts } from '@maka/stores'
import * as E from 'fp-ts/lib/Either.js'

/**
 * The chain's journal as execution found it.
 * @category models
 */
export interface JournalObservation {
  /** The source's committed rows, in order. */
  readonly sourceEvents: ReadonlyArray<RuntimeEvent>
  /** The same read as a ledger snapshot (what revalidation judges), or null when it failed. */
  readonly sourceLedger: LedgerSnapshot | null
  /** The source prefix digest (`sha256:` + hex) of the rows read, or null when the read failed. */
  readonly sourceDigest: string | null
  /** The Phase 2 projection of the chain, or null when a ledger of it could not be read. */
  readonly projection: ChainProjection | null
  /** The source segment's journal (its own replay is judged from it). */
  readonly sourceJournal: SegmentJournal | null
  /** Every link that recorded its source's prefix digest still finds it at its pin. */
  readonly pinsHold: boolean
}

/** The most ancestors a chain may have (the planner's walk refuses more). */
const MAX_DEPTH = 64

const foldSegment = async (
  stores: StorePorts,
  sessionId: string,
  runId: string,
  limit: number,
): Promise<{ readonly journal: SegmentJournal; readonly pinDigest: string | undefined } | null> => {
  const folder = makeSegmentJournalFolder(runId)
  let seen = 0
  const read = await stores.events.fold(
    sessionId,
    runId,
    (event) => {
      seen += 1
      if (seen <= limit) folder.add(event)
    },
    { digestAt: limit },
  )()
  return E.isLeft(read) || read.right.problem !== null
    ? null
    : { journal: folder.finish(), pinDigest: read.right.digestAt?.digest }
}

/**
 * Reads the chain's journal from the stores. Nothing is written.
 * @category constructors
 */
export const observeJournal = async (
  stores: StorePorts,
  sessionId: string,
  source: AgentRun,
): Promise<JournalObservation> => {
  const sourceEvents: Array<RuntimeEvent> = []
  const folder = makeSegmentJournalFolder(source.runId)
  const scanned = await stores.events.fold(sessionId, source.runId, (event) => {
    sourceEvents.push(event)
    folder.add(event)
  })()
  if (E.isLeft(scanned)) {
    return {
      sourceEvents,
      sourceLedger: null,
      sourceDigest: null,
      projection: null,
      sourceJournal: null,
      pinsHold: false,
    }
  }
  const scan = scanned.right
  const sourceLedger: LedgerSnapshot = {
    events: sourceEvents,
    highWater: scan.highWater,
    committedBytes: scan.committedBytes,
    tornTail: scan.tornTail,
    problem: scan.problem,
  }
  if (scan.problem !== null) {
    return { sourceEvents, sourceLedger, sourceDigest: null, projection: null, sourceJournal: null, pinsHold: false }
  }
  const sourceJournal = folder.finish()
  const sourceDigest = `sha256:${scan.digest}`
  const segments: Array<SegmentJournal> = [sourceJournal]
  let pinsHold = true
  let child = source
  for (let depth = 0; child.continuationSource !== undefined && depth < MAX_DEPTH; depth += 1) {
    const pin = child.continuationSource
    const header = await stores.runs.read(sessionId, pin.sourceRunId)()
    if (E.isLeft(header)) return { sourceEvents, sourceLedger, sourceDigest, projection: null, sourceJournal, pinsHold }
    const segment = await foldSegment(stores, sessionId, pin.sourceRunId, pin.sourceRuntimeEventHighWater)
    if (segment === null) return { sourceEvents, sourceLedger, sourceDigest, projection: null, sourceJournal, pinsHold }
    const recorded = pin.sourceRuntimeEventPrefixDigest
    if (recorded !== undefined && recorded !== `sha256:${segment.pinDigest ?? ''}`) pinsHold = false
    segments.unshift(segment.journal)
    child = header.right
  }
  return { sourceEvents, sourceLedger, sourceDigest, projection: projectChain(segments), sourceJournal, pinsHold }
}
