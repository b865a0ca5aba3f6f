/**
 * The RuntimeEvent ledger port: one append-only ledger of rows per run, read whole (`read`),
 * streamed (`fold`) or read again and proven the same (`replay`). The row encoding and the checks
 * every adapter makes before an append or a replay live here, so an adapter cannot write a row the
 * others' readers would reject.
 */
import type { RuntimeEvent } from '@maka/events'
import * as E from 'fp-ts/lib/Either.js'
import type * as TE from 'fp-ts/lib/TaskEither.js'
import { decodeParsedRow } from './internal/isRuntimeEventShape.js'
import type { LedgerScan, LedgerSnapshot } from './LedgerSnapshot.js'
import { invalidRecord, type StoreError } from './StoreError.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * What a replay must find again: the committed prefix a fold reported.
 * @category models
 */
export interface ReplayExpectation {
  readonly committedBytes: number
  readonly digest: string
  /**
   * The fold's row count (`LedgerScan.rows`), when known: only that many rows are handed over, and
   * a JSONL replay then holds no row id — the digest proves these are the bytes the fold checked,
   * and the rows it handed stop before any repeated id. Without it the replay checks ids itself.
   */
  readonly rows?: number
}

/**
 * Options of one append.
 * @category models
 */
export interface AppendOptions {
  /** fsync the ledger, then its directory chain, before resolving (terminal, start and user rows). */
  readonly durable?: boolean | undefined
  /** Refuse with `HighWaterConflict`, writing nothing, unless the ledger holds exactly this many rows. */
  readonly expectedHighWater?: number | undefined
}

/**
 * Options of one fold.
 * @category models
 */
export interface FoldOptions {
  /**
   * A pin `h` (a row count, 0 allowed): the fold also reports `LedgerScan.digestAt`, the prefix
   * digest of the first `h` committed rows, taken from a copy of the running hash as the pass goes
   * by row `h` — one read, and every row past the pin is still handed over. Past `highWater`, no
   * `digestAt` is reported.
   */
  readonly digestAt?: number | undefined
}

/**
 * What an append committed: the ledger's row count including the new row.
 * @category models
 */
export interface AppendResult {
  readonly highWater: number
}

/**
 * The RuntimeEvent ledger of every run in a data dir.
 * @category models
 */
export interface RuntimeEventStore {
  /** Appends one row; the run header must exist. */
  append(
    sessionId: string,
    runId: string,
    event: RuntimeEvent,
    options?: AppendOptions,
  ): TE.TaskEither<StoreError, AppendResult>
  /** Reads the committed prefix; a missing ledger of an existing run is empty. */
  read(sessionId: string, runId: string): TE.TaskEither<StoreError, LedgerSnapshot>
  /**
   * The last complete row, read from the end of the file alone; `null` when the ledger is empty or
   * the tail cannot tell (a row longer than the tail window, undecodable, or another run's): then
   * only `read` can answer.
   */
  readLastRow(sessionId: string, runId: string): TE.TaskEither<StoreError, RuntimeEvent | null>
  /**
   * Reads the committed prefix as `read` does — the same rules, problems, line numbers and errors
   * (a missing ledger of an existing run is an empty scan with the digest of zero bytes) — but hands
   * every row `read` would keep to `onEvent`, in order, and keeps none of them: memory is one read
   * buffer plus the set of row ids. The scan's `digest` lets `replay` read the same rows again.
   * A throwing `onEvent` stops the read: `IoFailed` at operation `deliver`. With
   * `options.digestAt`, the scan also carries the prefix digest at that pin (`digestAt`); a pin that
   * is not a row count is `InvalidRecord`, nothing read.
   */
  fold(
    sessionId: string,
    runId: string,
    onEvent: (event: RuntimeEvent) => void,
    options?: FoldOptions,
  ): TE.TaskEither<StoreError, LedgerScan>
  /**
   * Reads exactly the committed prefix a `fold` reported again (`expected.committedBytes` bytes; for
   * a row store, the rows whose texts add up to them) and hands over the rows that `fold` handed
   * over, in order, in batches (one per read chunk of a file; bounded for a row store), awaiting each
   * `onRows` before reading on. It then checks the bytes against `expected.digest`: fewer of them,
   * other bytes or a row that no longer decodes → `LedgerChanged`. Rows appended after the fold are
   * not read and change nothing. A caller must not trust what it was handed until this resolves
   * `Right`: the proof comes at the end. A rejected `onRows` stops it: `IoFailed` at `deliver`.
   */
  replay(
    sessionId: string,
    runId: string,
    expected: ReplayExpectation,
    onRows: (events: ReadonlyArray<RuntimeEvent>) => void | Promise<void>,
  ): TE.TaskEither<StoreError, void>
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

// The digest of zero bytes (lowercase hex SHA-256 of nothing), written out: the contract does no hashing.
const EMPTY_DIGEST = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'

/**
 * What `fold` reports for a ledger file that does not exist yet (its run header does).
 * @category constructors
 */
export const emptyLedgerScan: LedgerScan = Object.freeze({
  rows: 0,
  highWater: 0,
  committedBytes: 0,
  tornTail: null,
  problem: null,
  digest: EMPTY_DIGEST,
})

/**
 * Checks what a replay is asked to find: a byte count and a lowercase hex SHA-256.
 * @category guards
 */
export const checkReplayExpectation = (expected: ReplayExpectation): E.Either<StoreError, ReplayExpectation> => {
  if (typeof expected !== 'object' || expected === null) {
    return E.left(invalidRecord('ReplayExpectation', 'not an object'))
  }
  if (!Number.isSafeInteger(expected.committedBytes) || expected.committedBytes < 0) {
    return E.left(invalidRecord('ReplayExpectation', 'committedBytes is not a byte count'))
  }
  if (typeof expected.digest !== 'string' || !/^[0-9a-f]{64}$/.test(expected.digest)) {
    return E.left(invalidRecord('ReplayExpectation', 'digest is not a lowercase hex SHA-256'))
  }
  if (expected.rows !== undefined && (!Number.isSafeInteger(expected.rows) || expected.rows < 0)) {
    return E.left(invalidRecord('ReplayExpectation', 'rows is not a row count'))
  }
  return E.right(expected)
}

/**
 * Checks a fold's options: a pin must be a row count (a safe integer ≥ 0).
 * @category guards
 */
export const checkFoldOptions = (options: FoldOptions): E.Either<StoreError, FoldOptions> => {
  if (typeof options !== 'object' || options === null) return E.left(invalidRecord('FoldOptions', 'not an object'))
  const pin = options.digestAt
  if (pin !== undefined && (!Number.isSafeInteger(pin) || pin < 0)) {
    return E.left(invalidRecord('FoldOptions', 'digestAt is not a row count'))
  }
  return E.right(options)
}

/**
 * Encodes an event as its ledger row's JSON text and proves it reads back: a row the reader would
 * reject would make the whole ledger unreadable, so every store refuses it instead of writing it.
 * @category codecs
 */
export const encodeRuntimeEventRow = (event: RuntimeEvent): E.Either<StoreError, string> => {
  let json: string
  try {
    json = JSON.stringify(event)
  } catch {
    return E.left(invalidRecord('RuntimeEvent', 'not serializable as JSON'))
  }
  if (typeof json !== 'string') return E.left(invalidRecord('RuntimeEvent', 'not serializable as JSON'))
  // Read back by the readers' own rule.
  const decoded = decodeParsedRow(JSON.parse(json))
  if (E.isLeft(decoded)) return E.left(invalidRecord('RuntimeEvent', decoded.left))
  return E.right(json)
}
