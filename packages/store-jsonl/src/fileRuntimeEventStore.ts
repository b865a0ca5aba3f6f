/**
 * The file-backed RuntimeEvent ledger: `runs/<runId>/runtime-events.jsonl`, one JSON row per line.
 *
 * An append is one `O_APPEND` write of `JSON + "\n"` (and one `fsync` when durable), serialized per run
 * in-process. The ledger a run writes stays open between its appends (decision 168), so an append
 * costs the write, the fsync and one `fstat`: the store keeps (rows, bytes) of each ledger it has seen
 * and checks it against that `fstat`, so appends are O(1) yet notice a file changed behind their back
 * (another instance, a crash, a torn write, a file removed or renamed over) and rescan or reopen it. A
 * rescan that finds a torn final row truncates it — the only repair ever made — and one that finds
 * corruption refuses the append: nothing is ever written after a bad row.
 */
import { constants } from 'node:fs'
import { dirname } from 'node:path'
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
/**
 * How many ledgers one store instance keeps open between appends. A turn writes one run (two with a
 * continuation); a host writing many runs at once reopens the least recently used beyond this.
 */
const OPEN_LEDGERS = 16
/**
 * A ledger with no append for this long is closed, so a host that stays up holds no descriptor for a
 * run that went quiet, and a store instance dropped without `close` is left holding nothing.
 */
const IDLE_CLOSE_MS = 2000

interface Committed {
  readonly rows: number
  readonly bytes: number
}

/**
 * The ledger store, and `close` for the ledgers it keeps open.
 * @category models
 */
export interface FileRuntimeEventStore extends RuntimeEventStore {
  /** Closes every ledger kept open, after the appends queued on it. The store stays usable. */
  readonly close: () => Promise<void>
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Builds the ledger store of one store instance.
 * @category constructors
 */
export const makeRuntimeEventStore = (context: StoreContext): FileRuntimeEventStore => {
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
  // One `fstat` of the kept file answers both whether it still has a name (null: it was removed, or
  // replaced by a rename over its path, so the caller reopens the path) and how long it is.
  const currentState = async (
    handle: StoreFile,
    path: string,
    sessionId: string,
    runId: string,
  ): Outcome<{ readonly state: Committed; readonly truncateTo: number | null; readonly tighten: boolean } | null> => {
    const stats = await attempt('stat', path, () => handle.stat())
    if (E.isLeft(stats)) return stats
    if (stats.right.nlink === 0) return E.right(null)
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
  ): Outcome<AppendResult | null> => {
    const current = await currentState(handle, path, sessionId, runId)
    if (E.isLeft(current)) return current
    if (current.right === null) return E.right(null)
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

  // A run's folder and ledger path, joined once per run rather than on each of its appends.
  const joined = new Map<string, { readonly dir: string; readonly path: string }>()
  const appendPaths = (sessionId: string, runId: string): { readonly dir: string; readonly path: string } => {
    // Checked ids hold no '/', so the pair is a key no other pair can spell.
    const key = `${sessionId}/${runId}`
    const known = joined.get(key)
    if (known !== undefined) return known
    if (joined.size >= 4 * OPEN_LEDGERS) joined.clear()
    const paths = { dir: runDir(dataDir, sessionId, runId), path: ledgerPath(dataDir, sessionId, runId) }
    joined.set(key, paths)
    return paths
  }

  // The ledgers this instance keeps open, least recently used first; `busy` ones are mid-append.
  const openLedgers = new Map<string, StoreFile>()
  const busy = new Set<string>()
  const lastAppend = new Map<string, number>()
  let sweeper: ReturnType<typeof setTimeout> | null = null

  // Closes what went idle; runs while anything is open, and never keeps the process alive.
  const sweep = (): void => {
    sweeper = null
    const now = Date.now()
    for (const path of [...openLedgers.keys()]) {
      if (!busy.has(path) && now - (lastAppend.get(path) ?? 0) >= IDLE_CLOSE_MS) forget(path)
    }
    armSweeper()
  }
  const armSweeper = (): void => {
    if (sweeper !== null || openLedgers.size === 0) return
    sweeper = setTimeout(sweep, IDLE_CLOSE_MS)
    sweeper.unref()
  }

  const forget = (path: string): void => {
    const file = openLedgers.get(path)
    openLedgers.delete(path)
    lastAppend.delete(path)
    // A failed close loses nothing: every row was committed (and synced when asked) before it.
    if (file !== undefined) void file.close().catch(() => undefined)
  }

  // Closes the least recently used ledgers beyond the bound; one mid-append waits for its turn.
  const trim = (): void => {
    for (const idle of openLedgers.keys()) {
      if (openLedgers.size <= OPEN_LEDGERS) return
      if (!busy.has(idle)) forget(idle)
    }
  }

  const ledgerFile = async (sessionId: string, runId: string, path: string): Outcome<StoreFile> => {
    const known = openLedgers.get(path)
    if (known !== undefined) {
      openLedgers.delete(path)
      openLedgers.set(path, known)
      return E.right(known)
    }
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
    openLedgers.set(path, opened.right)
    trim()
    return opened
  }

  const appendLocked = async (
    sessionId: string,
    runId: string,
    path: string,
    row: Buffer,
    options: AppendOptions,
  ): Outcome<AppendResult> => {
    busy.add(path)
    lastAppend.set(path, Date.now())
    try {
      // Twice at most: a kept file that lost its name is dropped and the path opened once more.
      for (let tries = 0; ; tries += 1) {
        const file = await ledgerFile(sessionId, runId, path)
        if (E.isLeft(file)) return file
        const appended = await appendThrough(file.right, path, sessionId, runId, row, options)
        if (E.isLeft(appended)) {
          // After a failed system call the next append starts from a fresh open, as every append once did.
          if (appended.left._tag === 'IoFailed') forget(path)
          return appended
        }
        if (appended.right !== null) return E.right(appended.right)
        forget(path)
        committed.delete(path)
        if (tries > 0) return E.left(ioFailed('append', path, replacedWhileOpen()))
      }
    } finally {
      busy.delete(path)
      if (openLedgers.has(path)) lastAppend.set(path, Date.now())
      trim()
      armSweeper()
    }
  }

  return {
    close: async () => {
      if (sweeper !== null) clearTimeout(sweeper)
      sweeper = null
      // Each after the appends already queued on its run, so none loses its file mid-write.
      await Promise.all(
        [...openLedgers.entries()].map(([path, file]) =>
          serialized(dirname(path), async () => {
            if (openLedgers.get(path) !== file) return
            openLedgers.delete(path)
            lastAppend.delete(path)
            await file.close().catch(() => undefined)
          }),
        ),
      )
    },
    append: (sessionId, runId, event, options = {}) =>
      toTask(
        async () => {
          const ids = checkIds(['sessionId', sessionId], ['runId', runId])
          if (E.isLeft(ids)) return ids
          const { dir, path } = appendPaths(sessionId, runId)
          if (event.sessionId !== sessionId) return E.left(eventIdentityMismatch(path, 'sessionId'))
          if (event.runId !== runId) return E.left(eventIdentityMismatch(path, 'runId'))
          const row = encodeRow(event)
          if (E.isLeft(row)) return row
          return serialized(dir, () => appendLocked(sessionId, runId, path, row.right, options))
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

const replacedWhileOpen = (): Error =>
  Object.assign(new Error('the ledger was replaced twice while it was being opened'), { code: 'ESTALE' })

const encodeRow = (event: RuntimeEvent): E.Either<StoreError, Buffer> =>
  E.map((json: string) => Buffer.from(`${json}\n`, 'utf8'))(encodeRuntimeEventRow(event))
