/**
 * The store ports over one SQLite database (docs/decisions.md #81). Rows hold the same JSON the
 * JSONL files hold and are decoded with the same codecs on every read; every write is one
 * transaction, committed with an fsync of the WAL. The database opens on the first call, so a
 * missing driver or a database from a newer maka is a `StoreError` of that call, never a throw.
 * The ports are `@maka/stores`' SQL ports (written once for SQLite and PostgreSQL) over this
 * adapter's database and dialect; the owner lock is SQLite's own (decision 116).
 */
import { Buffer } from 'node:buffer'
import { resolve } from 'node:path'
import {
  ioFailed,
  makeSqlClaimStore,
  makeSqlEventStore,
  makeSqlRunStore,
  makeSqlSessionStore,
  makeSqlShellRunStore,
  makeSqlSurveyReader,
  withSubject,
  type SqlStoreContext,
  type StorePorts,
} from '@maka/stores'
import * as E from 'fp-ts/lib/Either.js'
import { openDatabase, type Db } from './database.js'
import { makeSqliteDatabase, sha256, sqliteDialect } from './sqliteDatabase.js'
import { makeSqliteOwnerLockStore, sqliteOwnerLocksOf } from './sqliteOwnerLocks.js'

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

/**
 * Options of `openSqliteStores`.
 * @category models
 */
export interface SqliteStoresOptions {
  /** Create the file when it is missing (default); false: a missing file reads as an empty store. */
  readonly create?: boolean
}

// Every write commits in WAL with `synchronous=FULL`, set when the database opens (`database.ts`):
// a committed row is fsynced before the commit returns (decision 150).
const SQLITE_CAPABILITIES = Object.freeze({ durableAppend: true })

/**
 * Opens the stores of the database `file` (created with its schema on first use). One database per
 * data dir: `<dataDir>/maka.sqlite` is the usual place.
 * @category constructors
 */
export const openSqliteStores = (file: string, options: SqliteStoresOptions = {}): SqliteStores => {
  const path = resolve(file)
  let db: Db | null = null
  let closed = false

  const database = (): Db => {
    if (closed) throw Object.assign(new Error('the store was closed'), { code: 'STORE_CLOSED' })
    db ??= openDatabase(path, options.create ?? true)
    return db
  }
  const sql = makeSqliteDatabase(database)

  const context: SqlStoreContext = {
    location: path,
    // Opened (or refused) before each step, as the first thing a call does.
    database: () => {
      database()
      return Promise.resolve(sql)
    },
    // Anything the driver throws (busy past the timeout, disk full, not a database) is `IoFailed`
    // naming the subject, with SQLite's code as the code.
    failed: (cause, subject) => withSubject(ioFailed('sqlite', path, cause), subject),
    fence: () => E.right(undefined),
    dialect: sqliteDialect,
    sha256,
    byteLength: (text) => Buffer.byteLength(text, 'utf8'),
  }

  return {
    file: path,
    location: path,
    sessions: makeSqlSessionStore(context),
    runs: makeSqlRunStore(context),
    events: makeSqlEventStore(context),
    shellRuns: makeSqlShellRunStore(context),
    claims: makeSqlClaimStore(context),
    ownerLocks: makeSqliteOwnerLockStore(context),
    survey: makeSqlSurveyReader(context, sqliteOwnerLocksOf(context)),
    capabilities: SQLITE_CAPABILITIES,
    close: () => {
      closed = true
      db?.close()
      db = null
      return Promise.resolve()
    },
  }
}
