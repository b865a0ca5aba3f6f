/**
 * What reading a ledger yields, and the scan that produces it from the file's bytes. The scan is
 * incremental: it takes the bytes a window at a time (the store streams the file through one
 * reusable buffer, so a million-row ledger never sits in memory as one Buffer), decodes each
 * window of complete rows to one string when it is valid UTF-8, and parses the rows out of it —
 * no intermediate array of lines, no per-row Buffer conversion.
 *
 * Rules (ledger-format.md): the final line without a trailing newline is a torn row — excluded and
 * reported, even if it parses, because its append never completed. Any other row that is not UTF-8
 * JSON of the exact RuntimeEvent shape makes the ledger unreadable at that line; a well-formed row of
 * another session or run is an identity mismatch. Events before the first problem are kept.
 */
import { isAscii, isUtf8 } from 'node:buffer'
import { decodeRuntimeEvent, type RuntimeEvent } from '@maka/events'
import { isRuntimeEventShape } from './internal/isRuntimeEventShape.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * Why a ledger is not whole: `runtime_ledger_unreadable` or `runtime_identity_mismatch`, with the
 * 1-based line number. `reason` is a decoder sentence and never holds a row's values.
 * @category models
 */
export type LedgerProblem =
  | { readonly _tag: 'Unreadable'; readonly line: number; readonly reason: string }
  | { readonly _tag: 'IdentityMismatch'; readonly line: number; readonly field: 'sessionId' | 'runId' }

/**
 * The torn final row: bytes after the last newline (`ledger_torn_tail`).
 * @category models
 */
export interface TornTail {
  readonly offset: number
  readonly length: number
}

/**
 * A read of one run's ledger.
 * @category models
 */
export interface LedgerSnapshot {
  /** The decodable rows before the first problem (all complete rows when `problem` is null). */
  readonly events: ReadonlyArray<RuntimeEvent>
  /** The number of complete (newline-terminated) rows, problem or not: what high-water pins compare with. */
  readonly highWater: number
  /** The byte length of those complete rows: everything up to and including the last newline. */
  readonly committedBytes: number
  readonly tornTail: TornTail | null
  readonly problem: LedgerProblem | null
}

/**
 * The run a ledger belongs to; every row must carry these ids.
 * @category models
 */
export interface LedgerIdentity {
  readonly sessionId: string
  readonly runId: string
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * The snapshot of a ledger file that does not exist yet (its run header does).
 * @category constructors
 */
export const emptyLedgerSnapshot: LedgerSnapshot = Object.freeze({
  events: Object.freeze([]),
  highWater: 0,
  committedBytes: 0,
  tornTail: null,
  problem: null,
})

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
  /** The snapshot, given how many bytes followed the last consumed newline (the torn tail). */
  snapshot(tailLength: number): LedgerSnapshot
}

/**
 * Starts the scan of one run's ledger.
 * @category constructors
 */
export const makeLedgerScanner = (identity: LedgerIdentity): LedgerScanner => {
  const events: Array<RuntimeEvent> = []
  let problem: LedgerProblem | null = null
  let line = 0
  let committed = 0

  // Counts rows only: after the first problem, highWater must still match what pins recorded.
  const countRows = (bytes: Buffer, from: number, to: number): void => {
    for (let at = bytes.indexOf(NEWLINE, from); at !== -1 && at < to; at = bytes.indexOf(NEWLINE, at + 1)) line += 1
  }

  // [from, to) holds whole rows: `to - 1` is a newline.
  const scanRows = (bytes: Buffer, from: number, to: number): void => {
    committed += to - from
    if (problem !== null) return countRows(bytes, from, to)
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
      line += 1
      if (problem === null) problem = decodeRowInto(events, text.slice(start, end), line, identity)
      start = end + 1
    }
  }

  const scanRowsCheckingUtf8 = (bytes: Buffer, from: number, to: number): void => {
    let start = from
    for (let end = bytes.indexOf(NEWLINE, start); end !== -1 && end < to; end = bytes.indexOf(NEWLINE, start)) {
      line += 1
      if (problem === null) {
        // `toString` would silently turn invalid bytes into U+FFFD and let a damaged row pass as a fact.
        problem = isUtf8(bytes.subarray(start, end))
          ? decodeRowInto(events, bytes.toString('utf8', start, end), line, identity)
          : { _tag: 'Unreadable', line, reason: 'row is not valid UTF-8' }
      }
      start = end + 1
    }
  }

  return {
    scan: (bytes) => {
      let from = 0
      while (from < bytes.length) {
        const limit = Math.min(from + WINDOW_BYTES, bytes.length)
        let last = bytes.lastIndexOf(NEWLINE, limit - 1)
        // A row longer than a window is scanned on its own.
        if (last < from) last = bytes.indexOf(NEWLINE, limit)
        if (last === -1) break
        scanRows(bytes, from, last + 1)
        from = last + 1
      }
      return from
    },
    snapshot: (tailLength) => ({
      events,
      highWater: line,
      committedBytes: committed,
      tornTail: tailLength > 0 ? { offset: committed, length: tailLength } : null,
      problem,
    }),
  }
}

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

// Pushes the decoded row and returns null, or returns the row's problem; no wrapper object per row.
const decodeRowInto = (
  events: Array<RuntimeEvent>,
  row: string,
  line: number,
  identity: LedgerIdentity,
): LedgerProblem | null => {
  if (row.length === 0) return { _tag: 'Unreadable', line, reason: 'row is empty' }
  let parsed: unknown
  try {
    parsed = JSON.parse(row)
  } catch {
    // JSON.parse's own message quotes the input, which may hold prompts or tool output.
    return { _tag: 'Unreadable', line, reason: 'row is not valid JSON' }
  }
  let event: RuntimeEvent
  // The exact-shape check accepts what `RuntimeEvent.is` accepts, without io-ts' per-struct
  // closures; the codec runs only for rows it rejects, to get its sentence (or, should the codec
  // ever upcast old rows or accept more than its guard, to get that value).
  if (isRuntimeEventShape(parsed)) {
    event = parsed
  } else {
    const decoded = decodeRuntimeEvent(parsed)
    if (decoded._tag === 'Left') return { _tag: 'Unreadable', line, reason: decoded.left }
    event = decoded.right
  }
  if (event.sessionId !== identity.sessionId) return { _tag: 'IdentityMismatch', line, field: 'sessionId' }
  if (event.runId !== identity.runId) return { _tag: 'IdentityMismatch', line, field: 'runId' }
  events.push(event)
  return null
}
