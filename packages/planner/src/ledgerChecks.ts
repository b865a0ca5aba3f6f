/**
 * The checks every ledger of a continuation chain passes, the source's and each ancestor's alike:
 * no unreadable row and a high-water equal to the row count (early exit 7), and no row of another
 * session or run (early exit 8). One rule for both, so the source and its ancestors can never be
 * judged differently; only the name of an unreadable row's reason says which one it was.
 */
import type { AgentRun, RuntimeEvent } from '@maka/events'
import type { LedgerSnapshot } from '@maka/stores'
import * as E from 'fp-ts/lib/Either.js'
import { type ParkFindings, park } from './ParkFinding.js'

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
 * Early exit 7 for one ledger: no unreadable row, and a high-water equal to its row count.
 * `unreadableRow` is the detail's reason for an unreadable row (the source's and an ancestor's
 * are reported apart).
 * @category gates
 */
export const ledgerReadable = (
  runId: string,
  ledger: LedgerSnapshot,
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
  if (ledger.highWater !== ledger.events.length) {
    return park('runtime_ledger_unreadable', {
      reason: 'high_water_differs_from_rows',
      runId,
      highWater: ledger.highWater,
      rows: ledger.events.length,
    })
  }
  return E.right(undefined)
}

/**
 * Early exit 8's findings for one ledger: the store's first foreign row (by its line), then the
 * first row of `events` (the ledger's rows, or an ancestor's pinned prefix) that is not the run's.
 * @category gates
 */
export const foreignRowsOf = (
  header: AgentRun,
  ledger: LedgerSnapshot,
  events: ReadonlyArray<RuntimeEvent> = ledger.events,
): ReadonlyArray<Readonly<Record<string, unknown>>> => {
  const found: Array<Readonly<Record<string, unknown>>> = []
  if (ledger.problem?._tag === 'IdentityMismatch') {
    found.push({ runId: header.runId, line: ledger.problem.line, field: ledger.problem.field })
  }
  const index = events.findIndex((event) => !isRowOfRun(event, header))
  const row = events[index]
  if (row !== undefined) found.push({ runId: header.runId, line: index + 1, eventId: row.id })
  return found
}
