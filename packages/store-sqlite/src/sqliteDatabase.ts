/**
 * The SQL database of the shared store ports over one better-sqlite3 handle, and SQLite's dialect.
 * better-sqlite3 is synchronous; the ports are written once over promises, so every statement and
 * every transaction of this instance runs one at a time through a queue: a statement never runs
 * inside another caller's open transaction, exactly as when each transaction was one synchronous
 * call. A transaction commits whatever its body answers and rolls back only when the body throws.
 */
import { createHash, type Hash } from 'node:crypto'
import type { ClaimInsert, Sha256, SqlDatabase, SqlDialect, SqlOutcome, SqlQueries } from '@maka/stores'
import * as E from 'fp-ts/lib/Either.js'
import type { Statement } from 'better-sqlite3'
import type { Db } from './database.js'

const isUniqueViolation = (cause: unknown): boolean =>
  typeof cause === 'object' &&
  cause !== null &&
  'code' in cause &&
  (cause.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || cause.code === 'SQLITE_CONSTRAINT_UNIQUE')

/**
 * The shared ports' database over an open handle (opened on first use by `open`).
 * @category constructors
 */
export const makeSqliteDatabase = (open: () => Db): SqlDatabase => {
  let queue: Promise<unknown> = Promise.resolve()
  const exclusive = <A>(step: () => Promise<A>): Promise<A> => {
    const run = queue.then(step)
    queue = run.catch(() => undefined)
    return run
  }
  // Statements are compiled once per handle and kept: the ports use a few dozen distinct texts.
  // `pluck` and `raw` change a statement for good, so a text read for its first column, or read as
  // tuples, gets its own.
  const compiled = new WeakMap<Db, Map<string, Statement>>()
  const prepared = (db: Db, sql: string, shape: 'objects' | 'first' | 'tuples' = 'objects'): Statement => {
    let byText = compiled.get(db)
    if (byText === undefined) {
      byText = new Map()
      compiled.set(db, byText)
    }
    const key = shape === 'objects' ? sql : `${shape}\u0000${sql}`
    let statement = byText.get(key)
    if (statement === undefined) {
      statement = db.prepare(sql)
      if (shape === 'first') statement.pluck()
      else if (shape === 'tuples') statement.raw()
      byText.set(key, statement)
    }
    return statement
  }
  const direct = (db: Db): SqlQueries => ({
    all: <R>(sql: string, params: ReadonlyArray<unknown>) =>
      Promise.resolve(prepared(db, sql).all(...params) as Array<R>),
    tuples: (sql, params) => Promise.resolve(prepared(db, sql, 'tuples').all(...params) as Array<Array<unknown>>),
    value: (sql, params) => Promise.resolve(prepared(db, sql, 'first').get(...params)),
    run: (sql, params) => Promise.resolve(prepared(db, sql).run(...params).changes),
  })
  return {
    all: <R>(sql: string, params: ReadonlyArray<unknown>) => exclusive(async () => direct(open()).all<R>(sql, params)),
    tuples: (sql, params) => exclusive(async () => direct(open()).tuples(sql, params)),
    value: (sql, params) => exclusive(async () => direct(open()).value(sql, params)),
    run: (sql, params) => exclusive(async () => direct(open()).run(sql, params)),
    transaction: <A>(kind: 'write' | 'read', body: (q: SqlQueries) => Promise<SqlOutcome<A>>) =>
      exclusive(async () => {
        const db = open()
        // IMMEDIATE takes the write lock at once, so a check and the write after it are one moment.
        // The transaction's own statements are compiled once too, as the body's are.
        prepared(db, kind === 'write' ? 'BEGIN IMMEDIATE' : 'BEGIN').run()
        try {
          const outcome = await body(direct(db))
          prepared(db, 'COMMIT').run()
          return outcome
        } catch (cause) {
          if (db.inTransaction) prepared(db, 'ROLLBACK').run()
          throw cause
        }
      }),
  }
}

const INSERT_RUN = 'INSERT INTO runs (session_id, run_id, header) VALUES (?, ?, ?)'
const INSERT_CLAIM = 'INSERT INTO claims (session_id, source_run_id, high_water, record) VALUES (?, ?, ?, ?)'
const INSERT_EVENT = 'INSERT INTO events (session_id, run_id, seq, event_id, row) VALUES (?, ?, ?, ?, ?)'
const APPEND_AFTER =
  'INSERT INTO events (session_id, run_id, seq, event_id, row) ' +
  'SELECT ?, ?, ? + 1, ?, ? FROM runs WHERE session_id = ? AND run_id = ? ' +
  'AND (SELECT COALESCE(MAX(seq), 0) FROM events WHERE session_id = ? AND run_id = ?) = ? ' +
  'ON CONFLICT DO NOTHING'

// Whether an INSERT wrote its row: false when a unique key already holds it (nothing was written).
const inserted = async (q: SqlQueries, sql: string, params: ReadonlyArray<unknown>): Promise<boolean> => {
  try {
    return (await q.run(sql, params)) === 1
  } catch (cause) {
    if (!isUniqueViolation(cause)) throw cause
    return false
  }
}

// Thrown out of a claim's transaction to roll back its first row when the second is refused; caught
// by identity just outside, so it never reaches a caller.
const RUN_TAKEN = new Error("the claim's target run already exists")

/**
 * SQLite's statements: `?` placeholders, `INSERT OR IGNORE`, binary (code-unit) collation.
 * @category constructors
 */
export const sqliteDialect: SqlDialect = {
  touchSession: 'INSERT OR IGNORE INTO session_ids (session_id) VALUES (?)',
  insertSession: 'INSERT OR IGNORE INTO sessions (session_id, record) VALUES (?, ?)',
  selectSession: 'SELECT record FROM sessions WHERE session_id = ?',
  listSessionIds: 'SELECT session_id FROM session_ids ORDER BY session_id',
  insertRun: 'INSERT OR IGNORE INTO runs (session_id, run_id, header) VALUES (?, ?, ?)',
  selectHeader: 'SELECT header FROM runs WHERE session_id = ? AND run_id = ?',
  // The IMMEDIATE transaction already holds the database's write lock.
  selectHeaderForAppend: 'SELECT header FROM runs WHERE session_id = ? AND run_id = ?',
  updateRun: 'UPDATE runs SET header = ? WHERE session_id = ? AND run_id = ?',
  listRuns: 'SELECT run_id AS runId, header FROM runs WHERE session_id = ? ORDER BY run_id',
  // The last seq, found through the primary key: rows are numbered 1..n, and COUNT(*) would walk them all.
  countEvents: 'SELECT COALESCE(MAX(seq), 0) FROM events WHERE session_id = ? AND run_id = ?',
  ledgerPage: 'SELECT seq, row FROM events WHERE session_id = ? AND run_id = ? AND seq > ? ORDER BY seq LIMIT ?',
  pageRows: 512,
  replayPageBytes: 1 << 20,
  insertEvent: async (q, params) => ((await inserted(q, INSERT_EVENT, params)) ? 1 : 0),
  // One statement, its own transaction (autocommit): one commit, as the checking transaction's.
  appendAfter: (db, [sessionId, runId, after, eventId, row]) =>
    db.run(APPEND_AFTER, [sessionId, runId, after, eventId, row, sessionId, runId, sessionId, runId, after]),
  lastRow: (db, sessionId, runId) =>
    db.transaction('read', async (q): Promise<SqlOutcome<{ readonly run: boolean; readonly row: string | null }>> => {
      if ((await q.value(sqliteDialect.selectHeader, [sessionId, runId])) === undefined) {
        return E.right({ run: false, row: null })
      }
      const last = (await q.value(
        'SELECT row FROM events WHERE session_id = ? AND run_id = ? ORDER BY seq DESC LIMIT 1',
        [sessionId, runId],
      )) as string | undefined
      return E.right({ run: true, row: last ?? null })
    }),
  upsertShellRun:
    'INSERT INTO shell_runs (session_id, shell_run_id, record) VALUES (?, ?, ?) ' +
    'ON CONFLICT (session_id, shell_run_id) DO UPDATE SET record = excluded.record',
  listShellRuns: 'SELECT shell_run_id AS shellRunId, record FROM shell_runs WHERE session_id = ? ORDER BY shell_run_id',
  // The ids travel as one JSON array, read back by json_each: one statement whatever their number.
  sessionIdList: (sessionIds) => JSON.stringify(sessionIds),
  surveyShellRuns:
    'SELECT session_id AS s, shell_run_id AS shellRunId, record FROM shell_runs ' +
    'WHERE session_id IN (SELECT value FROM json_each(?)) ORDER BY session_id, shell_run_id',
  surveyClaims:
    'SELECT session_id AS s, source_run_id AS r, high_water AS hw, record FROM claims ' +
    'WHERE session_id IN (SELECT value FROM json_each(?)) ORDER BY session_id, source_run_id, high_water',
  surveyRuns:
    'SELECT r.session_id AS s, r.run_id AS runId, r.header, (SELECT e.row FROM events e ' +
    'WHERE e.session_id = r.session_id AND e.run_id = r.run_id ORDER BY e.seq DESC LIMIT 1) AS last ' +
    'FROM runs r WHERE r.session_id IN (SELECT value FROM json_each(?)) ORDER BY r.session_id, r.run_id',
  selectClaim: 'SELECT record FROM claims WHERE session_id = ? AND source_run_id = ? AND high_water = ?',
  listClaims:
    'SELECT source_run_id AS r, high_water AS hw, record FROM claims WHERE session_id = ? ORDER BY source_run_id, high_water',
  // One IMMEDIATE transaction of three inserts and no read: the UNIQUE boundary key refuses a claim
  // taken (nothing written yet), then the run's primary key a target run that exists, which rolls
  // the claim back. Statements run in order here, so a boundary already claimed reads as such first.
  insertClaim: async (db, claim, targetHeader, highWater) => {
    const { sessionId, sourceRunId } = claim
    // The records are made before the write lock is taken, which is held for the inserts alone.
    const claimRow = [sessionId, sourceRunId, highWater, JSON.stringify(claim)]
    const runRow = [sessionId, targetHeader.runId, JSON.stringify(targetHeader)]
    try {
      return await db.transaction('write', async (q): Promise<SqlOutcome<ClaimInsert>> => {
        if (!(await inserted(q, INSERT_CLAIM, claimRow))) return E.right('claim_taken')
        if (!(await inserted(q, INSERT_RUN, runRow))) throw RUN_TAKEN
        await q.run(sqliteDialect.touchSession, [sessionId])
        return E.right('claimed')
      })
    } catch (cause) {
      if (cause === RUN_TAKEN) return E.right('run_taken')
      throw cause
    }
  },
}

// One running hash; `copy` forks its state, for a digest taken midway through a fold.
const sha256Of = (hash: Hash): Sha256 => ({
  update: (text) => void hash.update(text, 'utf8'),
  hex: () => hash.digest('hex'),
  copy: () => sha256Of(hash.copy()),
})

/**
 * A SHA-256 over node's crypto, for the digests of `fold` and `replay`.
 * @category constructors
 */
export const sha256 = (): Sha256 => sha256Of(createHash('sha256'))
