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
import type { RuntimeEvent } from '@maka/events'
import * as E from 'fp-ts/lib/Either.js'
import {
  type AppendOptions,
  type AppendResult,
  checkFoldOptions,
  checkIds,
  checkReplayExpectation,
  emptyLedgerScan,
  emptyLedgerSnapshot,
  encodeRuntimeEventRow,
  eventIdentityMismatch,
  highWaterConflict,
  ioFailed,
  ledgerChanged,
  type LedgerScan,
  type LedgerSnapshot,
  ledgerUnreadable,
  notFound,
  type ReplayExpectation,
  type RuntimeEventStore,
  type StoreError,
} from '@maka/stores'
import { attempt, openConfined, pathExists, toTask, type Outcome, type StoreContext } from './internal/durableFs.js'
import { readLastRow } from './internal/readLastRow.js'
import { EMPTY_DIGEST } from './internal/committedDigest.js'
import { foldLedgerFile, readLedgerFile, replayLedgerFile } from './internal/readLedgerFile.js'
import { serialized } from './internal/runQueue.js'
import type { StoreFile } from './StoreFs.js'
import { ledgerPath, runDir, runHeaderPath } from './layout.js'

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
    pin: number | undefined,
  ): Outcome<LedgerScan> => {
    const path = ledgerPath(dataDir, sessionId, runId)
    const scan = await foldLedgerFile(context, path, { sessionId, runId }, onEvent, pin)
    if (E.isLeft(scan)) {
      if (scan.left._tag !== 'NotFound') return scan
      const empty = pin === 0 ? { ...emptyLedgerScan, digestAt: { rows: 0, digest: EMPTY_DIGEST } } : emptyLedgerScan
      return missingLedger(sessionId, runId, empty)
    }
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
    fold: (sessionId, runId, onEvent, options = {}) =>
      toTask(
        async () => {
          const ids = checkIds(['sessionId', sessionId], ['runId', runId])
          if (E.isLeft(ids)) return ids
          const checked = checkFoldOptions(options)
          if (E.isLeft(checked)) return checked
          return serialized(runDir(dataDir, sessionId, runId), () =>
            foldLocked(sessionId, runId, onEvent, options.digestAt),
          )
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

const encodeRow = (event: RuntimeEvent): E.Either<StoreError, Buffer> =>
  E.map((json: string) => Buffer.from(`${json}\n`, 'utf8'))(encodeRuntimeEventRow(event))
