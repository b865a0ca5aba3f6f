/**
 * What reading a ledger yields, and the row rules every adapter reads rows by (docs/contract.md §1,
 * docs/decisions.md): a row that is not JSON of the exact RuntimeEvent shape, or repeats an earlier
 * row's `id`, makes the ledger unreadable at that line; a well-formed row of another session or run
 * is an identity mismatch, and reading goes on past it. How rows are cut out of a medium (a JSONL
 * file's bytes, a table's row texts) is the adapter's; what a row means is decided here, once.
 */
import { decodeRuntimeEvent, type RuntimeEvent } from '@maka/events'
import { type IdSet, makeIdSet } from './internal/idSet.js'
import { isRuntimeEventShape } from './internal/isRuntimeEventShape.js'
import { utf8Length } from './internal/utf8Length.js'

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
  /**
   * The decodable rows before the first unreadable row (all complete rows when there is none),
   * foreign rows included: an identity mismatch does not stop the read.
   */
  readonly events: ReadonlyArray<RuntimeEvent>
  /** The number of complete (newline-terminated) rows, problem or not: what high-water pins compare with. */
  readonly highWater: number
  /** The byte length of those complete rows: everything up to and including the last newline. */
  readonly committedBytes: number
  readonly tornTail: TornTail | null
  /** The first unreadable row (the final unterminated line included), else the first foreign row. */
  readonly problem: LedgerProblem | null
}

/**
 * A ledger read that kept no rows: what `LedgerSnapshot` holds but the events, plus a digest of the
 * bytes read, so a second read can prove it saw the same committed prefix (`RuntimeEventStore.replay`).
 * @category models
 */
export interface LedgerScan {
  /** How many rows were handed over: exactly `LedgerSnapshot.events.length` of the same bytes. */
  readonly rows: number
  readonly highWater: number
  readonly committedBytes: number
  readonly tornTail: TornTail | null
  readonly problem: LedgerProblem | null
  /**
   * Lowercase hex SHA-256 of the committed bytes: the first `committedBytes` bytes of the file (the
   * torn tail excluded); for a row store, each stored row text + `"\n"`, in order. This is the
   * prefix digest at `highWater` (not at `rows`, which can be fewer).
   */
  readonly digest: string
  /**
   * The prefix digest after exactly the pin a fold was asked for (`FoldOptions.digestAt`), from the
   * same pass. Absent when no pin was asked for, or when the pin is past `highWater` (those rows are
   * not committed: a digest of them does not exist).
   */
  readonly digestAt?: PrefixDigest
}

/**
 * The digest of a ledger's first `rows` committed rows (`prefixDigest(run, rows)`): lowercase hex
 * SHA-256 of their stored texts, each followed by `"\n"` — for a JSONL file, its bytes up to the end
 * of row `rows`. A ledger row records it as `sha256:` + `digest`.
 * @category models
 */
export interface PrefixDigest {
  /** The pin: how many committed rows the digest covers, counted as `highWater` counts them. */
  readonly rows: number
  readonly digest: string
}

/**
 * Takes each row a read would keep, in ledger order, instead of the read keeping it.
 * @category models
 */
export type LedgerSink = (event: RuntimeEvent) => void

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

const NEWLINE_CHAR = '\n'
const noIdCheck: IdSet = { add: () => true, size: () => 0 }

/**
 * The rule of one row: takes its text and 1-based line, hands the decoded row to the sink when it
 * is kept, and answers null, its identity mismatch, or why the ledger is unreadable there.
 * @category models
 */
export type LedgerRowCheck = (row: string, line: number) => LedgerProblem | null

/**
 * Starts checking one run's rows in ledger order: the exact-shape decode, the repeated-id check
 * (`known_absent` skips it, for a second read of rows already proven whole by a digest) and the
 * identity check. Every kept row goes to `keep`.
 * @category constructors
 */
export const makeLedgerRowCheck = (
  identity: LedgerIdentity,
  keep: LedgerSink,
  repeatedIds: 'check' | 'known_absent' = 'check',
): LedgerRowCheck => {
  // `id` is unique within a ledger. Kept as bits and outside V8's heap (idSet.ts): a Set of the rows'
  // own id strings kept them all alive, a third of a fold's peak memory.
  const ids = repeatedIds === 'known_absent' ? noIdCheck : makeIdSet(identity.runId)
  return (row, line) => decodeRowInto(keep, ids, row, line, identity)
}

// Hands the decoded row to `keep` and returns null or its identity mismatch, or returns why it is
// unreadable (nothing handed over); no wrapper object per row.
const decodeRowInto = (
  keep: LedgerSink,
  ids: IdSet,
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
  // `decodeParsedRow`'s rule, written out: no `Either` per row on the hot path of every read.
  if (isRuntimeEventShape(parsed)) {
    event = parsed
  } else {
    const decoded = decodeRuntimeEvent(parsed)
    if (decoded._tag === 'Left') return { _tag: 'Unreadable', line, reason: decoded.left }
    event = decoded.right
  }
  if (!ids.add(event.id)) return { _tag: 'Unreadable', line, reason: 'row repeats the id of an earlier row' }
  // A foreign row is well-formed: it is kept, so the rows after it are still read and counted.
  keep(event)
  if (event.sessionId !== identity.sessionId) return { _tag: 'IdentityMismatch', line, field: 'sessionId' }
  if (event.runId !== identity.runId) return { _tag: 'IdentityMismatch', line, field: 'runId' }
  return null
}

/**
 * Reads a ledger kept as one stored text per row (a database table) with the file reader's rules:
 * the same exact-shape decode, duplicate-id check, identity check and problem sentences. Rows come
 * in high-water order; there is no torn row in such a medium.
 * @category models
 */
export interface LedgerRowReader {
  /**
   * Takes the next row's JSON text; `bytes`, when the caller has counted it, is the text's UTF-8
   * length (what the row adds to `committedBytes`), so it is not counted twice.
   */
  readonly add: (row: string, bytes?: number) => void
  /**
   * The snapshot of the rows taken so far; `committedBytes` counts them as the JSONL file would.
   * With a sink its `events` are empty: every row went to the sink.
   */
  readonly snapshot: () => LedgerSnapshot
  /**
   * The same answer without the events, with the digest the caller computed over each row text
   * plus `"\n"`, in order (the reader does no hashing), and the digest at a pin when it has one.
   */
  readonly ledgerScan: (digest: string, digestAt?: PrefixDigest) => LedgerScan
}

/**
 * Options of a row reader.
 * @category models
 */
export interface LedgerRowReaderOptions {
  /**
   * The UTF-8 byte length of a text, as `utf8Length` counts it (the default): an adapter passes its
   * runtime's native count (`Buffer.byteLength`), several times faster than counting in JS.
   */
  readonly byteLength?: (text: string) => number
  /**
   * `known_absent` skips the repeated-id check and keeps no id, for a second read of rows a digest
   * proves are the ones a first read checked (as `makeLedgerRowCheck`'s); with it, `keepAtMost`
   * stops handing rows over after that many, the count the first read kept before any repeated id.
   */
  readonly repeatedIds?: 'check' | 'known_absent'
  readonly keepAtMost?: number
}

/**
 * Starts reading one run's ledger row by row. With `sink`, every row that would be kept goes to it
 * in order instead, and the reader keeps only the ids.
 * @category constructors
 */
export const makeLedgerRowReader = (
  identity: LedgerIdentity,
  sink?: LedgerSink,
  options: LedgerRowReaderOptions = {},
): LedgerRowReader => {
  const events: Array<RuntimeEvent> = []
  const byteLength = options.byteLength ?? utf8Length
  const keepAtMost = options.keepAtMost ?? Number.POSITIVE_INFINITY
  let kept = 0
  const keep: LedgerSink =
    sink === undefined
      ? (event) => {
          if (kept >= keepAtMost) return
          kept += 1
          events.push(event)
        }
      : (event) => {
          if (kept >= keepAtMost) return
          kept += 1
          sink(event)
        }
  const ids = options.repeatedIds === 'known_absent' ? noIdCheck : makeIdSet(identity.runId)
  let rows = 0
  let bytes = 0
  let unreadable: LedgerProblem | null = null
  let mismatch: LedgerProblem | null = null
  const summary = (): Omit<LedgerSnapshot, 'events'> => ({
    highWater: rows,
    committedBytes: bytes,
    tornTail: null,
    problem: unreadable ?? mismatch,
  })
  return {
    add: (row, length) => {
      rows += 1
      bytes += (length ?? byteLength(row)) + 1
      if (unreadable !== null) return
      // A stored text holding a newline would be two rows in a file: it is not a row.
      const problem = row.includes(NEWLINE_CHAR)
        ? { _tag: 'Unreadable' as const, line: rows, reason: 'row is not valid JSON' }
        : decodeRowInto(keep, ids, row, rows, identity)
      if (problem === null) return
      if (problem._tag === 'Unreadable') unreadable = problem
      else mismatch ??= problem
    },
    snapshot: () => ({ events, ...summary() }),
    ledgerScan: (digest, digestAt) => ({
      rows: kept,
      ...summary(),
      digest,
      ...(digestAt === undefined ? {} : { digestAt }),
    }),
  }
}
