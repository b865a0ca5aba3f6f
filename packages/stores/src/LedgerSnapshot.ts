/**
 * What reading a ledger yields, and the scan that produces it from the file's bytes. The scan walks
 * one Buffer for newlines and decodes each complete row as it goes, so a million-row ledger costs
 * one read plus one parse per row, with no intermediate array of line strings.
 *
 * Rules (ledger-format.md): the final line without a trailing newline is a torn row — excluded and
 * reported, even if it parses, because its append never completed. Any other row that is not UTF-8
 * JSON of the exact RuntimeEvent shape makes the ledger unreadable at that line; a well-formed row of
 * another session or run is an identity mismatch. Events before the first problem are kept.
 */
import { isUtf8 } from 'node:buffer'
import { decodeRuntimeEvent, RuntimeEvent } from '@maka/events'

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

/**
 * Scans a ledger's bytes into a snapshot. Pure: never throws, never reads anything else.
 * @category codecs
 */
export const scanLedger = (bytes: Uint8Array, identity: LedgerIdentity): LedgerSnapshot => {
  const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const events: Array<RuntimeEvent> = []
  // One UTF-8 check over all complete rows is far cheaper than one per row; rows are checked one by
  // one only when it fails, to name the damaged line. The torn tail may end inside a character.
  const checkEachRow = !isUtf8(buffer.subarray(0, buffer.lastIndexOf(NEWLINE) + 1))
  let problem: LedgerProblem | null = null
  let start = 0
  let line = 0
  for (;;) {
    const end = buffer.indexOf(NEWLINE, start)
    if (end === -1) break
    line += 1
    // After the first problem we only count rows: highWater must still match what pins recorded.
    if (problem === null) problem = decodeRowInto(events, buffer, start, end, line, identity, checkEachRow)
    start = end + 1
  }
  return {
    events,
    highWater: line,
    committedBytes: start,
    tornTail: start < buffer.length ? { offset: start, length: buffer.length - start } : null,
    problem,
  }
}

// Pushes the decoded row and returns null, or returns the row's problem; no wrapper object per row.
const decodeRowInto = (
  events: Array<RuntimeEvent>,
  buffer: Buffer,
  start: number,
  end: number,
  line: number,
  identity: LedgerIdentity,
  checkUtf8: boolean,
): LedgerProblem | null => {
  if (end === start) return { _tag: 'Unreadable', line, reason: 'row is empty' }
  // `toString` would silently turn invalid bytes into U+FFFD and let a damaged row pass as a fact.
  if (checkUtf8 && !isUtf8(buffer.subarray(start, end))) {
    return { _tag: 'Unreadable', line, reason: 'row is not valid UTF-8' }
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(buffer.toString('utf8', start, end))
  } catch {
    // JSON.parse's own message quotes the input, which may hold prompts or tool output.
    return { _tag: 'Unreadable', line, reason: 'row is not valid JSON' }
  }
  let event: RuntimeEvent
  // The guard checks the same exact shape without building io-ts contexts per field, which is most
  // of the decode cost on a large ledger; the decoder runs only for rows the guard rejects, to get
  // its sentence (or, should the codec ever upcast old rows, to get the upcast value).
  if (RuntimeEvent.is(parsed)) {
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
