/**
 * The SQL database of the shared store ports over a `pg` pool, and PostgreSQL's dialect. Each
 * transaction holds one pooled connection; a `Left` rolls it back, as a throw does. A `read`
 * transaction is one REPEATABLE READ READ ONLY snapshot.
 */
import { createHash, type Hash } from 'node:crypto'
import { type Sha256, type SqlDatabase, type SqlDialect, type SqlOutcome, type SqlQueries } from '@maka/stores'
import * as E from 'fp-ts/lib/Either.js'
import type pg from 'pg'

const sqlState = (cause: unknown): string | undefined =>
  typeof cause === 'object' && cause !== null && typeof (cause as { code?: unknown }).code === 'string'
    ? (cause as { code: string }).code
    : undefined
const constraintOf = (cause: unknown): string | undefined =>
  typeof cause === 'object' && cause !== null && typeof (cause as { constraint?: unknown }).constraint === 'string'
    ? (cause as { constraint: string }).constraint
    : undefined
const UNIQUE_VIOLATION = '23505'

// The write path's statements run prepared under a name: each connection parses and plans one once,
// then sends only its parameters, where an unnamed statement is parsed and planned on every call
// (~0.1 ms of a one-statement append's ~0.4 ms, measured; decision 300). So do the reads one command
// repeats page after page (`readNames`, below the dialect; decision 290). Other reads stay unnamed:
// their plan may depend on their parameters, and stays the server's choice each time.
const preparedNames = new Map<string, string>()
const prepared = (text: string): string => {
  preparedNames.set(text, `maka_write_${preparedNames.size}`)
  return text
}

const queryOf = (sql: string, params: ReadonlyArray<unknown>): pg.QueryConfig => {
  const name = preparedNames.get(sql) ?? readNames.get(sql)
  return name === undefined ? { text: sql, values: [...params] } : { name, text: sql, values: [...params] }
}

const queriesOf = (q: pg.Pool | pg.ClientBase): SqlQueries => ({
  all: async <R>(sql: string, params: ReadonlyArray<unknown>) => (await q.query(queryOf(sql, params))).rows as Array<R>,
  tuples: async (sql, params) => (await q.query<Array<unknown>>({ ...queryOf(sql, params), rowMode: 'array' })).rows,
  value: async (sql, params) => {
    const row = (await q.query(queryOf(sql, params))).rows[0] as Record<string, unknown> | undefined
    return row === undefined ? undefined : Object.values(row)[0]
  },
  run: async (sql, params) => (await q.query(queryOf(sql, params))).rowCount ?? 0,
})

const INSERT_EVENT = prepared(
  'INSERT INTO events (session_id, run_id, seq, event_id, row) VALUES ($1, $2, $3, $4, $5) ' +
    'ON CONFLICT (session_id, run_id, event_id) DO NOTHING',
)
const APPEND_AFTER = prepared(
  'INSERT INTO events (session_id, run_id, seq, event_id, row) ' +
    'SELECT $1, $2, $3::integer + 1, $4, $5 FROM runs WHERE session_id = $1 AND run_id = $2 ' +
    'AND (SELECT COALESCE(MAX(seq), 0) FROM events WHERE session_id = $1 AND run_id = $2) = $3',
)
const INSERT_CLAIM = prepared(
  'WITH session AS (INSERT INTO session_ids (session_id) VALUES ($1) ON CONFLICT DO NOTHING), ' +
    'claim AS (INSERT INTO claims (session_id, source_run_id, high_water, record) VALUES ($1, $2, $3, $4)) ' +
    'INSERT INTO runs (session_id, run_id, header) VALUES ($1, $5, $6)',
)

/**
 * One connection of an instance's own, opened on first use and again after it drops.
 * @category models
 */
export interface OwnConnection {
  /**
   * Runs one statement on it. The connection keeps the process alive only while a statement is in
   * flight, as the pool's idle connections do not: a host that never closes the store still exits.
   */
  readonly query: (config: pg.QueryConfig) => Promise<pg.QueryResult>
  /** Connects now, so the first statement does not wait for a connection; a rejection is the connect's. */
  readonly open: () => Promise<void>
  /** Closes it for good; a later statement is `STORE_CLOSED`. */
  readonly end: () => Promise<void>
}

// `pg`'s client has `ref`/`unref` (its pool uses them), which its types do not declare.
const holdLoop = (client: pg.Client, hold: boolean): void => {
  const handle = client as unknown as { readonly ref?: () => void; readonly unref?: () => void }
  if (hold) handle.ref?.()
  else handle.unref?.()
}

/**
 * An `OwnConnection` over the clients `connect` makes. A drop forgets the connection (the statement
 * in flight fails, as it would on a pooled one); the next statement connects again.
 * @category constructors
 */
export const makeOwnConnection = (connect: () => pg.Client): OwnConnection => {
  let current: Promise<pg.Client> | null = null
  let ended = false
  let inFlight = 0
  const open = (): Promise<pg.Client> => {
    current ??= (async () => {
      const client = connect()
      const forget = (): void => {
        current = null
      }
      client.on('error', forget)
      client.on('end', forget)
      try {
        await client.connect()
        if (inFlight === 0) holdLoop(client, false)
        return client
      } catch (cause) {
        current = null
        await client.end().catch(() => undefined)
        throw cause
      }
    })()
    return current
  }
  return {
    query: async (config) => {
      if (ended) throw Object.assign(new Error('the store was closed'), { code: 'STORE_CLOSED' })
      inFlight += 1
      let client: pg.Client | undefined
      try {
        client = await open()
        holdLoop(client, true)
        return await client.query(config)
      } finally {
        inFlight -= 1
        if (inFlight === 0 && client !== undefined) holdLoop(client, false)
      }
    },
    open: async () => {
      await open()
    },
    end: async () => {
      ended = true
      const opened = current
      current = null
      if (opened !== null) await (await opened.catch(() => null))?.end().catch(() => undefined)
    },
  }
}

/**
 * The shared ports' database over a pool, and the instance's own connection for the statements that
 * write outside a transaction (`run`): each is one round trip on a connection that is already there,
 * where a pooled statement also checks a connection out and back in, with their timers, around it —
 * ~20 µs of a one-statement append's ~0.3 ms (decision 303). They go in the order they are made; reads and
 * transactions use the pool.
 * @category constructors
 */
export const makePostgresDatabase = (pool: pg.Pool, writer: OwnConnection): SqlDatabase => ({
  ...queriesOf(pool),
  run: async (sql, params) => (await writer.query(queryOf(sql, params))).rowCount ?? 0,
  // One transaction on one pooled connection; a `Left` answer rolls it back.
  transaction: async <A>(kind: 'write' | 'read', body: (q: SqlQueries) => Promise<SqlOutcome<A>>) => {
    const client = await pool.connect()
    let broken = false
    try {
      // One snapshot: the header and every page a read sees are one moment's (one round trip).
      await client.query(kind === 'read' ? 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY' : 'BEGIN')
      const outcome = await body(queriesOf(client))
      await client.query(E.isLeft(outcome) ? 'ROLLBACK' : 'COMMIT')
      return outcome
    } catch (cause) {
      await client.query('ROLLBACK').catch(() => {
        broken = true
      })
      throw cause
    } finally {
      client.release(broken)
    }
  },
})

/**
 * PostgreSQL's statements: `$n` placeholders, `ON CONFLICT DO NOTHING`, code-unit order
 * (`COLLATE "C"`, as the file stores sort names), the run header's row lock ordering appends.
 * @category constructors
 */
export const postgresDialect: SqlDialect = {
  touchSession: 'INSERT INTO session_ids (session_id) VALUES ($1) ON CONFLICT DO NOTHING',
  insertSession: 'INSERT INTO sessions (session_id, record) VALUES ($1, $2) ON CONFLICT DO NOTHING',
  selectSession: 'SELECT record FROM sessions WHERE session_id = $1',
  listSessionIds: 'SELECT session_id FROM session_ids ORDER BY session_id COLLATE "C"',
  insertRun: 'INSERT INTO runs (session_id, run_id, header) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
  selectHeader: 'SELECT header FROM runs WHERE session_id = $1 AND run_id = $2',
  // The header row's lock orders the appends of one run, across connections and hosts.
  selectHeaderForAppend: prepared('SELECT header FROM runs WHERE session_id = $1 AND run_id = $2 FOR UPDATE'),
  updateRun: prepared('UPDATE runs SET header = $1 WHERE session_id = $2 AND run_id = $3'),
  listRuns: 'SELECT run_id AS "runId", header FROM runs WHERE session_id = $1 ORDER BY run_id COLLATE "C"',
  countEvents: prepared('SELECT COALESCE(MAX(seq), 0)::integer AS n FROM events WHERE session_id = $1 AND run_id = $2'),
  ledgerPage: 'SELECT seq, row FROM events WHERE session_id = $1 AND run_id = $2 AND seq > $3 ORDER BY seq LIMIT $4',
  pageRows: 512,
  // A page is a round trip: a 100k-row ledger read 512 rows at a time took ~0.3 s, 2048 at a time ~0.2 s.
  readPageRows: 2048,
  replayPageBytes: Number.POSITIVE_INFINITY,
  insertEvent: (q, params) => q.run(INSERT_EVENT, params),
  // One statement, its own transaction: one round trip. The seq's primary key and the id's unique key
  // make a racing append lose here (and take the checking transaction) instead of writing twice. The
  // loss is the unique violation itself, not `ON CONFLICT DO NOTHING`: a speculative insertion costs
  // every append ~20 µs of its ~0.3 ms to spare the rare race one error (decision 300).
  appendAfter: async (db, params) => {
    try {
      return await db.run(APPEND_AFTER, params)
    } catch (cause) {
      if (sqlState(cause) !== UNIQUE_VIOLATION) throw cause
      return 0
    }
  },
  lastRow: async (db, sessionId, runId) => {
    const found = (
      await db.all<{ readonly present: boolean; readonly row: string | null }>(
        `SELECT true AS present, (SELECT row FROM events e WHERE e.session_id = $1 AND e.run_id = $2
           ORDER BY seq DESC LIMIT 1) AS row FROM runs WHERE session_id = $1 AND run_id = $2`,
        [sessionId, runId],
      )
    )[0]
    return E.right(found === undefined ? { run: false, row: null } : { run: true, row: found.row })
  },
  upsertShellRun:
    'INSERT INTO shell_runs (session_id, shell_run_id, record) VALUES ($1, $2, $3) ' +
    'ON CONFLICT (session_id, shell_run_id) DO UPDATE SET record = excluded.record',
  listShellRuns:
    'SELECT shell_run_id AS "shellRunId", record FROM shell_runs WHERE session_id = $1 ORDER BY shell_run_id COLLATE "C"',
  sessionIdList: (sessionIds) => [...sessionIds],
  surveyShellRuns:
    'SELECT session_id AS s, shell_run_id AS "shellRunId", record FROM shell_runs WHERE session_id = ANY($1::text[]) ' +
    'ORDER BY session_id COLLATE "C", shell_run_id COLLATE "C"',
  surveyClaims:
    'SELECT session_id AS s, source_run_id AS r, high_water AS hw, record FROM claims WHERE session_id = ANY($1::text[]) ' +
    'ORDER BY session_id COLLATE "C", source_run_id COLLATE "C", high_water',
  surveyRuns:
    'SELECT r.session_id AS s, r.run_id AS "runId", r.header, (SELECT e.row FROM events e ' +
    'WHERE e.session_id = r.session_id AND e.run_id = r.run_id ORDER BY e.seq DESC LIMIT 1) AS last ' +
    'FROM runs r WHERE r.session_id = ANY($1::text[]) ORDER BY r.session_id COLLATE "C", r.run_id COLLATE "C"',
  selectClaim: 'SELECT record FROM claims WHERE session_id = $1 AND source_run_id = $2 AND high_water = $3',
  listClaims:
    'SELECT source_run_id AS r, high_water AS hw, record FROM claims WHERE session_id = $1 ' +
    'ORDER BY source_run_id COLLATE "C", high_water',
  // The claim is the INSERT against the boundary's unique constraint, in one statement with the target
  // header (and the session's id): one round trip, all or nothing (decision 174). SQLSTATE 23505 on the
  // boundary is the claim taken; on the run's key, the claim is still looked up, because the statement's
  // parts run in no set order and a boundary already claimed must read as such whichever part failed.
  insertClaim: async (db, claim, targetHeader, highWater) => {
    const { sessionId, sourceRunId } = claim
    try {
      await db.run(INSERT_CLAIM, [
        sessionId,
        sourceRunId,
        highWater,
        JSON.stringify(claim),
        targetHeader.runId,
        JSON.stringify(targetHeader),
      ])
      return E.right('claimed')
    } catch (cause) {
      if (sqlState(cause) !== UNIQUE_VIOLATION) throw cause
      if (constraintOf(cause) === 'claims_boundary_key') return E.right('claim_taken')
      const taken = await db.value(postgresDialect.selectClaim, [sessionId, sourceRunId, highWater])
      return E.right(taken === undefined ? 'run_taken' : 'claim_taken')
    }
  },
}

// The reads one command repeats page after page (a ledger's pages, a recovery survey's), prepared by
// name as the writes are (a survey page's runs statement: ~1 ms of planning, a third of its time).
const readNames: ReadonlyMap<string, string> = new Map([
  [postgresDialect.ledgerPage, 'maka_ledger_page'],
  [postgresDialect.surveyShellRuns, 'maka_survey_shell_runs'],
  [postgresDialect.surveyClaims, 'maka_survey_claims'],
  [postgresDialect.surveyRuns, 'maka_survey_runs'],
])

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
