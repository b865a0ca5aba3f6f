/**
 * What revalidation looks at, read fresh just before a continuation's claim: the source header
 * and ledger, the host facts, and who (if anyone) already holds the boundary.
 */
import * as E from 'fp-ts/lib/Either.js'
import type { HostInspector } from '@maka/host-inspector'
import { boundaryHolderOf } from '@maka/planner'
import type { StorePorts } from '@maka/stores'
import type { ApprovedContinuation } from './decideContinuation.js'
import { type HostJournal, observeHostFacts } from './portAdapters.js'
import type { RevalidationObservation } from './revalidate.js'
import { type JournalObservation, observeJournal } from './observeJournal.js'

/**
 * Reads the observation revalidation judges; an unreadable run list or claim fails closed as a
 * boundary held by an unknown run.
 * @category constructors
 */
export const observeBoundary = async (
  stores: StorePorts,
  inspector: HostInspector,
  c: ApprovedContinuation,
  journal?: HostJournal,
  readJournal = false,
): Promise<RevalidationObservation & { readonly journal: JournalObservation | null }> => {
  const header = await stores.runs.read(c.sessionId, c.sourceRunId)()
  // With the journal, one fold gives the source's rows, its digest and its share of the journal.
  const observed = readJournal && E.isRight(header) ? await observeJournal(stores, c.sessionId, header.right) : null
  const ledger =
    observed === null
      ? await stores.events.read(c.sessionId, c.sourceRunId)()
      : observed.sourceLedger === null
        ? E.left(null)
        : E.right(observed.sourceLedger)
  const facts = E.isRight(header)
    ? await observeHostFacts(stores, inspector, journal)(c.sessionId, header.right)()
    : null
  const runs = await stores.runs.list(c.sessionId)()
  const claim = await stores.claims.read(c.sessionId, c.sourceRunId, c.sourceRuntimeEventHighWater)()
  const boundary = { sourceRunId: c.sourceRunId, highWater: c.sourceRuntimeEventHighWater }
  let holder: string | null = null
  let targetExists = false
  if (E.isRight(runs)) {
    targetExists = runs.right.some((entry) => entry.runId === c.runId)
    const headers = runs.right.flatMap((entry) => ('header' in entry ? [entry.header] : []))
    holder = boundaryHolderOf(headers, [], boundary)?.runId ?? null
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
    journal: observed,
  }
}
