/**
 * The checks every ledger of a continuation chain passes, the source's and each ancestor's alike:
 * no unreadable row and a high-water equal to the row count (early exit 7), and no row of another
 * session or run (early exit 8). One rule for both, so the source and its ancestors can never be
 * judged differently; only the name of an unreadable row's reason says which one it was.
 */
import type { AgentRun, RuntimeEvent } from '@maka/events'
import type { LedgerSnapshot } from '@maka/stores'
import * as E from 'fp-ts/lib/Either.js'
import { type ParkFindings, park } from '../ParkFinding.js'

// -------------------------------------------------------------------------------------
// guards
// -------------------------------------------------------------------------------------

/**
 * True when a ledger row carries its run header's session and run ids.
 * @category guards
 */
export const isRowOfRun = (event: RuntimeEvent, header: AgentRun): boolean => {
  const sessionId: string = header.sessionId
  const runId: string = header.runId
  return event.sessionId === sessionId && event.runId === runId
}

// -------------------------------------------------------------------------------------
// gates
// -------------------------------------------------------------------------------------

/**
 * What the checks read of a ledger read: its problem and high-water, and how many rows decoded.
 * A `LedgerSnapshot` has them (its rows are `events.length`), and so does a read that kept no rows.
 * @category models
 */
export interface LedgerCounts {
  readonly problem: LedgerSnapshot['problem']
  readonly highWater: number
  readonly rows: number
}

/**
 * The counts of a snapshot.
 * @category constructors
 */
export const countsOf = (ledger: LedgerSnapshot): LedgerCounts => ({
  problem: ledger.problem,
  highWater: ledger.highWater,
  rows: ledger.events.length,
})

/**
 * Early exit 7 for one ledger: no unreadable row, and a high-water equal to its row count.
 * `unreadableRow` is the detail's reason for an unreadable row (the source's and an ancestor's
 * are reported apart).
 * @category gates
 */
export const ledgerReadable = (
  runId: string,
  ledger: LedgerCounts,
  unreadableRow: 'row_unreadable' | 'ancestor_ledger_unreadable',
): E.Either<ParkFindings, void> => {
  if (ledger.problem?._tag === 'Unreadable') {
    return park('runtime_ledger_unreadable', {
      reason: unreadableRow,
      runId,
      line: ledger.problem.line,
      cause: ledger.problem.reason,
    })
  }
  if (ledger.highWater !== ledger.rows) {
    return park('runtime_ledger_unreadable', {
      reason: 'high_water_differs_from_rows',
      runId,
      highWater: ledger.highWater,
      rows: ledger.rows,
    })
  }
  return E.right(undefined)
}

/**
 * Early exit 8's findings for one ledger: the store's first foreign row (by its line), then the
 * first row of the folded prefix (the whole ledger, or an ancestor's pinned prefix) that is not the run's.
 * @category gates
 */
export const foreignRowsOf = (
  header: AgentRun,
  ledger: Pick<LedgerCounts, 'problem'>,
  folded: { readonly foreignRow: { readonly line: number; readonly eventId: string } | null },
): ReadonlyArray<Readonly<Record<string, unknown>>> => {
  const found: Array<Readonly<Record<string, unknown>>> = []
  if (ledger.problem?._tag === 'IdentityMismatch') {
    found.push({ runId: header.runId, line: ledger.problem.line, field: ledger.problem.field })
  }
  const row = folded.foreignRow
  if (row !== null) found.push({ runId: header.runId, line: row.line, eventId: row.eventId })
  return found
}
