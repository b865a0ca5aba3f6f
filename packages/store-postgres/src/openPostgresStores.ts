/**
 * The store ports over one PostgreSQL database shared by several hosts (docs/decisions.md #89–#93).
 * Rows hold the same JSON the JSONL files hold and are decoded with the same codecs on every read;
 * every write is one transaction. Ownership of a session is a session-scoped advisory lock held on
 * one dedicated connection per instance, so the server itself releases it when the owning process
 * dies and its connection drops; the `owner_locks` row says which host holds it, and counts only
 * while that lock is held. The pool connects on the first call, so an unreachable server or a
 * database from a newer maka is a `StoreError` of that call, never a throw.
 */
import { createHash } from 'node:crypto'
import { hostname } from 'node:os'
import {
  AgentRun,
  ContinuationClaim,
  decodeWith,
  OwnerLock,
  SessionRecord,
  ShellRun,
  RunId,
  SessionId,
  type RuntimeEvent,
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
import pg from 'pg'
import { migrate, parseTarget, redactError, sessionLockKey, type Target } from './database.js'

/**
 * The PostgreSQL stores: the ports plus what this instance holds.
 * @category models
 */
export interface PostgresStores extends StorePorts {
  /** The host id recorded with every owner lock this instance takes. */
  readonly hostId: string
  /**
   * Connects and brings the schema up to date now, rather than at the first call; rejects with an
   * error whose words hold no secret of the URL and whose `code` is the SQLSTATE or errno.
   */
  readonly ready: () => Promise<void>
  /** Ends the pool and the lock connection (releasing every session it holds); later calls are `IoFailed`. */
  readonly close: () => Promise<void>
}

/**
 * Options of `openPostgresStores`.
 * @category models
 */
export interface PostgresStoresOptions {
  /** The host id to record with owner locks; default `MAKA_HOST_ID`, else the machine's hostname. */
  readonly hostId?: string
  /** Connections of the statement pool (default 4); the lock connection is one more. */
  readonly poolSize?: number
}

/**
 * The host id of this process: `MAKA_HOST_ID` when set, else the machine's hostname.
 * @category constructors
 */
export const currentHostId = (env: NodeJS.ProcessEnv = process.env): string => {
  const fromEnv = env['MAKA_HOST_ID']?.trim()
  return fromEnv !== undefined && fromEnv !== '' ? fromEnv : hostname()
}

type Outcome<A> = E.Either<StoreError, A>
type Q = pg.ClientBase

const decodeSession = decodeWith(SessionRecord)
const decodeHeader = decodeWith(AgentRun)
const decodeShellRun = decodeWith(ShellRun)
const decodeClaim = decodeWith(ContinuationClaim)
const decodeLock = decodeWith(OwnerLock)

const sqlState = (cause: unknown): string | undefined =>
  typeof cause === 'object' && cause !== null && typeof (cause as { code?: unknown }).code === 'string'
    ? (cause as { code: string }).code
    : undefined
const constraintOf = (cause: unknown): string | undefined =>
  typeof cause === 'object' && cause !== null && typeof (cause as { constraint?: unknown }).constraint === 'string'
    ? (cause as { constraint: string }).constraint
    : undefined
const UNIQUE_VIOLATION = '23505'

// A fold and a replay fetch a ledger in pages of this many rows: memory holds one page, not the ledger.
const PAGE_ROWS = 512

/** A failure inside a transaction that is an answer, not an error: the transaction rolls back. */
class Refusal extends Error {
  constructor(readonly error: StoreError) {
    super(error.message)
  }
}

// The row of a session's lock counts only while its backend holds the session's advisory lock.
const LIVE_LOCK = `EXISTS (
  SELECT 1 FROM pg_locks l
  WHERE l.locktype = 'advisory' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
    AND l.classid = $2::bigint::oid AND l.objid = $3::bigint::oid AND l.objsubid = 2 AND l.pid = o.backend_pid)`

/**
 * Opens the stores of the database at `url` (its schema created or migrated on first use). The
 * URL is kept inside: `location` and every error name the database and host only.
 * @category constructors
 */
export const openPostgresStores = (url: string, options: PostgresStoresOptions = {}): PostgresStores => {
  const target: Target = parseTarget(url)
  const hostId = options.hostId ?? currentHostId()
  let pool: pg.Pool | null = null
  let ready: Promise<pg.Pool> | null = null
  let closed = false
  // The dedicated connection holding this instance's advisory locks, and the sessions it holds.
  let lockClient: Promise<{ readonly client: pg.Client; readonly backendPid: number }> | null = null
  const held = new Set<string>()
  // Sessions whose lock connection dropped while held: another host may own them now, so this
  // instance writes nothing more to them (fenced) until it takes the lock again.
  const lost = new Set<string>()
  const verified = new Map<string, number>()

  const where = (tail: string) => `${target.location}#${tail}`
  const sessionWhere = (s: string) => where(`sessions/${s}/session.json`)
  const runWhere = (s: string, r: string) => where(`sessions/${s}/runs/${r}/run.json`)
  const ledgerWhere = (s: string, r: string) => where(`sessions/${s}/runs/${r}/runtime-events.jsonl`)
  const shellWhere = (s: string, id: string) => where(`sessions/${s}/shell-runs/${id}.json`)
  const claimWhere = (s: string, r: string, hw: number) => where(`sessions/${s}/claims/${r}@${hw}.json`)
  const lockWhere = (s: string) => where(`sessions/${s}/owner.lock`)

  const closedError = () => Object.assign(new Error('the store was closed'), { code: 'STORE_CLOSED' })

  const database = (): Promise<pg.Pool> => {
    if (closed) return Promise.reject(closedError())
    ready ??= (async () => {
      const created = new pg.Pool({ ...target.config, max: options.poolSize ?? 4 })
      // An idle connection the server drops must not crash the process: the next query reconnects.
      created.on('error', () => undefined)
      pool = created
      try {
        await migrate(created)
        return created
      } catch (cause) {
        ready = null
        pool = null
        await created.end().catch(() => undefined)
        throw cause
      }
    })()
    return ready
  }

  const task =
    <A>(subject: () => string, step: (pool: pg.Pool) => Promise<Outcome<A>>): TE.TaskEither<StoreError, A> =>
    async () => {
      try {
        return await step(await database())
      } catch (cause) {
        if (cause instanceof Refusal) return E.left(cause.error)
        return E.left(withSubject(ioFailed('postgres', target.location, redactError(target, cause)), subject()))
      }
    }

  // One transaction on one pooled connection; a `Refusal` thrown inside rolls it back and is the answer.
  const transaction = async <A>(pool: pg.Pool, body: (q: Q) => Promise<Outcome<A>>): Promise<Outcome<A>> => {
    const client = await pool.connect()
    let broken = false
    try {
      await client.query('BEGIN')
      const outcome = await body(client)
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
  }

  const fence = (sessionId: string): void => {
    if (lost.has(sessionId)) {
      throw new Refusal(
        withSubject(
          ioFailed(
            'postgres',
            target.location,
            Object.assign(new Error('the connection holding this session lock dropped'), { code: 'OWNER_LOCK_LOST' }),
          ),
          `write to session ${sessionId}`,
        ),
      )
    }
  }

  const decodeStored = decodeStoredRecord

  const touchSession = (q: Q, sessionId: string) =>
    q.query('INSERT INTO session_ids (session_id) VALUES ($1) ON CONFLICT DO NOTHING', [sessionId])

  const headerText = async (q: Q | pg.Pool, s: string, r: string, lock = false): Promise<string | undefined> =>
    (
      await q.query<{ header: string }>(
        `SELECT header FROM runs WHERE session_id = $1 AND run_id = $2${lock ? ' FOR UPDATE' : ''}`,
        [s, r],
      )
    ).rows[0]?.header

  const readLedger = async (q: Q | pg.Pool, s: string, r: string): Promise<LedgerSnapshot> => {
    const reader = makeLedgerRowReader({ sessionId: s, runId: r })
    const rows = await q.query<{ row: string }>(
      'SELECT row FROM events WHERE session_id = $1 AND run_id = $2 ORDER BY seq',
      [s, r],
    )
    for (const { row } of rows.rows) reader.add(row)
    return reader.snapshot()
  }

  // One page of row texts after row `after`, in high-water order.
  const ledgerPage = async (q: Q | pg.Pool, s: string, r: string, after: number) =>
    (
      await q.query<{ seq: number; row: string }>(
        'SELECT seq, row FROM events WHERE session_id = $1 AND run_id = $2 AND seq > $3 ORDER BY seq LIMIT $4',
        [s, r, after, PAGE_ROWS],
      )
    ).rows

  const ledgerIsWhole = async (q: Q, s: string, r: string, highWater: number): Promise<boolean> => {
    const key = `${s}\u0000${r}`
    const known = verified.get(key) ?? 0
    if (known === highWater) return true
    if (known > highWater) verified.delete(key)
    const snapshot = await readLedger(q, s, r)
    if (snapshot.problem !== null) return false
    verified.set(key, snapshot.highWater)
    return true
  }

  const readClaim = async (
    q: Q | pg.Pool,
    s: string,
    r: string,
    hw: number,
  ): Promise<Outcome<ContinuationClaim | null>> => {
    const row = (
      await q.query<{ record: string }>(
        'SELECT record FROM claims WHERE session_id = $1 AND source_run_id = $2 AND high_water = $3',
        [s, r, hw],
      )
    ).rows[0]
    if (row === undefined) return E.right(null)
    return decodeStored(
      row.record,
      claimWhere(s, r, hw),
      decodeClaim,
      (c) => c.sessionId === s && c.sourceRunId === r && c.sourceRuntimeEventHighWater === hw,
    )
  }

  // The session's lock row, and whether its advisory lock is still held by the backend it names.
  const readLockRow = async (
    q: Q | pg.Pool,
    s: string,
  ): Promise<Outcome<{ readonly lock: OwnerLock; readonly live: boolean; readonly backendPid: number } | null>> => {
    const [k1, k2] = sessionLockKey(s)
    const row = (
      await q.query<{ record: string; live: boolean; backend_pid: number }>(
        `SELECT record, backend_pid, ${LIVE_LOCK} AS live FROM owner_locks o WHERE session_id = $1`,
        [s, k1, k2],
      )
    ).rows[0]
    if (row === undefined) return E.right(null)
    const lock = decodeStored(row.record, lockWhere(s), decodeLock, () => true)
    return E.isLeft(lock) ? lock : E.right({ lock: lock.right, live: row.live, backendPid: row.backend_pid })
  }

  const lockConnection = (): Promise<{ readonly client: pg.Client; readonly backendPid: number }> => {
    if (closed) return Promise.reject(closedError())
    lockClient ??= (async () => {
      const client = new pg.Client(target.config)
      const drop = () => {
        // The server releases every advisory lock of a dropped connection: what we held is no longer ours.
        for (const s of held) lost.add(s)
        held.clear()
        lockClient = null
      }
      client.on('error', drop)
      client.on('end', drop)
      try {
        await client.connect()
        const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid
        return { client, backendPid: pid }
      } catch (cause) {
        lockClient = null
        await client.end().catch(() => undefined)
        throw cause
      }
    })()
    return lockClient
  }

  const sessions: StorePorts['sessions'] = {
    create: (record) =>
      task(
        () => `create session.json of session ${record?.sessionId}`,
        (pool) => {
          const ids = checkIds(['sessionId', record?.sessionId])
          if (E.isLeft(ids)) return Promise.resolve(ids)
          const decoded = decodeSession(record)
          if (E.isLeft(decoded)) return Promise.resolve(E.left(invalidRecord('SessionRecord', decoded.left)))
          fence(record.sessionId)
          return transaction(pool, async (q): Promise<Outcome<void>> => {
            await touchSession(q, record.sessionId)
            const inserted = await q.query(
              'INSERT INTO sessions (session_id, record) VALUES ($1, $2) ON CONFLICT DO NOTHING',
              [record.sessionId, JSON.stringify(record)],
            )
            return inserted.rowCount === 0
              ? E.left(sessionAlreadyExists(sessionWhere(record.sessionId), record.sessionId))
              : E.right(undefined)
          })
        },
      ),
    read: (sessionId) =>
      task(
        () => `read session.json of session ${sessionId}`,
        async (pool) => {
          const ids = checkIds(['sessionId', sessionId])
          if (E.isLeft(ids)) return ids
          const row = (
            await pool.query<{ record: string }>('SELECT record FROM sessions WHERE session_id = $1', [sessionId])
          ).rows[0]
          if (row === undefined) return E.left(notFound(sessionWhere(sessionId)))
          return decodeStored(row.record, sessionWhere(sessionId), decodeSession, (r) => r.sessionId === sessionId)
        },
      ),
    list: () =>
      task(
        () => 'list the sessions',
        async (pool) => {
          // Code-unit order (COLLATE "C"), as the file stores sort names.
          const ids = (
            await pool.query<{ session_id: string }>(
              'SELECT session_id FROM session_ids ORDER BY session_id COLLATE "C"',
            )
          ).rows.map((r) => r.session_id)
          // A name that is not a session id is not a session, as in a data dir (decisions 60).
          return E.right(ids.filter(SessionId.is))
        },
      ),
  }

  const runs: StorePorts['runs'] = {
    create: (run) =>
      task(
        () => `create run.json of run ${run?.runId} in session ${run?.sessionId}`,
        (pool) => {
          const checked = checkRunHeader(run)
          if (E.isLeft(checked)) return Promise.resolve(checked)
          fence(run.sessionId)
          return transaction(pool, async (q): Promise<Outcome<void>> => {
            await touchSession(q, run.sessionId)
            const inserted = await q.query(
              'INSERT INTO runs (session_id, run_id, header) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
              [run.sessionId, run.runId, JSON.stringify(run)],
            )
            return inserted.rowCount === 0
              ? E.left(runAlreadyExists(runWhere(run.sessionId, run.runId), run.sessionId, run.runId))
              : E.right(undefined)
          })
        },
      ),
    read: (sessionId, runId) =>
      task(
        () => `read run.json of run ${runId} in session ${sessionId}`,
        async (pool) => {
          const ids = checkIds(['sessionId', sessionId], ['runId', runId])
          if (E.isLeft(ids)) return ids
          const text = await headerText(pool, sessionId, runId)
          if (text === undefined) return E.left(notFound(runWhere(sessionId, runId)))
          return decodeStored(
            text,
            runWhere(sessionId, runId),
            decodeHeader,
            (h) => h.sessionId === sessionId && h.runId === runId,
          )
        },
      ),
    // Every commit waits for the server's WAL flush (synchronous_commit on), so `durable` asks for nothing more.
    update: (run) =>
      task(
        () => `update run.json of run ${run?.runId} in session ${run?.sessionId}`,
        async (pool) => {
          const checked = checkRunHeader(run)
          if (E.isLeft(checked)) return checked
          fence(run.sessionId)
          const updated = await pool.query('UPDATE runs SET header = $1 WHERE session_id = $2 AND run_id = $3', [
            JSON.stringify(run),
            run.sessionId,
            run.runId,
          ])
          return updated.rowCount === 0 ? E.left(notFound(runWhere(run.sessionId, run.runId))) : E.right(undefined)
        },
      ),
    list: (sessionId) =>
      task(
        () => `list the runs of session ${sessionId}`,
        async (pool) => {
          const ids = checkIds(['sessionId', sessionId])
          if (E.isLeft(ids)) return ids
          const rows = (
            await pool.query<{ run_id: string; header: string }>(
              'SELECT run_id, header FROM runs WHERE session_id = $1 ORDER BY run_id COLLATE "C"',
              [sessionId],
            )
          ).rows
          const listed: Array<RunListing> = []
          for (const { run_id: runId, header } of rows) {
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
        (pool) => {
          const ids = checkIds(['sessionId', sessionId], ['runId', runId])
          if (E.isLeft(ids)) return Promise.resolve(ids)
          const at = ledgerWhere(sessionId, runId)
          if (event.sessionId !== sessionId) return Promise.resolve(E.left(eventIdentityMismatch(at, 'sessionId')))
          if (event.runId !== runId) return Promise.resolve(E.left(eventIdentityMismatch(at, 'runId')))
          const row = encodeRuntimeEventRow(event)
          if (E.isLeft(row)) return Promise.resolve(row)
          fence(sessionId)
          return transaction(pool, async (q): Promise<Outcome<{ readonly highWater: number }>> => {
            // The header row's lock orders the appends of one run, across connections and hosts.
            if ((await headerText(q, sessionId, runId, true)) === undefined) {
              return E.left(notFound(runWhere(sessionId, runId)))
            }
            const rows = (
              await q.query<{ n: number }>(
                'SELECT COALESCE(MAX(seq), 0)::integer AS n FROM events WHERE session_id = $1 AND run_id = $2',
                [sessionId, runId],
              )
            ).rows[0]!.n
            if (!(await ledgerIsWhole(q, sessionId, runId, rows))) {
              const problem = (await readLedger(q, sessionId, runId)).problem
              if (problem !== null) return E.left(ledgerUnreadable(at, problem))
            }
            if (options.expectedHighWater !== undefined && options.expectedHighWater !== rows) {
              return E.left(highWaterConflict(at, options.expectedHighWater, rows))
            }
            // A row id the ledger already holds is a refusal, not an error: nothing is inserted.
            const inserted = await q.query(
              'INSERT INTO events (session_id, run_id, seq, event_id, row) VALUES ($1, $2, $3, $4, $5) ' +
                'ON CONFLICT (session_id, run_id, event_id) DO NOTHING',
              [sessionId, runId, rows + 1, event.id, row.right],
            )
            if (inserted.rowCount === 0) {
              return E.left(invalidRecord('RuntimeEvent', 'the ledger already holds a row with this id'))
            }
            verified.set(`${sessionId}\u0000${runId}`, rows + 1)
            return E.right({ highWater: rows + 1 })
          })
        },
      ),
    read: (sessionId, runId) =>
      task(
        () => `read the ledger of run ${runId} in session ${sessionId}`,
        async (pool) => {
          const ids = checkIds(['sessionId', sessionId], ['runId', runId])
          if (E.isLeft(ids)) return ids
          // One snapshot: the header and the rows are one moment's.
          return transaction(pool, async (q): Promise<Outcome<LedgerSnapshot>> => {
            await q.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY')
            if ((await headerText(q, sessionId, runId)) === undefined)
              return E.left(notFound(runWhere(sessionId, runId)))
            const snapshot = await readLedger(q, sessionId, runId)
            return E.right(snapshot.highWater === 0 ? emptyLedgerSnapshot : snapshot)
          })
        },
      ),
    fold: (sessionId, runId, onEvent) =>
      task(
        () => `fold the ledger of run ${runId} in session ${sessionId}`,
        async (pool) => {
          const ids = checkIds(['sessionId', sessionId], ['runId', runId])
          if (E.isLeft(ids)) return ids
          // One snapshot, as `read`: the header and every page are one moment's.
          return transaction(pool, async (q): Promise<Outcome<LedgerScan>> => {
            await q.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY')
            if ((await headerText(q, sessionId, runId)) === undefined) {
              return E.left(notFound(runWhere(sessionId, runId)))
            }
            const hash = createHash('sha256')
            let failed: { readonly thrown: unknown } | undefined
            const reader = makeLedgerRowReader({ sessionId, runId }, (event) => {
              try {
                onEvent(event)
              } catch (thrown) {
                failed = { thrown }
                throw thrown
              }
            })
            for (let after = 0; ;) {
              const page = await ledgerPage(q, sessionId, runId, after)
              try {
                for (const { seq, row } of page) {
                  hash.update(row, 'utf8').update('\n')
                  reader.add(row)
                  after = seq
                }
              } catch (cause) {
                if (failed !== undefined) return E.left(consumerFailed(ledgerWhere(sessionId, runId), failed.thrown))
                throw cause
              }
              if (page.length < PAGE_ROWS) break
            }
            return E.right(reader.ledgerScan(hash.digest('hex')))
          })
        },
      ),
    replay: (sessionId, runId, expected, onRows) =>
      task(
        () => `replay the ledger of run ${runId} in session ${sessionId}`,
        async (pool) => {
          const ids = checkIds(['sessionId', sessionId], ['runId', runId])
          if (E.isLeft(ids)) return ids
          const checked = checkReplayExpectation(expected)
          if (E.isLeft(checked)) return checked
          if ((await headerText(pool, sessionId, runId)) === undefined) {
            return E.left(notFound(runWhere(sessionId, runId)))
          }
          const at = ledgerWhere(sessionId, runId)
          const hash = createHash('sha256')
          let batch: Array<RuntimeEvent> = []
          const reader = makeLedgerRowReader({ sessionId, runId }, (event) => {
            batch.push(event)
          })
          let bytes = 0
          let after = 0
          // Page by page on the pool, no transaction held while the consumer waits: rows changed
          // between two pages change the digest, which decides at the end.
          while (bytes < expected.committedBytes) {
            const page = await ledgerPage(pool, sessionId, runId, after)
            if (page.length === 0) return E.left(ledgerChanged(at, expected.committedBytes, 'fewer_bytes'))
            for (const { seq, row } of page) {
              bytes += Buffer.byteLength(row, 'utf8') + 1
              if (bytes > expected.committedBytes) {
                return E.left(ledgerChanged(at, expected.committedBytes, 'different_bytes'))
              }
              hash.update(row, 'utf8').update('\n')
              reader.add(row)
              after = seq
              if (bytes === expected.committedBytes) break
            }
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
        async (pool) => {
          const ids = checkIds(['sessionId', sessionId], ['runId', runId])
          if (E.isLeft(ids)) return ids
          const found = (
            await pool.query<{ present: boolean; row: string | null }>(
              `SELECT true AS present, (SELECT row FROM events e WHERE e.session_id = $1 AND e.run_id = $2
                 ORDER BY seq DESC LIMIT 1) AS row FROM runs WHERE session_id = $1 AND run_id = $2`,
              [sessionId, runId],
            )
          ).rows[0]
          if (found === undefined) return E.left(notFound(runWhere(sessionId, runId)))
          if (found.row === null) return E.right(null)
          const reader = makeLedgerRowReader({ sessionId, runId })
          reader.add(found.row)
          const snapshot = reader.snapshot()
          return E.right(snapshot.problem === null ? (snapshot.events[0] ?? null) : null)
        },
      ),
  }

  const shellRuns: StorePorts['shellRuns'] = {
    write: (run) =>
      task(
        () => `write shell run ${run?.shellRunId} of session ${run?.sessionId}`,
        (pool) => {
          const ids = checkIds(['sessionId', run?.sessionId], ['shellRunId', run?.shellRunId], ['runId', run?.runId])
          if (E.isLeft(ids)) return Promise.resolve(ids)
          const decoded = decodeShellRun(run)
          if (E.isLeft(decoded)) return Promise.resolve(E.left(invalidRecord('ShellRun', decoded.left)))
          fence(run.sessionId)
          return transaction(pool, async (q): Promise<Outcome<void>> => {
            await touchSession(q, run.sessionId)
            await q.query(
              'INSERT INTO shell_runs (session_id, shell_run_id, record) VALUES ($1, $2, $3) ' +
                'ON CONFLICT (session_id, shell_run_id) DO UPDATE SET record = excluded.record',
              [run.sessionId, run.shellRunId, JSON.stringify(run)],
            )
            return E.right(undefined)
          })
        },
      ),
    list: (sessionId) =>
      task(
        () => `list the shell runs of session ${sessionId}`,
        async (pool) => {
          const ids = checkIds(['sessionId', sessionId])
          if (E.isLeft(ids)) return ids
          const rows = (
            await pool.query<{ shellRunId: string; record: string }>(
              'SELECT shell_run_id AS "shellRunId", record FROM shell_runs WHERE session_id = $1 ORDER BY shell_run_id COLLATE "C"',
              [sessionId],
            )
          ).rows
          return listStoredShellRuns(sessionId, rows, shellWhere)
        },
      ),
  }

  const claims: StorePorts['claims'] = {
    // The claim is the INSERT against the boundary's unique constraint, in one transaction with the
    // target header: SQLSTATE 23505 on the boundary is `ClaimConflict`, on the run's key
    // `RunAlreadyExists`, and either refusal leaves neither row.
    claimBoundary: (claim, targetHeader) =>
      task(
        () =>
          `create the claim ${claim?.sourceRunId}@${claim?.sourceRuntimeEventHighWater} of session ${claim?.sessionId}`,
        async (pool) => {
          const highWater = checkClaimBoundary(claim, targetHeader)
          if (E.isLeft(highWater)) return highWater
          const { sessionId, sourceRunId } = claim
          const at = claimWhere(sessionId, sourceRunId, highWater.right)
          fence(sessionId)
          let conflict: 'claim' | 'run' | null = null
          const outcome = await transaction(pool, async (q): Promise<Outcome<void>> => {
            await touchSession(q, sessionId)
            try {
              await q.query(
                'INSERT INTO claims (session_id, source_run_id, high_water, record) VALUES ($1, $2, $3, $4)',
                [sessionId, sourceRunId, highWater.right, JSON.stringify(claim)],
              )
              await q.query('INSERT INTO runs (session_id, run_id, header) VALUES ($1, $2, $3)', [
                sessionId,
                targetHeader.runId,
                JSON.stringify(targetHeader),
              ])
            } catch (cause) {
              if (sqlState(cause) !== UNIQUE_VIOLATION) throw cause
              conflict = constraintOf(cause) === 'claims_boundary_key' ? 'claim' : 'run'
              return E.left(claimConflict(at, undefined))
            }
            return E.right(undefined)
          })
          if (conflict === 'run') {
            return E.left(runAlreadyExists(runWhere(sessionId, targetHeader.runId), sessionId, targetHeader.runId))
          }
          if (conflict === 'claim') {
            const existing = await readClaim(pool, sessionId, sourceRunId, highWater.right)
            return E.left(claimConflict(at, E.isRight(existing) ? (existing.right ?? undefined) : undefined))
          }
          return outcome
        },
      ),
    read: (sessionId, sourceRunId, highWater) =>
      task(
        () => `read the claim ${sourceRunId}@${highWater} of session ${sessionId}`,
        async (pool) => {
          const ids = checkIds(['sessionId', sessionId], ['sourceRunId', sourceRunId])
          if (E.isLeft(ids)) return ids
          const hw = checkHighWater('highWater', highWater)
          return E.isLeft(hw) ? hw : readClaim(pool, sessionId, sourceRunId, hw.right)
        },
      ),
    list: (sessionId) =>
      task(
        () => `list the claims of session ${sessionId}`,
        async (pool) => {
          const ids = checkIds(['sessionId', sessionId])
          if (E.isLeft(ids)) return ids
          const rows = (
            await pool.query<{ source_run_id: string; high_water: number; record: string }>(
              'SELECT source_run_id, high_water, record FROM claims WHERE session_id = $1 ' +
                'ORDER BY source_run_id COLLATE "C", high_water',
              [sessionId],
            )
          ).rows
          const out: Array<ContinuationClaim> = []
          for (const { source_run_id: r, high_water: hw, record } of rows) {
            const claim = decodeStored(
              record,
              claimWhere(sessionId, r, hw),
              decodeClaim,
              (c) => c.sessionId === sessionId && c.sourceRunId === r && c.sourceRuntimeEventHighWater === hw,
            )
            if (E.isLeft(claim)) return claim
            out.push(claim.right)
          }
          return E.right(out)
        },
      ),
  }

  const ownerLocks: StorePorts['ownerLocks'] = {
    // A row whose advisory lock no backend holds is a dead owner's leftover: it reads as no owner.
    read: (sessionId) =>
      task(
        () => `read owner.lock of session ${sessionId}`,
        async (pool) => {
          const ids = checkIds(['sessionId', sessionId])
          if (E.isLeft(ids)) return ids
          const found = await readLockRow(pool, sessionId)
          return E.isLeft(found) ? found : E.right(found.right?.live === true ? found.right.lock : null)
        },
      ),
    // The server judges ownership: the session's advisory lock is taken with pg_try_advisory_lock on
    // this instance's lock connection, and whoever holds it owns the session. The caller's `isStale`
    // (a pid check, meaningless for another host's process) is never asked: a lock whose holder died
    // was released by the server when its connection dropped.
    acquire: (sessionId, lock) =>
      task(
        () => `create owner.lock of session ${sessionId}`,
        async (pool) => {
          const ids = checkIds(['sessionId', sessionId])
          if (E.isLeft(ids)) return ids
          const decoded = decodeLock(lock)
          if (E.isLeft(decoded)) return E.left(invalidRecord('OwnerLock', decoded.left))
          const at = lockWhere(sessionId)
          const [k1, k2] = sessionLockKey(sessionId)
          if (held.has(sessionId)) {
            // No re-entry: a second turn of the same instance must not share the session with the first.
            const mine = await readLockRow(pool, sessionId)
            return E.left(ownerLockHeld(at, E.isRight(mine) && mine.right !== null ? mine.right.lock : lock))
          }
          const { client, backendPid } = await lockConnection()
          const got = (await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS ok', [k1, k2]))
            .rows[0]!.ok
          if (!got) {
            // Another live connection holds it; its row follows its lock within a moment.
            for (let attempt = 0; attempt < 50; attempt += 1) {
              const found = await readLockRow(pool, sessionId)
              if (E.isLeft(found)) return found
              if (found.right?.live === true) return E.left(ownerLockHeld(at, found.right.lock))
              await new Promise((done) => setTimeout(done, 20))
            }
            throw Object.assign(new Error('the session lock is held by a connection that recorded no owner'), {
              code: 'OWNER_LOCK_BUSY',
            })
          }
          held.add(sessionId)
          lost.delete(sessionId)
          try {
            await pool.query(
              'INSERT INTO owner_locks (session_id, record, host_id, backend_pid) VALUES ($1, $2, $3, $4) ' +
                'ON CONFLICT (session_id) DO UPDATE SET record = excluded.record, host_id = excluded.host_id, ' +
                'backend_pid = excluded.backend_pid, acquired_at = now()',
              [sessionId, JSON.stringify(lock), hostId, backendPid],
            )
            await pool.query('INSERT INTO session_ids (session_id) VALUES ($1) ON CONFLICT DO NOTHING', [sessionId])
          } catch (cause) {
            // A lock we could not record is not held: give it back.
            held.delete(sessionId)
            await client.query('SELECT pg_advisory_unlock($1, $2)', [k1, k2]).catch(() => undefined)
            throw cause
          }
          return E.right(undefined)
        },
      ),
    release: (sessionId, lock) =>
      task(
        () => `remove owner.lock of session ${sessionId}`,
        async (pool) => {
          const ids = checkIds(['sessionId', sessionId])
          if (E.isLeft(ids)) return ids
          const found = await readLockRow(pool, sessionId)
          if (E.isLeft(found)) return found
          const row = found.right
          const mine = held.has(sessionId)
          if (row !== null && !isSameOwner(row.lock, lock) && (row.live || mine)) {
            return E.left(ownerLockHeld(lockWhere(sessionId), row.lock))
          }
          if (row !== null && row.live && !mine) return E.left(ownerLockHeld(lockWhere(sessionId), row.lock))
          if (row !== null) {
            await pool.query('DELETE FROM owner_locks WHERE session_id = $1 AND backend_pid = $2', [
              sessionId,
              row.backendPid,
            ])
          }
          if (mine) {
            held.delete(sessionId)
            const [k1, k2] = sessionLockKey(sessionId)
            const { client } = await lockConnection()
            await client.query('SELECT pg_advisory_unlock($1, $2)', [k1, k2])
          }
          return E.right(undefined)
        },
      ),
  }

  return {
    location: target.location,
    hostId,
    ready: async () => {
      try {
        await database()
      } catch (cause) {
        throw redactError(target, cause)
      }
    },
    sessions,
    runs,
    events,
    shellRuns,
    claims,
    ownerLocks,
    close: async () => {
      closed = true
      const locks = lockClient
      lockClient = null
      held.clear()
      if (locks !== null) await (await locks.catch(() => null))?.client.end().catch(() => undefined)
      const toEnd = pool
      pool = null
      ready = null
      await toEnd?.end().catch(() => undefined)
    },
  }
}
