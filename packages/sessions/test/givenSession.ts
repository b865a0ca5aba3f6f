/**
 * Builders for the read model's tests: run headers through the real AgentRun codec, so a fixture can
 * never be a shape the store would reject, and the ledger read a store reports for given rows.
 */
import { FIXTURE_CWD, FIXTURE_WORKSPACE, makeContinuationHeaderUnsafe, makeRunHeaderUnsafe } from '@maka/events/testing'
import type { RuntimeEvent } from '@maka/events'
import type { LedgerSnapshot } from '@maka/stores'

export const CWD = FIXTURE_CWD
export const WORKSPACE = FIXTURE_WORKSPACE

/** A valid AgentRun header; `omit` removes optional keys the defaults set. */
export const header = makeRunHeaderUnsafe

/** A continuation header of `source` pinned at `highWater`. */
export const continuationHeader = makeContinuationHeaderUnsafe

/** The read a store reports for a whole ledger of `events`. */
export const ledgerOf = (
  events: ReadonlyArray<RuntimeEvent>,
  overrides: Partial<LedgerSnapshot> = {},
): LedgerSnapshot => ({
  events,
  highWater: events.length,
  committedBytes: events.reduce((bytes, event) => bytes + Buffer.byteLength(JSON.stringify(event)) + 1, 0),
  tornTail: null,
  problem: null,
  ...overrides,
})
