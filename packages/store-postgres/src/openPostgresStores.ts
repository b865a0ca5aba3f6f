/**
 * The store ports over one PostgreSQL database shared by several hosts (docs/decisions.md #89–#93).
 * Rows hold the same JSON the JSONL files hold and are decoded with the same codecs on every read;
 * every write is one transaction. Ownership of a session is a session-scoped advisory lock held on
 * one dedicated connection per instance, so the server itself releases it when the owning process
 * dies and its connection drops; the `owner_locks` row says which host holds it, and counts only
 * while that lock is held. The pool connects on the first call, so an unreachable server or a
 * database from a newer maka is a `StoreError` of that call, never a throw. The ports are
 * `@maka/stores`' SQL ports (written once for SQLite and PostgreSQL) over this adapter's pool and
 * dialect; ownership is this adapter's own (`postgresOwnerLocks.ts`, decision 116).
 */
import { Buffer } from 'node:buffer'
import { hostname } from 'node:os'
import {
  ioFailed,
  makeSqlClaimStore,
  makeSqlEventStore,
  makeSqlRunStore,
  makeSqlSessionStore,
  makeSqlShellRunStore,
  makeSqlSurveyReader,
  withSubject,
  type SqlDatabase,
  type SqlStoreContext,
  type StoreCapabilities,
  type StorePorts,
} from '@maka/stores'
import pg from 'pg'
import { migrate, parseTarget, redactError, type Target } from './database.js'
import { isDurableCommit, readCommitSettings } from './durability.js'
import {
  makeOwnConnection,
  makePostgresDatabase,
  postgresDialect,
  sha256,
  type OwnConnection,
} from './postgresDatabase.js'
import { makePostgresOwnerLockStore, makePostgresOwnership, postgresOwnerLocksOf } from './postgresOwnerLocks.js'

/**
 * The PostgreSQL stores: the ports plus what this instance holds.
 * @category models
 */
export interface PostgresStores extends StorePorts {
  /** The host id recorded with every owner lock this instance takes. */
  readonly hostId: string
  /**
   * Connects (the pool and the writes' own connection) and brings the schema up to date now, rather
   * than at the first call, and reads the server's `synchronous_commit` and `fsync` for
   * `capabilities.durableAppend`; rejects with an error whose words hold no secret of the URL and
   * whose `code` is the SQLSTATE or errno.
   */
  readonly ready: () => Promise<void>
  /**
   * Ends the pool, the writes' connection and the lock connection (releasing every session it
   * holds); later calls are `IoFailed`.
   */
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
  /**
   * Report `capabilities.durableAppend` true whatever the server's settings, without asking it: for
   * a scratch test cluster that runs with `fsync = off`, where crashes kill clients, never the server.
   * Never for a store that holds real work.
   */
  readonly assumeDurable?: boolean
}

/**
 * The host id of this process: `MAKA_HOST_ID` when set, else the machine's hostname.
 * @category constructors
 */
export const currentHostId = (env: NodeJS.ProcessEnv = process.env): string => {
  const fromEnv = env['MAKA_HOST_ID']?.trim()
  return fromEnv !== undefined && fromEnv !== '' ? fromEnv : hostname()
}

/**
 * Opens the stores of the database at `url` (its schema created or migrated on first use). The
 * URL is kept inside: `location` and every error name the database and host only.
 * @category constructors
 */
export const openPostgresStores = (url: string, options: PostgresStoresOptions = {}): PostgresStores => {
  const target: Target = parseTarget(url)
  const hostId = options.hostId ?? currentHostId()
  let pool: pg.Pool | null = null
  let writer: OwnConnection | null = null
  let ready: Promise<SqlDatabase> | null = null
  let closed = false
  const ownership = makePostgresOwnership(target, () => closed)
  // Decided when the store opens, from the server's settings (false until then), or assumed.
  const assumed = options.assumeDurable === true
  let durable = assumed
  const capabilities: StoreCapabilities = {
    get durableAppend() {
      return durable
    },
  }

  const closedError = () => Object.assign(new Error('the store was closed'), { code: 'STORE_CLOSED' })

  const database = (): Promise<SqlDatabase> => {
    if (closed) return Promise.reject(closedError())
    ready ??= (async () => {
      const created = new pg.Pool({ ...target.config, max: options.poolSize ?? 4 })
      // An idle connection the server drops must not crash the process: the next query reconnects.
      created.on('error', () => undefined)
      pool = created
      // The writes' own connection is made beside the migration, not at the first write: a write
      // that must follow another at once (an owner lock's row after its lock, which racing hosts
      // wait for) never waits for a connect.
      const ownConnection = makeOwnConnection(() => new pg.Client(target.config))
      try {
        await Promise.all([
          (async () => {
            await migrate(created)
            if (!assumed) durable = isDurableCommit(await readCommitSettings(created))
          })(),
          ownConnection.open(),
        ])
        writer = ownConnection
        return makePostgresDatabase(created, ownConnection)
      } catch (cause) {
        ready = null
        pool = null
        durable = assumed
        await ownConnection.end()
        await created.end().catch(() => undefined)
        throw cause
      }
    })()
    return ready
  }

  const context: SqlStoreContext = {
    location: target.location,
    database,
    failed: (cause, subject) => withSubject(ioFailed('postgres', target.location, redactError(target, cause)), subject),
    fence: ownership.fence,
    dialect: postgresDialect,
    sha256,
    byteLength: (text) => Buffer.byteLength(text, 'utf8'),
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
    sessions: makeSqlSessionStore(context),
    runs: makeSqlRunStore(context),
    events: makeSqlEventStore(context),
    shellRuns: makeSqlShellRunStore(context),
    claims: makeSqlClaimStore(context),
    ownerLocks: makePostgresOwnerLockStore(context, ownership, hostId),
    survey: makeSqlSurveyReader(context, postgresOwnerLocksOf(context)),
    capabilities,
    close: async () => {
      closed = true
      await ownership.close()
      const toEnd = pool
      const ownConnection = writer
      pool = null
      writer = null
      ready = null
      await ownConnection?.end()
      await toEnd?.end().catch(() => undefined)
    },
  }
}
