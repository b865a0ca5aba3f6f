/**
 * The scan of a JSONL ledger file's bytes into a `LedgerSnapshot` (`@maka/stores`). The scan is
 * incremental: it takes the bytes a window at a time (the store streams the file through one
 * reusable buffer, so a million-row ledger never sits in memory as one Buffer), decodes each
 * window of complete rows to one string when it is valid UTF-8, and parses the rows out of it —
 * no intermediate array of lines, no per-row Buffer conversion.
 *
 * Rules (docs/contract.md §1, docs/decisions.md): the final line without a trailing newline is a torn
 * row — excluded and reported — only when it is a proper prefix of a JSON object, checked by a
 * byte-level state machine as it streams in. Any other unterminated final line (garbage, binary, a
 * complete JSON value missing its newline) may be committed data or damage: the ledger is unreadable
 * at that line and nothing may truncate it. Any other row that is not UTF-8 JSON of the exact
 * RuntimeEvent shape, or repeats an earlier row's `id`, makes the ledger unreadable at that line; a
 * well-formed row of another session or run is an identity mismatch, and reading goes on past it.
 * What a row means is the contract's (`makeLedgerRowCheck`); cutting rows out of bytes is this file's.
 */
import { isAscii, isUtf8 } from 'node:buffer'
import type { RuntimeEvent } from '@maka/events'
import {
  makeLedgerRowCheck,
  type LedgerIdentity,
  type LedgerProblem,
  type LedgerScan,
  type LedgerSink,
  type LedgerSnapshot,
} from '@maka/stores'
import { makeJsonRowPrefix } from './internal/jsonRowPrefix.js'

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

const NEWLINE = 0x0a
const NEWLINE_CHAR = '\n'
// Rows are decoded a window at a time: large enough that per-window costs vanish, small enough
// that the window's string is born and dies in V8's young generation. (With 1 MiB windows every
// string went to large-object space, and the extra old-generation GCs cost more than the parse.)
const WINDOW_BYTES = 1 << 16

/**
 * An incremental scan of one ledger: feed it the file's bytes front to back, then take the
 * snapshot. Internal to the package (the store streams through it; `scanLedger` runs it once).
 * @category constructors
 */
export interface LedgerScanner {
  /**
   * Scans every complete row of `bytes` (which continue where the bytes consumed so far ended)
   * and returns how many bytes that was: everything up to and including the last newline.
   */
  scan(bytes: Buffer): number
  /**
   * The snapshot, given how many bytes followed the last consumed newline (the torn tail). With a
   * sink its `events` are empty: every row went to the sink.
   */
  snapshot(tailLength: number): LedgerSnapshot
  /**
   * The same answer without the events, with the digest of the committed bytes that the caller,
   * which read them, computed (the scanner does no I/O and no hashing).
   */
  ledgerScan(tailLength: number, digest: string): LedgerScan
  /** The committed bytes scanned so far: where the last complete row ended. */
  committedBytes(): number
}

/**
 * How a scan reads.
 * @category models
 */
export interface LedgerScanOptions {
  /**
   * `known_absent`: skip the repeated-id check, for a second read of bytes already scanned whole
   * (`replay`, which proves with a digest that they are the same bytes); it holds no id at all.
   */
  readonly repeatedIds?: 'check' | 'known_absent'
}

/**
 * Starts the scan of one run's ledger. With `sink`, every row that would be kept goes to it in
 * order instead, and the scanner keeps only the ids (the duplicate-id check needs them).
 * @category constructors
 */
export const makeLedgerScanner = (
  identity: LedgerIdentity,
  sink?: LedgerSink,
  options: LedgerScanOptions = {},
): LedgerScanner => {
  const events: Array<RuntimeEvent> = []
  let rows = 0
  const keep: LedgerSink =
    sink === undefined
      ? (event) => {
          rows += 1
          events.push(event)
        }
      : (event) => {
          rows += 1
          sink(event)
        }
  const checkRow = makeLedgerRowCheck(identity, keep, options.repeatedIds)
  // The first unreadable row ends decoding; a foreign row does not, so the row count and every
  // later problem stay known (an unreadable row anywhere outranks a foreign one: planner exit 7 before 8).
  let unreadable: LedgerProblem | null = null
  let mismatch: LedgerProblem | null = null
  let line = 0
  let committed = 0
  // The row after the last consumed newline, checked as it arrives. While `dropping`, its bytes are
  // not needed (they can no longer be JSON, or the ledger is already unreadable): they are consumed
  // instead of carried, so a long bad row never has to sit in memory.
  const pending = makeJsonRowPrefix()
  let pendingFed = 0
  let dropping = false

  // Counts rows only: after the first problem, highWater must still match what pins recorded.
  const countRows = (bytes: Buffer, from: number, to: number): void => {
    for (let at = bytes.indexOf(NEWLINE, from); at !== -1 && at < to; at = bytes.indexOf(NEWLINE, at + 1)) line += 1
  }

  const decode = (row: string): void => {
    const found = checkRow(row, line + 1)
    line += 1
    if (found === null) return
    if (found._tag === 'IdentityMismatch') mismatch ??= found
    else unreadable = found
  }

  // [from, to) holds whole rows: `to - 1` is a newline.
  const scanRows = (bytes: Buffer, from: number, to: number): void => {
    committed += to - from
    if (unreadable !== null) return countRows(bytes, from, to)
    // One UTF-8 check per window is far cheaper than one per row; rows are checked one by one only
    // when it fails, to name the damaged line. A newline is never inside a multi-byte character,
    // so a window of whole rows is valid exactly when each of its rows is. Most ledgers are ASCII,
    // which decodes as Latin-1 to the same string at memcpy speed (UTF-8 decoding is ~20× slower).
    const window = bytes.subarray(from, to)
    let text: string
    if (isAscii(window)) text = bytes.toString('latin1', from, to)
    else if (isUtf8(window)) text = bytes.toString('utf8', from, to)
    else return scanRowsCheckingUtf8(bytes, from, to)
    let start = 0
    for (let end = text.indexOf(NEWLINE_CHAR); end !== -1; end = text.indexOf(NEWLINE_CHAR, start)) {
      if (unreadable === null) decode(text.slice(start, end))
      else line += 1
      start = end + 1
    }
  }

  const scanRowsCheckingUtf8 = (bytes: Buffer, from: number, to: number): void => {
    let start = from
    for (let end = bytes.indexOf(NEWLINE, start); end !== -1 && end < to; end = bytes.indexOf(NEWLINE, start)) {
      if (unreadable !== null) line += 1
      // `toString` would silently turn invalid bytes into U+FFFD and let a damaged row pass as a fact.
      else if (isUtf8(bytes.subarray(start, end))) decode(bytes.toString('utf8', start, end))
      else {
        line += 1
        unreadable = { _tag: 'Unreadable', line, reason: 'row is not valid UTF-8' }
      }
      start = end + 1
    }
  }

  // Ends a dropped row at its newline: it reads as `JSON.parse` and the UTF-8 check would have read it.
  const endDroppedRow = (rowBytes: number): void => {
    line += 1
    committed += rowBytes + 1
    if (unreadable === null) unreadable = { _tag: 'Unreadable', line, reason: pending.rowReason() }
    pending.reset()
    pendingFed = 0
    dropping = false
  }

  const summary = (tailLength: number): Omit<LedgerSnapshot, 'events'> => {
    const length = dropping ? pendingFed : tailLength
    const verdict = length > 0 ? pending.verdict() : 'empty'
    const torn = verdict === 'torn'
    const tailProblem: LedgerProblem | null =
      verdict === 'empty' || torn ? null : { _tag: 'Unreadable', line: line + 1, reason: TAIL_REASONS[verdict] }
    return {
      highWater: line,
      committedBytes: committed,
      tornTail: torn ? { offset: committed, length } : null,
      problem: unreadable ?? tailProblem ?? mismatch,
    }
  }

  return {
    scan: (bytes) => {
      let from = 0
      if (dropping) {
        const end = bytes.indexOf(NEWLINE)
        pending.feed(bytes, 0, end === -1 ? bytes.length : end)
        if (end === -1) {
          pendingFed += bytes.length
          return bytes.length
        }
        endDroppedRow(pendingFed + end)
        from = end + 1
      }
      const rowsFrom = from
      while (from < bytes.length) {
        const limit = Math.min(from + WINDOW_BYTES, bytes.length)
        let last = bytes.lastIndexOf(NEWLINE, limit - 1)
        // A row longer than a window is scanned on its own.
        if (last < from) last = bytes.indexOf(NEWLINE, limit)
        if (last === -1) break
        scanRows(bytes, from, last + 1)
        from = last + 1
      }
      // The unterminated rest is a new row once a newline was consumed (a dropped row's end resets
      // on its own), else the same row grown by this read.
      if (from > rowsFrom) {
        pending.reset()
        pendingFed = 0
      }
      pending.feed(bytes, from + pendingFed, bytes.length)
      pendingFed = bytes.length - from
      if (pendingFed > 0 && (unreadable !== null || pending.rejected())) {
        dropping = true
        return bytes.length
      }
      return from
    },
    snapshot: (tailLength) => ({ events, ...summary(tailLength) }),
    ledgerScan: (tailLength, digest) => ({ rows, ...summary(tailLength), digest }),
    committedBytes: () => committed,
  }
}

// Why an unterminated final line that is not a torn row makes the ledger unreadable.
const TAIL_REASONS = {
  complete: 'final row is complete JSON without its newline: not committed, yet not provably torn',
  not_object: 'final row has no newline and is not the start of a JSON object',
  not_json: 'final row has no newline and is not the start of a JSON object',
  not_utf8: 'final row has no newline and is not valid UTF-8',
} as const

/**
 * Scans a ledger's bytes into a snapshot. Pure: never throws, never reads anything else.
 * @category codecs
 */
export const scanLedger = (bytes: Uint8Array, identity: LedgerIdentity): LedgerSnapshot => {
  const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const scanner = makeLedgerScanner(identity)
  const consumed = scanner.scan(buffer)
  return scanner.snapshot(buffer.length - consumed)
}
