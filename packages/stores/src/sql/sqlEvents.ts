/**
 * The RuntimeEvent ledger port over a SQL database: one `events` row per ledger line, `seq` its
 * 1-based high-water, `row` the event's JSON text exactly as a JSONL line holds it. Every read goes
 * through the JSONL reader's row rules (`makeLedgerRowReader`); an append checks the rows this
 * instance has not yet seen whole and refuses to write after a bad one.
 */
import type { RuntimeEvent } from '@maka/events'
import * as E from 'fp-ts/lib/Either.js'
import { checkIds } from '../internal/checkIds.js'
import { utf8Length } from '../internal/utf8Length.js'
import {
  emptyLedgerSnapshot,
  makeLedgerRowReader,
  type LedgerScan,
  type LedgerSnapshot,
  type PrefixDigest,
} from '../LedgerSnapshot.js'
import {
  checkFoldOptions,
  checkReplayExpectation,
  encodeRuntimeEventRow,
  type RuntimeEventStore,
} from '../RuntimeEventStore.js'
import {
  consumerFailed,
  deliverBatch,
  eventIdentityMismatch,
  highWaterConflict,
  invalidRecord,
  ledgerChanged,
  ledgerUnreadable,
  notFound,
  replayVerdict,
} from '../StoreError.js'
import {
  sqlPlaces,
  sqlTask,
  type SqlDatabase,
  type SqlOutcome,
  type SqlQueries,
  type SqlStoreContext,
} from './SqlDatabase.js'

/**
 * What `events.readLastRow` answers for a run whose header exists and whose ledger's last row text
 * is `last` (`null`: an empty ledger). Shared with the survey.
 * @category constructors
 */
export const lastRowOf = (sessionId: string, runId: string, last: string | null): RuntimeEvent | null => {
  if (last === null) return null
  // One row cannot repeat an id: no id set (a page of 64 Ki bits each) per run surveyed.
  const reader = makeLedgerRowReader({ sessionId, runId }, undefined, { repeatedIds: 'known_absent' })
  reader.add(last)
  const snapshot = reader.snapshot()
  return snapshot.problem === null ? (snapshot.events[0] ?? null) : null
}

/**
 * Builds the ledger store of one SQL store instance.
 * @category constructors
 */
export const makeSqlEventStore = (context: SqlStoreContext): RuntimeEventStore => {
  const { dialect } = context
  const places = sqlPlaces(context.location)
  // Rows of a ledger this instance has checked and found whole, so an append checks only newer rows.
  const verified = new Map<string, number>()

  const hasHeader = async (q: SqlQueries, sessionId: string, runId: string): Promise<boolean> =>
    (await q.value(dialect.selectHeader, [sessionId, runId])) !== undefined

  // One page of `{ seq, row }` after row `after`, in high-water order.
  const ledgerPage = (q: SqlQueries, sessionId: string, runId: string, after: number) =>
    q.all<{ readonly seq: number; readonly row: string }>(dialect.ledgerPage, [
      sessionId,
      runId,
      after,
      dialect.pageRows,
    ])

  const readPageRows = dialect.readPageRows ?? dialect.pageRows
  // A page of `(seq, row)` tuples, for the passes over a whole ledger (fold and replay).
  const ledgerTuples = async (q: SqlQueries, sessionId: string, runId: string, after: number) =>
    (await q.tuples(dialect.ledgerPage, [sessionId, runId, after, readPageRows])) as ReadonlyArray<
      readonly [seq: number, row: string]
    >

  const byteLength = context.byteLength ?? utf8Length

  const readLedger = async (q: SqlQueries, sessionId: string, runId: string): Promise<LedgerSnapshot> => {
    const reader = makeLedgerRowReader({ sessionId, runId })
    for (let after = 0; ;) {
      const page = await ledgerPage(q, sessionId, runId, after)
      for (const { seq, row } of page) {
        reader.add(row)
        after = seq
      }
      if (page.length < dialect.pageRows) return reader.snapshot()
    }
  }

  // What is wrong with the ledger, if anything, checking only rows newer than those this instance
  // verified: `null` when every row decodes as a row of this run. Read once.
  const ledgerProblem = async (q: SqlQueries, sessionId: string, runId: string, highWater: number) => {
    const key = `${sessionId}\u0000${runId}`
    const known = verified.get(key) ?? 0
    if (known === highWater) return null
    if (known > highWater) verified.delete(key)
    const snapshot = await readLedger(q, sessionId, runId)
    if (snapshot.problem === null) verified.set(key, snapshot.highWater)
    return snapshot.problem
  }

  // The full append: the header's lock, the row count, the whole-ledger check, then the insert.
  const appendInTransaction = (
    db: SqlDatabase,
    sessionId: string,
    runId: string,
    eventId: string,
    row: string,
    expectedHighWater: number | undefined,
  ): Promise<SqlOutcome<{ readonly highWater: number }>> => {
    const at = places.ledger(sessionId, runId)
    return db.transaction('write', async (q): Promise<SqlOutcome<{ readonly highWater: number }>> => {
      // The header's lock orders the appends of one run (the whole database's, in SQLite).
      if ((await q.value(dialect.selectHeaderForAppend, [sessionId, runId])) === undefined) {
        return E.left(notFound(places.run(sessionId, runId)))
      }
      const rows = (await q.value(dialect.countEvents, [sessionId, runId])) as number
      const problem = await ledgerProblem(q, sessionId, runId, rows)
      if (problem !== null) return E.left(ledgerUnreadable(at, problem))
      if (expectedHighWater !== undefined && expectedHighWater !== rows) {
        return E.left(highWaterConflict(at, expectedHighWater, rows))
      }
      // A row id the ledger already holds is a refusal, not an error: nothing is inserted.
      const inserted = await dialect.insertEvent(q, [sessionId, runId, rows + 1, eventId, row])
      if (inserted === 0) return E.left(invalidRecord('RuntimeEvent', 'the ledger already holds a row with this id'))
      verified.set(`${sessionId}\u0000${runId}`, rows + 1)
      return E.right({ highWater: rows + 1 })
    })
  }

  // A ledger this instance knows whole up to its last row takes one statement (one round trip on
  // PostgreSQL); anything that statement does not insert goes through the full append, which says why.
  const appendChecked = async (
    db: SqlDatabase,
    sessionId: string,
    runId: string,
    eventId: string,
    row: string,
    expectedHighWater: number | undefined,
  ): Promise<SqlOutcome<{ readonly highWater: number }>> => {
    const key = `${sessionId}\u0000${runId}`
    // A ledger this instance has not seen is tried as an empty one, which has no row to check: the
    // first append to a new run is one statement too; a ledger that has rows refuses it, and the
    // checking transaction reads them.
    const known = verified.get(key) ?? 0
    if (expectedHighWater === undefined || expectedHighWater === known) {
      if ((await dialect.appendAfter(db, [sessionId, runId, known, eventId, row])) === 1) {
        verified.set(key, known + 1)
        return E.right({ highWater: known + 1 })
      }
    }
    return appendInTransaction(db, sessionId, runId, eventId, row, expectedHighWater)
  }

  return {
    append: (sessionId, runId, event, options = {}) =>
      sqlTask(
        context,
        () => `append to the ledger of run ${runId} in session ${sessionId}`,
        (db) => {
          const ids = checkIds(['sessionId', sessionId], ['runId', runId])
          if (E.isLeft(ids)) return Promise.resolve(ids)
          const at = places.ledger(sessionId, runId)
          if (event.sessionId !== sessionId) return Promise.resolve(E.left(eventIdentityMismatch(at, 'sessionId')))
          if (event.runId !== runId) return Promise.resolve(E.left(eventIdentityMismatch(at, 'runId')))
          const row = encodeRuntimeEventRow(event)
          if (E.isLeft(row)) return Promise.resolve(row)
          const fenced = context.fence(sessionId)
          if (E.isLeft(fenced)) return Promise.resolve(fenced)
          return appendChecked(db, sessionId, runId, event.id, row.right, options.expectedHighWater)
        },
      ),
    read: (sessionId, runId) =>
      sqlTask(
        context,
        () => `read the ledger of run ${runId} in session ${sessionId}`,
        async (db) => {
          const ids = checkIds(['sessionId', sessionId], ['runId', runId])
          if (E.isLeft(ids)) return ids
          // One snapshot: the header and the rows are one moment's.
          return db.transaction('read', async (q): Promise<SqlOutcome<LedgerSnapshot>> => {
            if (!(await hasHeader(q, sessionId, runId))) return E.left(notFound(places.run(sessionId, runId)))
            const snapshot = await readLedger(q, sessionId, runId)
            return E.right(snapshot.highWater === 0 ? emptyLedgerSnapshot : snapshot)
          })
        },
      ),
    fold: (sessionId, runId, onEvent, options = {}) =>
      sqlTask(
        context,
        () => `fold the ledger of run ${runId} in session ${sessionId}`,
        async (db) => {
          const ids = checkIds(['sessionId', sessionId], ['runId', runId])
          if (E.isLeft(ids)) return ids
          const checked = checkFoldOptions(options)
          if (E.isLeft(checked)) return checked
          const pin = options.digestAt
          // One snapshot, as `read`: the header and every page are one moment's. Rows go to
          // `onEvent` a page at a time, never into an array of the whole ledger.
          return db.transaction('read', async (q): Promise<SqlOutcome<LedgerScan>> => {
            if (!(await hasHeader(q, sessionId, runId))) return E.left(notFound(places.run(sessionId, runId)))
            const hash = context.sha256()
            // The prefix digest at the pin, from a copy of the running hash as the pass goes by it.
            let atPin: PrefixDigest | undefined = pin === 0 ? { rows: 0, digest: hash.copy().hex() } : undefined
            let line = 0
            let failed: { readonly thrown: unknown } | undefined
            const reader = makeLedgerRowReader(
              { sessionId, runId },
              (event) => {
                try {
                  onEvent(event)
                } catch (thrown) {
                  failed = { thrown }
                  throw thrown
                }
              },
              { byteLength },
            )
            for (let after = 0; ;) {
              const page = await ledgerTuples(q, sessionId, runId, after)
              try {
                for (const [seq, row] of page) {
                  hash.update(row)
                  hash.update('\n')
                  line += 1
                  if (line === pin) atPin = { rows: line, digest: hash.copy().hex() }
                  reader.add(row)
                  after = seq
                }
              } catch (cause) {
                if (failed !== undefined) return E.left(consumerFailed(places.ledger(sessionId, runId), failed.thrown))
                throw cause
              }
              if (page.length < dialect.pageRows) break
            }
            return E.right(reader.ledgerScan(hash.hex(), atPin))
          })
        },
      ),
    replay: (sessionId, runId, expected, onRows) =>
      sqlTask(
        context,
        () => `replay the ledger of run ${runId} in session ${sessionId}`,
        async (db) => {
          const ids = checkIds(['sessionId', sessionId], ['runId', runId])
          if (E.isLeft(ids)) return ids
          const checked = checkReplayExpectation(expected)
          if (E.isLeft(checked)) return checked
          if (!(await hasHeader(db, sessionId, runId))) return E.left(notFound(places.run(sessionId, runId)))
          const at = places.ledger(sessionId, runId)
          const hash = context.sha256()
          let batch: Array<RuntimeEvent> = []
          // With the fold's row count known, the digest proves these are the rows the fold checked
          // for repeated ids, and those it handed over stop before any: no id is kept (as JSONL's).
          const reader = makeLedgerRowReader(
            { sessionId, runId },
            (event) => {
              batch.push(event)
            },
            expected.rows === undefined
              ? { byteLength }
              : { byteLength, repeatedIds: 'known_absent', keepAtMost: expected.rows },
          )
          let bytes = 0
          let after = 0
          // Page by page, each its own statement: no transaction stays open while the consumer
          // waits. Rows changed between two pages change the digest, which decides at the end. A
          // page read may hold several batches: each ends at `pageRows` rows or `replayPageBytes`.
          while (bytes < expected.committedBytes) {
            const page = await ledgerTuples(db, sessionId, runId, after)
            if (page.length === 0) return E.left(ledgerChanged(at, expected.committedBytes, 'fewer_bytes'))
            let batchRows = 0
            let batchBytes = 0
            for (const [seq, row] of page) {
              const length = byteLength(row)
              bytes += length + 1
              if (bytes > expected.committedBytes) {
                return E.left(ledgerChanged(at, expected.committedBytes, 'different_bytes'))
              }
              hash.update(row)
              hash.update('\n')
              reader.add(row, length)
              after = seq
              if (bytes === expected.committedBytes) break
              batchRows += 1
              batchBytes += length + 1
              if (batchRows >= dialect.pageRows || batchBytes >= dialect.replayPageBytes) {
                const delivered = await deliverBatch(onRows, batch, at)
                batch = []
                if (E.isLeft(delivered)) return delivered
                batchRows = 0
                batchBytes = 0
              }
            }
            const delivered = await deliverBatch(onRows, batch, at)
            batch = []
            if (E.isLeft(delivered)) return delivered
          }
          return replayVerdict(hash.hex(), expected, at)
        },
      ),
    readLastRow: (sessionId, runId) =>
      sqlTask(
        context,
        () => `read the last row of the ledger of run ${runId} in session ${sessionId}`,
        async (db) => {
          const ids = checkIds(['sessionId', sessionId], ['runId', runId])
          if (E.isLeft(ids)) return ids
          const found = await dialect.lastRow(db, sessionId, runId)
          if (E.isLeft(found)) return found
          if (!found.right.run) return E.left(notFound(places.run(sessionId, runId)))
          return E.right(lastRowOf(sessionId, runId, found.right.row))
        },
      ),
  }
}
