/**
 * The tiny database the SQL store ports are written over, once for SQLite and PostgreSQL: three
 * statement calls, a transaction, and a dialect record holding each adapter's exact SQL text and
 * the few steps whose locking differs. The by-port modules (`sqlSessions`, `sqlRuns`, `sqlEvents`,
 * `sqlShellRuns`, `sqlClaims`) do the checks, decoding and fail-closed listing; the adapters keep
 * their driver, their connection and locking specifics, their schema and this record.
 */
import * as E from 'fp-ts/lib/Either.js'
import type * as TE from 'fp-ts/lib/TaskEither.js'
import type { AgentRun, ContinuationClaim } from '@maka/events'
import type { StoreError } from '../StoreError.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * What a step may answer: a store error or a value.
 * @category models
 */
export type SqlOutcome<A> = E.Either<StoreError, A>

/**
 * Statements on one connection, or inside one transaction. Parameters are positional, in the order
 * the statement's placeholders name them.
 * @category models
 */
export interface SqlQueries {
  /** Every row of a query, each keyed by column name. */
  readonly all: <R>(sql: string, params: ReadonlyArray<unknown>) => Promise<ReadonlyArray<R>>
  /**
   * Every row of a query as an array of its columns in the statement's order: no object keyed by
   * name per row, for the reads that go through every row of a ledger.
   */
  readonly tuples: (sql: string, params: ReadonlyArray<unknown>) => Promise<ReadonlyArray<ReadonlyArray<unknown>>>
  /** The first column of the first row; `undefined` when there is no row. */
  readonly value: (sql: string, params: ReadonlyArray<unknown>) => Promise<unknown>
  /** Runs a statement and answers how many rows it changed. */
  readonly run: (sql: string, params: ReadonlyArray<unknown>) => Promise<number>
}

/**
 * A database: statements outside a transaction, and transactions. `write` takes the write lock at
 * its start (SQLite `BEGIN IMMEDIATE`); `read` is one consistent snapshot (PostgreSQL `REPEATABLE
 * READ READ ONLY`). A body that throws rolls back; what a `Left` does is the adapter's rule.
 * @category models
 */
export interface SqlDatabase extends SqlQueries {
  readonly transaction: <A>(
    kind: 'write' | 'read',
    body: (q: SqlQueries) => Promise<SqlOutcome<A>>,
  ) => Promise<SqlOutcome<A>>
}

/**
 * How a boundary claim went: both rows written, or which of the two was already taken.
 * @category models
 */
export type ClaimInsert = 'claimed' | 'claim_taken' | 'run_taken'

/**
 * One adapter's SQL: the exact text of every statement the ports share, in its placeholder style,
 * and the steps whose locking differs between the adapters.
 * @category models
 */
export interface SqlDialect {
  /** `(session_id)`: remembers a session a write touched; a repeat changes nothing. */
  readonly touchSession: string
  /** `(session_id, record)`: creates a session header; an existing one changes nothing. */
  readonly insertSession: string
  /** `(session_id)` → the header's `record`. */
  readonly selectSession: string
  /** `()` → `{ session_id }` rows in code-unit order. */
  readonly listSessionIds: string
  /** `(session_id, run_id, header)`: creates a run header; an existing one changes nothing. */
  readonly insertRun: string
  /** `(session_id, run_id)` → the run's `header`. */
  readonly selectHeader: string
  /** `(session_id, run_id)` → the run's `header`, locked against other appends until commit. */
  readonly selectHeaderForAppend: string
  /** `(header, session_id, run_id)`: replaces an existing header. */
  readonly updateRun: string
  /** `(session_id)` → `{ runId, header }` rows in run id order. */
  readonly listRuns: string
  /** `(session_id, run_id)` → the ledger's committed row count. */
  readonly countEvents: string
  /** `(session_id, run_id, after, limit)` → `(seq, row)` rows after row `after`, in order (read as tuples). */
  readonly ledgerPage: string
  /** Rows per ledger page, and at most per replay batch. */
  readonly pageRows: number
  /**
   * Rows per page of the passes over a whole ledger (`fold`, `replay`), when a round trip is worth
   * more rows than `pageRows` (a replay still hands them over `pageRows` at a time); default `pageRows`.
   */
  readonly readPageRows?: number
  /** A replay batch ends once it holds this many bytes of row text (or `pageRows` rows). */
  readonly replayPageBytes: number
  /**
   * Inserts one ledger row `(session_id, run_id, seq, event_id, row)` inside the append's
   * transaction; 0 when the ledger already holds a row with this id.
   */
  readonly insertEvent: (q: SqlQueries, params: ReadonlyArray<unknown>) => Promise<number>
  /**
   * An append's one-statement path (decision 170): inserts row `after + 1` `(session_id, run_id,
   * after, event_id, row)` on its own, outside any transaction, only when the run's header exists,
   * its ledger's last row is row `after`, and no row holds the seq or the id; 0 when it inserted
   * nothing, and the append then takes its checking transaction.
   */
  readonly appendAfter: (
    db: SqlDatabase,
    params: readonly [sessionId: string, runId: string, after: number, eventId: string, row: string],
  ) => Promise<number>
  /** Whether the run's header exists, and its ledger's last row text (`null` when it has none). */
  readonly lastRow: (
    db: SqlDatabase,
    sessionId: string,
    runId: string,
  ) => Promise<SqlOutcome<{ readonly run: boolean; readonly row: string | null }>>
  /** `(session_id, shell_run_id, record)`: creates or replaces a shell-run record. */
  readonly upsertShellRun: string
  /** `(session_id)` → `{ shellRunId, record }` rows in id order. */
  readonly listShellRuns: string
  /** The one parameter that stands for a list of session ids in the survey's statements. */
  readonly sessionIdList: (sessionIds: ReadonlyArray<string>) => unknown
  /** `(ids)` → `{ s, shellRunId, record }`: those sessions' shell runs, each session's in `listShellRuns` order. */
  readonly surveyShellRuns: string
  /** `(ids)` → `{ s, r, hw, record }`: those sessions' claims, each session's in `listClaims` order. */
  readonly surveyClaims: string
  /**
   * `(ids)` → `{ s, runId, header, last }`: those sessions' runs, each session's in `listRuns` order,
   * with the text of each ledger's last row (`null` when it has none).
   */
  readonly surveyRuns: string
  /** `(session_id, source_run_id, high_water)` → the claim's `record`. */
  readonly selectClaim: string
  /** `(session_id)` → `{ r, hw, record }` rows by source run id, then high-water. */
  readonly listClaims: string
  /**
   * Writes a checked claim and its target header in one transaction, or neither: which of the two
   * was taken, by the adapter's own locking.
   */
  readonly insertClaim: (
    db: SqlDatabase,
    claim: ContinuationClaim,
    targetHeader: AgentRun,
    highWater: number,
  ) => Promise<SqlOutcome<ClaimInsert>>
}

/**
 * A running SHA-256 of text, lowercase hex at the end: the adapter's hash (the contract does none).
 * @category models
 */
export interface Sha256 {
  readonly update: (text: string) => void
  /** The digest of what was fed; the hash is finished and takes nothing more. */
  readonly hex: () => string
  /** An independent hash in the same state, so a digest can be taken midway and the pass go on. */
  readonly copy: () => Sha256
}

/**
 * What the SQL ports of one store instance share.
 * @category models
 */
export interface SqlStoreContext {
  /** Log-safe words for the database (a file path, `postgres database <name>`), used in places. */
  readonly location: string
  /** The database, opened on first use; a rejection is that call's `IoFailed`. */
  readonly database: () => Promise<SqlDatabase>
  /** The adapter's `IoFailed` for anything thrown by a step, naming the subject. */
  readonly failed: (cause: unknown, subject: string) => StoreError
  /** Whether this instance may still write to a session (PostgreSQL fences a lost owner lock). */
  readonly fence: (sessionId: string) => SqlOutcome<void>
  readonly dialect: SqlDialect
  readonly sha256: () => Sha256
  /**
   * The UTF-8 byte length of a text (`Buffer.byteLength`): what a row adds to a ledger's committed
   * bytes. Without it the ports count in JS (`utf8Length`), several times slower on long rows.
   */
  readonly byteLength?: (text: string) => number
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Runs a step on the database; anything thrown (a busy database, a dropped connection, a closed
 * store) becomes the adapter's `IoFailed` naming what the port was doing.
 * @category constructors
 */
export const sqlTask =
  <A>(
    context: SqlStoreContext,
    subject: () => string,
    step: (db: SqlDatabase) => Promise<SqlOutcome<A>>,
  ): TE.TaskEither<StoreError, A> =>
  async () => {
    try {
      return await step(await context.database())
    } catch (cause) {
      return E.left(context.failed(cause, subject()))
    }
  }

/**
 * The places a SQL store names in its errors: the JSONL file each row stands for, under the
 * database's location, so every adapter's errors read alike.
 * @category constructors
 */
export const sqlPlaces = (location: string) => {
  const where = (tail: string) => `${location}#${tail}`
  return {
    session: (s: string) => where(`sessions/${s}/session.json`),
    run: (s: string, r: string) => where(`sessions/${s}/runs/${r}/run.json`),
    ledger: (s: string, r: string) => where(`sessions/${s}/runs/${r}/runtime-events.jsonl`),
    shellRun: (s: string, id: string) => where(`sessions/${s}/shell-runs/${id}.json`),
    claim: (s: string, r: string, hw: number) => where(`sessions/${s}/claims/${r}@${hw}.json`),
    ownerLock: (s: string) => where(`sessions/${s}/owner.lock`),
  }
}

/**
 * The places of one SQL store (`sqlPlaces`).
 * @category models
 */
export type SqlPlaces = ReturnType<typeof sqlPlaces>
