/**
 * The file-backed RuntimeEvent ledger: `runs/<runId>/runtime-events.jsonl`, one JSON row per line.
 *
 * An append is one `O_APPEND` write of `JSON + "\n"`, serialized per run in-process. The store keeps
 * (rows, bytes) of each ledger it has seen and checks it against one `fstat` per append, so appends
 * are O(1) yet notice a file changed behind their back (another instance, a crash, a torn write)
 * and rescan it. A rescan that finds a torn final row truncates it — the only repair ever made —
 * and one that finds corruption refuses the append: nothing is ever written after a bad row.
 */
import { constants } from 'node:fs'
import { decodeRuntimeEvent, type RuntimeEvent } from '@maka/events'
import * as E from 'fp-ts/lib/Either.js'
import type * as TE from 'fp-ts/lib/TaskEither.js'
import { checkIds } from './internal/checkIds.js'
import { attempt, openConfined, pathExists, toTask, type Outcome, type StoreContext } from './internal/durableFs.js'
import { readLastRow } from './internal/readLastRow.js'
import {
  EMPTY_DIGEST,
  foldLedgerFile,
  readLedgerFile,
  replayLedgerFile,
  type ReplayExpectation,
} from './internal/readLedgerFile.js'
import { serialized } from './internal/runQueue.js'
import type { StoreFile } from './StoreFs.js'
import { ledgerPath, runDir, runHeaderPath } from './layout.js'
import { emptyLedgerSnapshot, type LedgerScan, type LedgerSnapshot } from './LedgerSnapshot.js'
import {
  eventIdentityMismatch,
  highWaterConflict,
  invalidRecord,
  ioFailed,
  ledgerChanged,
  ledgerUnreadable,
  notFound,
  type StoreError,
} from './StoreError.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

export type { ReplayExpectation } from './internal/readLedgerFile.js'

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
   * A throwing `onEvent` stops the read: `IoFailed` at operation `deliver`.
   */
  fold(sessionId: string, runId: string, onEvent: (event: RuntimeEvent) => void): TE.TaskEither<StoreError, LedgerScan>
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

const LEDGER_MODE = 0o600

interface Committed {
  readonly rows: number
  readonly bytes: number
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Builds the ledger store of one store instance.
 * @category constructors
 */
export const makeRuntimeEventStore = (context: StoreContext): RuntimeEventStore => {
  const { dataDir, dirSync } = context
  // Only clean ledgers are remembered; a ledger with a torn tail or a problem is rescanned each time.
  const committed = new Map<string, Committed>()

  const readLocked = async (sessionId: string, runId: string): Outcome<LedgerSnapshot> => {
    const path = ledgerPath(dataDir, sessionId, runId)
    const read = await readLedgerFile(context, path, { sessionId, runId })
    if (E.isLeft(read))
      return read.left._tag === 'NotFound' ? missingLedger(sessionId, runId, emptyLedgerSnapshot) : read
    const snapshot = read.right
    if (snapshot.problem === null && snapshot.tornTail === null) {
      committed.set(path, { rows: snapshot.highWater, bytes: snapshot.committedBytes })
    }
    return E.right(snapshot)
  }

  // A missing ledger is the empty ledger of an existing run, else the run's NotFound.
  const missingLedger = async <A>(sessionId: string, runId: string, empty: A): Outcome<A> => {
    const headerPath = runHeaderPath(dataDir, sessionId, runId)
    const header = await pathExists(context, headerPath)
    if (E.isLeft(header)) return header
    return header.right ? E.right(empty) : E.left(notFound(headerPath))
  }

  const foldLocked = async (
    sessionId: string,
    runId: string,
    onEvent: (event: RuntimeEvent) => void,
  ): Outcome<LedgerScan> => {
    const path = ledgerPath(dataDir, sessionId, runId)
    const scan = await foldLedgerFile(context, path, { sessionId, runId }, onEvent)
    if (E.isLeft(scan)) return scan.left._tag === 'NotFound' ? missingLedger(sessionId, runId, emptyLedgerScan) : scan
    if (scan.right.problem === null && scan.right.tornTail === null) {
      committed.set(path, { rows: scan.right.highWater, bytes: scan.right.committedBytes })
    }
    return scan
  }

  const replayUnlocked = async (
    sessionId: string,
    runId: string,
    expected: ReplayExpectation,
    onRows: (events: ReadonlyArray<RuntimeEvent>) => void | Promise<void>,
  ): Outcome<void> => {
    const path = ledgerPath(dataDir, sessionId, runId)
    const replayed = await replayLedgerFile(context, path, { sessionId, runId }, expected, onRows)
    if (E.isRight(replayed) || replayed.left._tag !== 'NotFound') return replayed
    const missing = await missingLedger(sessionId, runId, undefined)
    if (E.isLeft(missing)) return missing
    if (expected.committedBytes > 0) return E.left(ledgerChanged(path, expected.committedBytes, 'fewer_bytes'))
    return expected.digest === EMPTY_DIGEST
      ? E.right(undefined)
      : E.left(ledgerChanged(path, expected.committedBytes, 'different_bytes'))
  }

  // Decides how many rows are committed right now, using the cache only when the file size agrees.
  const currentState = async (
    handle: StoreFile,
    path: string,
    sessionId: string,
    runId: string,
  ): Outcome<{ readonly state: Committed; readonly truncateTo: number | null; readonly tighten: boolean }> => {
    const stats = await attempt('stat', path, () => handle.stat())
    if (E.isLeft(stats)) return stats
    // The ledger holds prompts and tool results: owner-only, whatever the umask was at its creation.
    // Set only once the append is known to go ahead, so a refused append changes nothing at all.
    const tighten = (stats.right.mode & 0o777) !== LEDGER_MODE
    const known = committed.get(path)
    if (known !== undefined && known.bytes === stats.right.size) {
      return E.right({ state: known, truncateTo: null, tighten })
    }
    committed.delete(path)
    const read = await readLedgerFile(context, path, { sessionId, runId })
    if (E.isLeft(read)) return read
    const snapshot = read.right
    if (snapshot.problem !== null) return E.left(ledgerUnreadable(path, snapshot.problem))
    return E.right({
      state: { rows: snapshot.highWater, bytes: snapshot.committedBytes },
      truncateTo: snapshot.tornTail === null ? null : snapshot.committedBytes,
      tighten,
    })
  }

  const appendThrough = async (
    handle: StoreFile,
    path: string,
    sessionId: string,
    runId: string,
    row: Buffer,
    options: AppendOptions,
  ): Outcome<AppendResult> => {
    const current = await currentState(handle, path, sessionId, runId)
    if (E.isLeft(current)) return current
    const { state, truncateTo, tighten } = current.right
    if (options.expectedHighWater !== undefined && options.expectedHighWater !== state.rows) {
      return E.left(highWaterConflict(path, options.expectedHighWater, state.rows))
    }
    if (tighten) {
      const chmodded = await attempt('chmod', path, () => handle.chmod(LEDGER_MODE))
      if (E.isLeft(chmodded)) return chmodded
    }
    if (truncateTo !== null) {
      const truncated = await attempt('truncate', path, () => handle.truncate(truncateTo))
      if (E.isLeft(truncated)) return truncated
    }
    const committedRow = async (): Outcome<void> => {
      const written = await attempt('append', path, () => handle.write(row, 0, row.length))
      if (E.isLeft(written)) return written
      if (written.right.bytesWritten !== row.length) {
        const cause = Object.assign(new Error(`short write, ${written.right.bytesWritten} of ${row.length} bytes`), {
          code: 'SHORT_WRITE',
        })
        return E.left(ioFailed('append', path, cause))
      }
      if (options.durable !== true) return E.right(undefined)
      const synced = await attempt('fsync', path, () => handle.sync())
      if (E.isLeft(synced)) return synced
      return dirSync.persist(path)
    }
    const done = await committedRow()
    if (E.isLeft(done)) {
      // Nothing may stay in the ledger that the caller was told did not commit: a partial row, or
      // a whole row whose fsync failed (it might vanish in a crash after being read). Best effort:
      // if the truncation fails too, the next append rescans the file instead of trusting a count.
      const rolledBack = await attempt('truncate', path, () => handle.truncate(state.bytes))
      if (E.isRight(rolledBack)) committed.set(path, state)
      else committed.delete(path)
      return done
    }
    const next = { rows: state.rows + 1, bytes: state.bytes + row.length }
    committed.set(path, next)
    return E.right({ highWater: next.rows })
  }

  const appendLocked = async (
    sessionId: string,
    runId: string,
    row: Buffer,
    options: AppendOptions,
  ): Outcome<AppendResult> => {
    const path = ledgerPath(dataDir, sessionId, runId)
    if (!committed.has(path)) {
      // Opening with O_APPEND creates the file, so make sure the run exists first.
      const headerPath = runHeaderPath(dataDir, sessionId, runId)
      const header = await pathExists(context, headerPath)
      if (E.isLeft(header)) return header
      if (!header.right) return E.left(notFound(headerPath))
    }
    const opened = await openConfined(
      context,
      'open',
      path,
      constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT,
    )
    if (E.isLeft(opened)) return opened
    const appended = await appendThrough(opened.right, path, sessionId, runId, row, options)
    // The row is committed (and durable when asked) before the close; a failed close loses nothing.
    await opened.right.close().catch(() => undefined)
    return appended
  }

  return {
    append: (sessionId, runId, event, options = {}) =>
      toTask(
        async () => {
          const ids = checkIds(['sessionId', sessionId], ['runId', runId])
          if (E.isLeft(ids)) return ids
          const path = ledgerPath(dataDir, sessionId, runId)
          if (event.sessionId !== sessionId) return E.left(eventIdentityMismatch(path, 'sessionId'))
          if (event.runId !== runId) return E.left(eventIdentityMismatch(path, 'runId'))
          const row = encodeRow(event)
          if (E.isLeft(row)) return row
          return serialized(runDir(dataDir, sessionId, runId), () => appendLocked(sessionId, runId, row.right, options))
        },
        () => `append to the ledger of run ${runId} in session ${sessionId}`,
      ),
    read: (sessionId, runId) =>
      toTask(
        async () => {
          const ids = checkIds(['sessionId', sessionId], ['runId', runId])
          if (E.isLeft(ids)) return ids
          // Queued behind writes so a read never sees half of an in-flight append from this process.
          return serialized(runDir(dataDir, sessionId, runId), () => readLocked(sessionId, runId))
        },
        () => `read the ledger of run ${runId} in session ${sessionId}`,
      ),
    fold: (sessionId, runId, onEvent) =>
      toTask(
        async () => {
          const ids = checkIds(['sessionId', sessionId], ['runId', runId])
          if (E.isLeft(ids)) return ids
          return serialized(runDir(dataDir, sessionId, runId), () => foldLocked(sessionId, runId, onEvent))
        },
        () => `fold the ledger of run ${runId} in session ${sessionId}`,
      ),
    replay: (sessionId, runId, expected, onRows) =>
      toTask(
        async () => {
          const ids = checkIds(['sessionId', sessionId], ['runId', runId])
          if (E.isLeft(ids)) return ids
          const checked = checkReplayExpectation(expected)
          if (E.isLeft(checked)) return checked
          // Not queued behind writes: the committed prefix never changes under an append (a repair
          // truncates only after it), and a slow consumer must not hold this process's appends.
          return replayUnlocked(sessionId, runId, expected, onRows)
        },
        () => `replay the ledger of run ${runId} in session ${sessionId}`,
      ),
    readLastRow: (sessionId, runId) =>
      toTask(
        async () => {
          const ids = checkIds(['sessionId', sessionId], ['runId', runId])
          if (E.isLeft(ids)) return ids
          return serialized(runDir(dataDir, sessionId, runId), async () => {
            const read = await readLastRow(context, ledgerPath(dataDir, sessionId, runId), { sessionId, runId })
            if (E.isRight(read) || read.left._tag !== 'NotFound') return read
            const headerPath = runHeaderPath(dataDir, sessionId, runId)
            const header = await pathExists(context, headerPath)
            if (E.isLeft(header)) return header
            return header.right ? E.right(null) : E.left(notFound(headerPath))
          })
        },
        () => `read the last row of the ledger of run ${runId} in session ${sessionId}`,
      ),
  }
}

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
  const decoded = decodeRuntimeEvent(JSON.parse(json))
  if (E.isLeft(decoded)) return E.left(invalidRecord('RuntimeEvent', decoded.left))
  return E.right(json)
}

const encodeRow = (event: RuntimeEvent): E.Either<StoreError, Buffer> =>
  E.map((json: string) => Buffer.from(`${json}\n`, 'utf8'))(encodeRuntimeEventRow(event))
