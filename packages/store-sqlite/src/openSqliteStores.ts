/**
 * The store ports over one SQLite database (docs/decisions.md #81). Rows hold the same JSON the
 * JSONL files hold and are decoded with the same codecs on every read; every write is one
 * transaction, committed with an fsync of the WAL. The database opens on the first call, so a
 * missing driver or a database from a newer maka is a `StoreError` of that call, never a throw.
 */
import { createHash } from 'node:crypto'
import { resolve } from 'node:path'
import {
  AgentRun,
  ContinuationClaim,
  decodeWith,
  OwnerLock,
  SessionRecord,
  ShellRun,
  RunId,
  type RuntimeEvent,
  SessionId,
} from '@maka/events'
import {
  checkClaimBoundary,
  checkHighWater,
  checkIds,
  checkReplayExpectation,
  checkRunHeader,
  claimConflict,
  consumerFailed,
  decodeStoredRecord,
  listStoredShellRuns,
  deliverBatch,
  replayVerdict,
  emptyLedgerSnapshot,
  encodeRuntimeEventRow,
  eventIdentityMismatch,
  highWaterConflict,
  invalidRecord,
  ioFailed,
  isSameOwner,
  ledgerChanged,
  ledgerUnreadable,
  makeLedgerRowReader,
  notFound,
  ownerLockHeld,
  runAlreadyExists,
  sessionAlreadyExists,
  staleCheckFailed,
  unreadable,
  withSubject,
  type LedgerScan,
  type LedgerSnapshot,
  type RunListing,
  type StoreError,
  type StorePorts,
} from '@maka/stores'
import * as E from 'fp-ts/lib/Either.js'
import type * as TE from 'fp-ts/lib/TaskEither.js'
import { openDatabase, type Db } from './database.js'

/**
 * The SQLite stores: the ports plus the database file they live in.
 * @category models
 */
export interface SqliteStores extends StorePorts {
  /** The absolute path of the database file. */
  readonly file: string
  /** Closes the database handle; later calls are `IoFailed` (`STORE_CLOSED`). */
  readonly close: () => Promise<void>
}

type Outcome<A> = E.Either<StoreError, A>

const decodeSession = decodeWith(SessionRecord)
const decodeHeader = decodeWith(AgentRun)
const decodeShellRun = decodeWith(ShellRun)
const decodeClaim = decodeWith(ContinuationClaim)
const decodeLock = decodeWith(OwnerLock)

// A replay hands rows over in pages of at most this many rows, or of about this many bytes of text.
const PAGE_ROWS = 512
const PAGE_BYTES = 1 << 20

/** A consumer's throw, carried out of the transaction it stopped. */
class ConsumerFailure extends Error {
  constructor(readonly thrown: unknown) {
    super('the consumer of the rows failed')
  }
}

const isUniqueViolation = (cause: unknown): boolean =>
  typeof cause === 'object' &&
  cause !== null &&
  'code' in cause &&
  (cause.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || cause.code === 'SQLITE_CONSTRAINT_UNIQUE')

/**
 * Options of `openSqliteStores`.
 * @category models
 */
export interface SqliteStoresOptions {
  /** Create the file when it is missing (default); false: a missing file reads as an empty store. */
  readonly create?: boolean
}

/**
 * Opens the stores of the database `file` (created with its schema on first use). One database per
 * data dir: `<dataDir>/maka.sqlite` is the usual place.
 * @category constructors
 */
export const openSqliteStores = (file: string, options: SqliteStoresOptions = {}): SqliteStores => {
  const path = resolve(file)
  let db: Db | null = null
  let closed = false
  // Rows of a ledger this instance has checked and found whole, so an append checks only newer rows.
  const verified = new Map<string, number>()

  const where = (tail: string) => `${path}#${tail}`
  const sessionWhere = (s: string) => where(`sessions/${s}/session.json`)
  const runWhere = (s: string, r: string) => where(`sessions/${s}/runs/${r}/run.json`)
  const ledgerWhere = (s: string, r: string) => where(`sessions/${s}/runs/${r}/runtime-events.jsonl`)
  const shellWhere = (s: string, id: string) => where(`sessions/${s}/shell-runs/${id}.json`)
  const claimWhere = (s: string, r: string, hw: number) => where(`sessions/${s}/claims/${r}@${hw}.json`)
  const lockWhere = (s: string) => where(`sessions/${s}/owner.lock`)

  const database = (): Db => {
    if (closed) throw Object.assign(new Error('the store was closed'), { code: 'STORE_CLOSED' })
    db ??= openDatabase(path, options.create ?? true)
    return db
  }

  // Runs a step; anything the driver throws (busy past the timeout, disk full, not a database)
  // becomes `IoFailed` naming the subject, with SQLite's code as the code.
  const task =
    <A>(subject: () => string, step: (db: Db) => Outcome<A> | Promise<Outcome<A>>): TE.TaskEither<StoreError, A> =>
    async () => {
      try {
        return await step(database())
      } catch (cause) {
        return E.left(withSubject(ioFailed('sqlite', path, cause), subject()))
      }
    }

  // Decodes a stored record; a record that does not decode, or names other ids, is `Unreadable`.
  const decodeStored = decodeStoredRecord

  const touchSession = (db: Db, sessionId: string) =>
    db.prepare('INSERT OR IGNORE INTO session_ids (session_id) VALUES (?)').run(sessionId)

  const headerRow = (db: Db, s: string, r: string) =>
    db.prepare('SELECT header FROM runs WHERE session_id = ? AND run_id = ?').get(s, r) as
      { readonly header: string } | undefined

  const readHeader = (db: Db, s: string, r: string): Outcome<AgentRun> => {
    const row = headerRow(db, s, r)
    if (row === undefined) return E.left(notFound(runWhere(s, r)))
    return decodeStored(row.header, runWhere(s, r), decodeHeader, (h) => h.sessionId === s && h.runId === r)
  }

  // The row texts of a ledger after row `after`, streamed from the statement one at a time.
  const ledgerRows = (db: Db, s: string, r: string, after: number) =>
    db
      .prepare('SELECT row FROM events WHERE session_id = ? AND run_id = ? AND seq > ? ORDER BY seq')
      .pluck()
      .iterate(s, r, after) as IterableIterator<string>

  const ledgerPage = (db: Db, s: string, r: string, after: number) =>
    db
      .prepare('SELECT seq, row FROM events WHERE session_id = ? AND run_id = ? AND seq > ? ORDER BY seq')
      .iterate(s, r, after) as IterableIterator<{ readonly seq: number; readonly row: string }>

  const readLedger = (db: Db, s: string, r: string): LedgerSnapshot => {
    const reader = makeLedgerRowReader({ sessionId: s, runId: r })
    for (const row of ledgerRows(db, s, r, 0)) reader.add(row)
    return reader.snapshot()
  }

  // Whether the rows after those this instance verified decode as rows of this run.
  const ledgerIsWhole = (db: Db, s: string, r: string, highWater: number): boolean => {
    const key = `${s}\u0000${r}`
    const known = verified.get(key) ?? 0
    if (known === highWater) return true
    if (known > highWater) verified.delete(key)
    const snapshot = readLedger(db, s, r)
    if (snapshot.problem !== null) return false
    verified.set(key, snapshot.highWater)
    return true
  }

  const readClaim = (db: Db, s: string, r: string, hw: number): Outcome<ContinuationClaim | null> => {
    const row = db
      .prepare('SELECT record FROM claims WHERE session_id = ? AND source_run_id = ? AND high_water = ?')
      .pluck()
      .get(s, r, hw) as string | undefined
    if (row === undefined) return E.right(null)
    return decodeStored(
      row,
      claimWhere(s, r, hw),
      decodeClaim,
      (c) => c.sessionId === s && c.sourceRunId === r && c.sourceRuntimeEventHighWater === hw,
    )
  }

  const readLock = (db: Db, s: string): Outcome<{ readonly lock: OwnerLock; readonly text: string } | null> => {
    const text = db.prepare('SELECT record FROM owner_locks WHERE session_id = ?').pluck().get(s) as string | undefined
    if (text === undefined) return E.right(null)
    const lock = decodeStored(text, lockWhere(s), decodeLock, () => true)
    return E.isLeft(lock) ? lock : E.right({ lock: lock.right, text })
  }

  const sessions: StorePorts['sessions'] = {
    create: (record) =>
      task(
        () => `create session.json of session ${record?.sessionId}`,
        (db) => {
          const ids = checkIds(['sessionId', record?.sessionId])
          if (E.isLeft(ids)) return ids
          const decoded = decodeSession(record)
          if (E.isLeft(decoded)) return E.left(invalidRecord('SessionRecord', decoded.left))
          return db
            .transaction((): Outcome<void> => {
              touchSession(db, record.sessionId)
              const inserted = db
                .prepare('INSERT OR IGNORE INTO sessions (session_id, record) VALUES (?, ?)')
                .run(record.sessionId, JSON.stringify(record))
              return inserted.changes === 0
                ? E.left(sessionAlreadyExists(sessionWhere(record.sessionId), record.sessionId))
                : E.right(undefined)
            })
            .immediate()
        },
      ),
    read: (sessionId) =>
      task(
        () => `read session.json of session ${sessionId}`,
        (db) => {
          const ids = checkIds(['sessionId', sessionId])
          if (E.isLeft(ids)) return ids
          const text = db.prepare('SELECT record FROM sessions WHERE session_id = ?').pluck().get(sessionId) as
            string | undefined
          if (text === undefined) return E.left(notFound(sessionWhere(sessionId)))
          return decodeStored(text, sessionWhere(sessionId), decodeSession, (r) => r.sessionId === sessionId)
        },
      ),
    list: () =>
      task(
        () => 'list the sessions',
        (db) => {
          const ids = db
            .prepare('SELECT session_id FROM session_ids ORDER BY session_id')
            .pluck()
            .all() as Array<string>
          // A name that is not a session id is not a session, as in a data dir (decisions 60).
          return E.right(ids.filter(SessionId.is))
        },
      ),
  }

  const runs: StorePorts['runs'] = {
    create: (run) =>
      task(
        () => `create run.json of run ${run?.runId} in session ${run?.sessionId}`,
        (db) => {
          const checked = checkRunHeader(run)
          if (E.isLeft(checked)) return checked
          return db
            .transaction((): Outcome<void> => {
              touchSession(db, run.sessionId)
              const inserted = db
                .prepare('INSERT OR IGNORE INTO runs (session_id, run_id, header) VALUES (?, ?, ?)')
                .run(run.sessionId, run.runId, JSON.stringify(run))
              return inserted.changes === 0
                ? E.left(runAlreadyExists(runWhere(run.sessionId, run.runId), run.sessionId, run.runId))
                : E.right(undefined)
            })
            .immediate()
        },
      ),
    read: (sessionId, runId) =>
      task(
        () => `read run.json of run ${runId} in session ${sessionId}`,
        (db) => {
          const ids = checkIds(['sessionId', sessionId], ['runId', runId])
          return E.isLeft(ids) ? ids : readHeader(db, sessionId, runId)
        },
      ),
    // Every commit is fsynced (synchronous=FULL), so `durable` asks for nothing more.
    update: (run) =>
      task(
        () => `update run.json of run ${run?.runId} in session ${run?.sessionId}`,
        (db) => {
          const checked = checkRunHeader(run)
          if (E.isLeft(checked)) return checked
          const updated = db
            .prepare('UPDATE runs SET header = ? WHERE session_id = ? AND run_id = ?')
            .run(JSON.stringify(run), run.sessionId, run.runId)
          return updated.changes === 0 ? E.left(notFound(runWhere(run.sessionId, run.runId))) : E.right(undefined)
        },
      ),
    list: (sessionId) =>
      task(
        () => `list the runs of session ${sessionId}`,
        (db) => {
          const ids = checkIds(['sessionId', sessionId])
          if (E.isLeft(ids)) return ids
          const rows = db
            .prepare('SELECT run_id AS runId, header FROM runs WHERE session_id = ? ORDER BY run_id')
            .all(sessionId) as Array<{ readonly runId: string; readonly header: string }>
          const listed: Array<RunListing> = []
          for (const { runId, header } of rows) {
            // Only a checked id is ever written to run_id: a row whose id does not decode is damage,
            // and the listing fails closed rather than drop a run (decisions 60).
            if (!RunId.is(runId)) return E.left(unreadable(runWhere(sessionId, runId), 'run id is invalid'))
            const decoded = decodeStored(
              header,
              runWhere(sessionId, runId),
              decodeHeader,
              (h) => h.sessionId === sessionId && h.runId === runId,
            )
            listed.push(E.isRight(decoded) ? { runId, header: decoded.right } : { runId, error: decoded.left })
          }
          return E.right(listed)
        },
      ),
  }

  const events: StorePorts['events'] = {
    append: (sessionId, runId, event, options = {}) =>
      task(
        () => `append to the ledger of run ${runId} in session ${sessionId}`,
        (db) => {
          const ids = checkIds(['sessionId', sessionId], ['runId', runId])
          if (E.isLeft(ids)) return ids
          const at = ledgerWhere(sessionId, runId)
          if (event.sessionId !== sessionId) return E.left(eventIdentityMismatch(at, 'sessionId'))
          if (event.runId !== runId) return E.left(eventIdentityMismatch(at, 'runId'))
          const row = encodeRuntimeEventRow(event)
          if (E.isLeft(row)) return row
          return db
            .transaction((): Outcome<{ readonly highWater: number }> => {
              if (headerRow(db, sessionId, runId) === undefined) return E.left(notFound(runWhere(sessionId, runId)))
              const rows = db
                .prepare('SELECT COUNT(*) FROM events WHERE session_id = ? AND run_id = ?')
                .pluck()
                .get(sessionId, runId) as number
              if (!ledgerIsWhole(db, sessionId, runId, rows)) {
                const problem = readLedger(db, sessionId, runId).problem
                if (problem !== null) return E.left(ledgerUnreadable(at, problem))
              }
              if (options.expectedHighWater !== undefined && options.expectedHighWater !== rows) {
                return E.left(highWaterConflict(at, options.expectedHighWater, rows))
              }
              try {
                db.prepare('INSERT INTO events (session_id, run_id, seq, event_id, row) VALUES (?, ?, ?, ?, ?)').run(
                  sessionId,
                  runId,
                  rows + 1,
                  event.id,
                  row.right,
                )
              } catch (cause) {
                if (!isUniqueViolation(cause)) throw cause
                return E.left(invalidRecord('RuntimeEvent', 'the ledger already holds a row with this id'))
              }
              verified.set(`${sessionId}\u0000${runId}`, rows + 1)
              return E.right({ highWater: rows + 1 })
            })
            .immediate()
        },
      ),
    read: (sessionId, runId) =>
      task(
        () => `read the ledger of run ${runId} in session ${sessionId}`,
        (db) => {
          const ids = checkIds(['sessionId', sessionId], ['runId', runId])
          if (E.isLeft(ids)) return ids
          // One read transaction: the header and the rows are one moment's.
          return db.transaction((): Outcome<LedgerSnapshot> => {
            if (headerRow(db, sessionId, runId) === undefined) return E.left(notFound(runWhere(sessionId, runId)))
            const snapshot = readLedger(db, sessionId, runId)
            return E.right(snapshot.highWater === 0 ? emptyLedgerSnapshot : snapshot)
          })()
        },
      ),
    fold: (sessionId, runId, onEvent) =>
      task(
        () => `fold the ledger of run ${runId} in session ${sessionId}`,
        (db) => {
          const ids = checkIds(['sessionId', sessionId], ['runId', runId])
          if (E.isLeft(ids)) return ids
          try {
            // One read transaction, as `read`: the header and the rows are one moment's. The rows
            // stream out of the statement one at a time and go to `onEvent`, never into an array.
            return db.transaction((): Outcome<LedgerScan> => {
              if (headerRow(db, sessionId, runId) === undefined) return E.left(notFound(runWhere(sessionId, runId)))
              const hash = createHash('sha256')
              const reader = makeLedgerRowReader({ sessionId, runId }, (event) => {
                try {
                  onEvent(event)
                } catch (thrown) {
                  throw new ConsumerFailure(thrown)
                }
              })
              for (const row of ledgerRows(db, sessionId, runId, 0)) {
                hash.update(row, 'utf8').update('\n')
                reader.add(row)
              }
              return E.right(reader.ledgerScan(hash.digest('hex')))
            })()
          } catch (cause) {
            if (cause instanceof ConsumerFailure)
              return E.left(consumerFailed(ledgerWhere(sessionId, runId), cause.thrown))
            throw cause
          }
        },
      ),
    replay: (sessionId, runId, expected, onRows) =>
      task(
        () => `replay the ledger of run ${runId} in session ${sessionId}`,
        async (db) => {
          const ids = checkIds(['sessionId', sessionId], ['runId', runId])
          if (E.isLeft(ids)) return ids
          const checked = checkReplayExpectation(expected)
          if (E.isLeft(checked)) return checked
          if (headerRow(db, sessionId, runId) === undefined) return E.left(notFound(runWhere(sessionId, runId)))
          const at = ledgerWhere(sessionId, runId)
          const hash = createHash('sha256')
          let batch: Array<RuntimeEvent> = []
          const reader = makeLedgerRowReader({ sessionId, runId }, (event) => {
            batch.push(event)
          })
          let bytes = 0
          let seq = 0
          // Page by page, each its own statement: no transaction stays open while the consumer
          // waits. Rows changed between two pages change the digest, which decides at the end.
          while (bytes < expected.committedBytes) {
            let pageBytes = 0
            let pageRows = 0
            for (const { seq: rowSeq, row } of ledgerPage(db, sessionId, runId, seq)) {
              seq = rowSeq
              pageRows += 1
              const length = Buffer.byteLength(row, 'utf8') + 1
              bytes += length
              pageBytes += length
              if (bytes > expected.committedBytes) break
              hash.update(row, 'utf8').update('\n')
              reader.add(row)
              if (bytes === expected.committedBytes || pageRows === PAGE_ROWS || pageBytes >= PAGE_BYTES) break
            }
            if (bytes > expected.committedBytes)
              return E.left(ledgerChanged(at, expected.committedBytes, 'different_bytes'))
            if (pageRows === 0) return E.left(ledgerChanged(at, expected.committedBytes, 'fewer_bytes'))
            const delivered = await deliverBatch(onRows, batch, at)
            batch = []
            if (E.isLeft(delivered)) return delivered
          }
          return replayVerdict(hash.digest('hex'), expected, at)
        },
      ),
    readLastRow: (sessionId, runId) =>
      task(
        () => `read the last row of the ledger of run ${runId} in session ${sessionId}`,
        (db) => {
          const ids = checkIds(['sessionId', sessionId], ['runId', runId])
          if (E.isLeft(ids)) return ids
          return db.transaction((): Outcome<RuntimeEvent | null> => {
            if (headerRow(db, sessionId, runId) === undefined) return E.left(notFound(runWhere(sessionId, runId)))
            const last = db
              .prepare('SELECT row FROM events WHERE session_id = ? AND run_id = ? ORDER BY seq DESC LIMIT 1')
              .pluck()
              .get(sessionId, runId) as string | undefined
            if (last === undefined) return E.right(null)
            const reader = makeLedgerRowReader({ sessionId, runId })
            reader.add(last)
            const snapshot = reader.snapshot()
            return E.right(snapshot.problem === null ? (snapshot.events[0] ?? null) : null)
          })()
        },
      ),
  }

  const shellRuns: StorePorts['shellRuns'] = {
    write: (run) =>
      task(
        () => `write shell run ${run?.shellRunId} of session ${run?.sessionId}`,
        (db) => {
          const ids = checkIds(['sessionId', run?.sessionId], ['shellRunId', run?.shellRunId], ['runId', run?.runId])
          if (E.isLeft(ids)) return ids
          const decoded = decodeShellRun(run)
          if (E.isLeft(decoded)) return E.left(invalidRecord('ShellRun', decoded.left))
          db.transaction(() => {
            touchSession(db, run.sessionId)
            db.prepare(
              'INSERT INTO shell_runs (session_id, shell_run_id, record) VALUES (?, ?, ?) ' +
                'ON CONFLICT (session_id, shell_run_id) DO UPDATE SET record = excluded.record',
            ).run(run.sessionId, run.shellRunId, JSON.stringify(run))
          }).immediate()
          return E.right(undefined)
        },
      ),
    list: (sessionId) =>
      task(
        () => `list the shell runs of session ${sessionId}`,
        (db) => {
          const ids = checkIds(['sessionId', sessionId])
          if (E.isLeft(ids)) return ids
          const rows = db
            .prepare(
              'SELECT shell_run_id AS shellRunId, record FROM shell_runs WHERE session_id = ? ORDER BY shell_run_id',
            )
            .all(sessionId) as Array<{ readonly shellRunId: string; readonly record: string }>
          return listStoredShellRuns(sessionId, rows, shellWhere)
        },
      ),
  }

  const claims: StorePorts['claims'] = {
    // The claim and its target header commit in one IMMEDIATE transaction: a refusal of either
    // leaves neither (there is no claim without its target here, unlike the two JSONL files).
    claimBoundary: (claim, targetHeader) =>
      task(
        () =>
          `create the claim ${claim?.sourceRunId}@${claim?.sourceRuntimeEventHighWater} of session ${claim?.sessionId}`,
        (db) => {
          const highWater = checkClaimBoundary(claim, targetHeader)
          if (E.isLeft(highWater)) return highWater
          const { sessionId, sourceRunId } = claim
          const at = claimWhere(sessionId, sourceRunId, highWater.right)
          return db
            .transaction((): Outcome<void> => {
              // The write lock is held from the first statement, so these checks and the inserts are
              // one moment; the UNIQUE boundary key and the run's primary key are the backstop.
              const existing = readClaim(db, sessionId, sourceRunId, highWater.right)
              if (E.isLeft(existing) || existing.right !== null) {
                return E.left(claimConflict(at, E.isRight(existing) ? (existing.right ?? undefined) : undefined))
              }
              if (headerRow(db, sessionId, targetHeader.runId) !== undefined) {
                return E.left(runAlreadyExists(runWhere(sessionId, targetHeader.runId), sessionId, targetHeader.runId))
              }
              touchSession(db, sessionId)
              db.prepare('INSERT INTO claims (session_id, source_run_id, high_water, record) VALUES (?, ?, ?, ?)').run(
                sessionId,
                sourceRunId,
                highWater.right,
                JSON.stringify(claim),
              )
              db.prepare('INSERT INTO runs (session_id, run_id, header) VALUES (?, ?, ?)').run(
                sessionId,
                targetHeader.runId,
                JSON.stringify(targetHeader),
              )
              return E.right(undefined)
            })
            .immediate()
        },
      ),
    read: (sessionId, sourceRunId, highWater) =>
      task(
        () => `read the claim ${sourceRunId}@${highWater} of session ${sessionId}`,
        (db) => {
          const ids = checkIds(['sessionId', sessionId], ['sourceRunId', sourceRunId])
          if (E.isLeft(ids)) return ids
          const hw = checkHighWater('highWater', highWater)
          return E.isLeft(hw) ? hw : readClaim(db, sessionId, sourceRunId, hw.right)
        },
      ),
    list: (sessionId) =>
      task(
        () => `list the claims of session ${sessionId}`,
        (db) => {
          const ids = checkIds(['sessionId', sessionId])
          if (E.isLeft(ids)) return ids
          const rows = db
            .prepare(
              'SELECT source_run_id AS r, high_water AS hw FROM claims WHERE session_id = ? ORDER BY source_run_id, high_water',
            )
            .all(sessionId) as Array<{ readonly r: string; readonly hw: number }>
          const out: Array<ContinuationClaim> = []
          for (const { r, hw } of rows) {
            const claim = readClaim(db, sessionId, r, hw)
            if (E.isLeft(claim)) return claim
            if (claim.right !== null) out.push(claim.right)
          }
          return E.right(out)
        },
      ),
  }

  const ownerLocks: StorePorts['ownerLocks'] = {
    read: (sessionId) =>
      task(
        () => `read owner.lock of session ${sessionId}`,
        (db) => {
          const ids = checkIds(['sessionId', sessionId])
          if (E.isLeft(ids)) return ids
          const found = readLock(db, sessionId)
          return E.isLeft(found) ? found : E.right(found.right?.lock ?? null)
        },
      ),
    // Judging a lock is async (it looks at the host's processes), so it runs between two
    // transactions; the takeover then replaces the lock only if the row still holds the text that was
    // judged — a compare-and-swap, so two processes judging one stale lock cannot both win.
    acquire: (sessionId, lock, isStale) =>
      task(
        () => `create owner.lock of session ${sessionId}`,
        async (db) => {
          const ids = checkIds(['sessionId', sessionId])
          if (E.isLeft(ids)) return ids
          const decoded = decodeLock(lock)
          if (E.isLeft(decoded)) return E.left(invalidRecord('OwnerLock', decoded.left))
          const at = lockWhere(sessionId)
          const text = JSON.stringify(lock)
          for (let attempt = 0; attempt < 4; attempt += 1) {
            const first = db
              .transaction((): Outcome<{ readonly lock: OwnerLock; readonly text: string } | null> => {
                touchSession(db, sessionId)
                const inserted = db
                  .prepare('INSERT OR IGNORE INTO owner_locks (session_id, record) VALUES (?, ?)')
                  .run(sessionId, text)
                return inserted.changes === 1 ? E.right(null) : readLock(db, sessionId)
              })
              .immediate()
            if (E.isLeft(first) || first.right === null) return E.isLeft(first) ? first : E.right(undefined)
            const existing = first.right
            if (isSameOwner(existing.lock, lock)) return E.left(ownerLockHeld(at, existing.lock))
            let stale: boolean
            try {
              stale = await isStale(existing.lock)
            } catch (cause) {
              return E.left(staleCheckFailed(at, cause))
            }
            if (!stale) return E.left(ownerLockHeld(at, existing.lock))
            const swapped = db
              .prepare('UPDATE owner_locks SET record = ? WHERE session_id = ? AND record = ?')
              .run(text, sessionId, existing.text)
            if (swapped.changes === 1) return E.right(undefined)
          }
          const now = readLock(db, sessionId)
          if (E.isLeft(now)) return now
          return now.right === null ? E.right(undefined) : E.left(ownerLockHeld(at, now.right.lock))
        },
      ),
    release: (sessionId, lock) =>
      task(
        () => `remove owner.lock of session ${sessionId}`,
        (db) => {
          const ids = checkIds(['sessionId', sessionId])
          if (E.isLeft(ids)) return ids
          return db
            .transaction((): Outcome<void> => {
              const found = readLock(db, sessionId)
              if (E.isLeft(found) || found.right === null) return E.isLeft(found) ? found : E.right(undefined)
              if (!isSameOwner(found.right.lock, lock))
                return E.left(ownerLockHeld(lockWhere(sessionId), found.right.lock))
              db.prepare('DELETE FROM owner_locks WHERE session_id = ?').run(sessionId)
              return E.right(undefined)
            })
            .immediate()
        },
      ),
  }

  return {
    file: path,
    location: path,
    sessions,
    runs,
    events,
    shellRuns,
    claims,
    ownerLocks,
    close: () => {
      closed = true
      db?.close()
      db = null
      return Promise.resolve()
    },
  }
}
