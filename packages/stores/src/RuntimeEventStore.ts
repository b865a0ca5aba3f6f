/**
 * The file-backed RuntimeEvent ledger: `runs/<runId>/runtime-events.jsonl`, one JSON row per line.
 *
 * An append is one `O_APPEND` write of `JSON + "\n"`, serialized per run in-process. The store keeps
 * (rows, bytes) of each ledger it has seen and checks it against one `fstat` per append, so appends
 * are O(1) yet notice a file changed behind their back (another instance, a crash, a torn write)
 * and rescan it. A rescan that finds a torn final row truncates it — the only repair ever made —
 * and one that finds corruption refuses the append: nothing is ever written after a bad row.
 */
import { open, type FileHandle } from 'node:fs/promises'
import { decodeRuntimeEvent, type RuntimeEvent } from '@maka/events'
import * as E from 'fp-ts/lib/Either.js'
import type * as TE from 'fp-ts/lib/TaskEither.js'
import { checkIds } from './internal/checkIds.js'
import { attempt, pathExists, toTask, type Outcome, type StoreContext } from './internal/durableFs.js'
import { readLastRow } from './internal/readLastRow.js'
import { readLedgerFile } from './internal/readLedgerFile.js'
import { serialized } from './internal/runQueue.js'
import { ledgerPath, runDir, runHeaderPath } from './layout.js'
import { emptyLedgerSnapshot, type LedgerSnapshot } from './LedgerSnapshot.js'
import {
  eventIdentityMismatch,
  highWaterConflict,
  invalidRecord,
  ioFailed,
  ledgerUnreadable,
  notFound,
  type StoreError,
} from './StoreError.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

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
}

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
    const read = await readLedgerFile(path, { sessionId, runId })
    if (E.isLeft(read)) {
      if (read.left._tag !== 'NotFound') return read
      const headerPath = runHeaderPath(dataDir, sessionId, runId)
      const header = await pathExists(headerPath)
      if (E.isLeft(header)) return header
      return header.right ? E.right(emptyLedgerSnapshot) : E.left(notFound(headerPath))
    }
    const snapshot = read.right
    if (snapshot.problem === null && snapshot.tornTail === null) {
      committed.set(path, { rows: snapshot.highWater, bytes: snapshot.committedBytes })
    }
    return E.right(snapshot)
  }

  // Decides how many rows are committed right now, using the cache only when the file size agrees.
  const currentState = async (
    handle: FileHandle,
    path: string,
    sessionId: string,
    runId: string,
  ): Outcome<{ readonly state: Committed; readonly truncateTo: number | null }> => {
    const stats = await attempt('stat', path, () => handle.stat())
    if (E.isLeft(stats)) return stats
    const known = committed.get(path)
    if (known !== undefined && known.bytes === stats.right.size) return E.right({ state: known, truncateTo: null })
    committed.delete(path)
    const read = await readLedgerFile(path, { sessionId, runId })
    if (E.isLeft(read)) return read
    const snapshot = read.right
    if (snapshot.problem !== null) return E.left(ledgerUnreadable(path, snapshot.problem))
    return E.right({
      state: { rows: snapshot.highWater, bytes: snapshot.committedBytes },
      truncateTo: snapshot.tornTail === null ? null : snapshot.committedBytes,
    })
  }

  const appendThrough = async (
    handle: FileHandle,
    path: string,
    sessionId: string,
    runId: string,
    row: Buffer,
    options: AppendOptions,
  ): Outcome<AppendResult> => {
    const current = await currentState(handle, path, sessionId, runId)
    if (E.isLeft(current)) return current
    const { state, truncateTo } = current.right
    if (options.expectedHighWater !== undefined && options.expectedHighWater !== state.rows) {
      return E.left(highWaterConflict(path, options.expectedHighWater, state.rows))
    }
    if (truncateTo !== null) {
      const truncated = await attempt('truncate', path, () => handle.truncate(truncateTo))
      if (E.isLeft(truncated)) return truncated
    }
    const written = await attempt('append', path, () => handle.write(row, 0, row.length))
    if (E.isLeft(written)) return written
    if (written.right.bytesWritten !== row.length) {
      // A short write leaves a torn row; the next append rescans (no cache entry) and truncates it.
      const cause = Object.assign(new Error(`short write, ${written.right.bytesWritten} of ${row.length} bytes`), {
        code: 'SHORT_WRITE',
      })
      return E.left(ioFailed('append', path, cause))
    }
    const next = { rows: state.rows + 1, bytes: state.bytes + row.length }
    committed.set(path, next)
    if (options.durable === true) {
      const synced = await attempt('fsync', path, () => handle.sync())
      if (E.isLeft(synced)) return synced
    }
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
      const header = await pathExists(headerPath)
      if (E.isLeft(header)) return header
      if (!header.right) return E.left(notFound(headerPath))
    }
    const opened = await attempt('open', path, () => open(path, 'a'))
    if (E.isLeft(opened)) return opened
    const appended = await appendThrough(opened.right, path, sessionId, runId, row, options)
    const closed = await attempt('close', path, () => opened.right.close())
    if (E.isLeft(appended)) return appended
    if (E.isLeft(closed)) return closed
    if (options.durable === true) {
      const persisted = await dirSync.persist(path)
      if (E.isLeft(persisted)) return persisted
    }
    return appended
  }

  return {
    append: (sessionId, runId, event, options = {}) =>
      toTask(async () => {
        const ids = checkIds(['sessionId', sessionId], ['runId', runId])
        if (E.isLeft(ids)) return ids
        const path = ledgerPath(dataDir, sessionId, runId)
        if (event.sessionId !== sessionId) return E.left(eventIdentityMismatch(path, 'sessionId'))
        if (event.runId !== runId) return E.left(eventIdentityMismatch(path, 'runId'))
        const row = encodeRow(event)
        if (E.isLeft(row)) return row
        return serialized(runDir(dataDir, sessionId, runId), () => appendLocked(sessionId, runId, row.right, options))
      }),
    read: (sessionId, runId) =>
      toTask(async () => {
        const ids = checkIds(['sessionId', sessionId], ['runId', runId])
        if (E.isLeft(ids)) return ids
        // Queued behind writes so a read never sees half of an in-flight append from this process.
        return serialized(runDir(dataDir, sessionId, runId), () => readLocked(sessionId, runId))
      }),
    readLastRow: (sessionId, runId) =>
      toTask(async () => {
        const ids = checkIds(['sessionId', sessionId], ['runId', runId])
        if (E.isLeft(ids)) return ids
        return serialized(runDir(dataDir, sessionId, runId), async () => {
          const read = await readLastRow(ledgerPath(dataDir, sessionId, runId), { sessionId, runId })
          if (E.isRight(read) || read.left._tag !== 'NotFound') return read
          const headerPath = runHeaderPath(dataDir, sessionId, runId)
          const header = await pathExists(headerPath)
          if (E.isLeft(header)) return header
          return header.right ? E.right(null) : E.left(notFound(headerPath))
        })
      }),
  }
}

// Encodes the row and proves it reads back: a row the reader would reject would make the whole
// ledger unreadable, so it is refused here instead of written.
const encodeRow = (event: RuntimeEvent): E.Either<StoreError, Buffer> => {
  let json: string
  try {
    json = JSON.stringify(event)
  } catch {
    return E.left(invalidRecord('RuntimeEvent', 'not serializable as JSON'))
  }
  if (typeof json !== 'string') return E.left(invalidRecord('RuntimeEvent', 'not serializable as JSON'))
  const decoded = decodeRuntimeEvent(JSON.parse(json))
  if (E.isLeft(decoded)) return E.left(invalidRecord('RuntimeEvent', decoded.left))
  return E.right(Buffer.from(`${json}\n`, 'utf8'))
}
