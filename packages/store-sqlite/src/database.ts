/**
 * Opening the database: WAL with `synchronous=FULL` (the WAL default, NORMAL, does not fsync each
 * commit, so an acknowledged durable row could vanish in a power cut), a busy timeout long enough
 * for several processes on a loaded machine, and the schema brought up to date.
 */
import { chmodSync, existsSync, mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import Database from 'better-sqlite3'
import { MIGRATIONS, SCHEMA_VERSION } from './schema.js'

/**
 * An open database handle.
 * @category models
 */
export type Db = Database.Database

/**
 * Why a database cannot be used: it was written by a newer maka (its schema version is unknown here).
 * @category errors
 */
export class SchemaTooNew extends Error {
  readonly code = 'SCHEMA_TOO_NEW'
  constructor(readonly found: number) {
    super(`database schema version ${found} is newer than this maka understands (${SCHEMA_VERSION})`)
  }
}

// Several processes share one file; a writer waits this long for another's transaction to end.
const BUSY_TIMEOUT_MS = 30_000

/**
 * Opens and migrates the database at `file`. A missing file is created, unless `create` is false:
 * then an empty in-memory database stands in, so a read of a store that does not exist yet sees no
 * sessions and leaves nothing behind.
 * @category constructors
 */
export const openDatabase = (file: string, create = true): Db => {
  if (!create && !existsSync(file)) {
    const empty = new Database(':memory:')
    migrate(empty)
    return empty
  }
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 })
  const db = new Database(file, { timeout: BUSY_TIMEOUT_MS })
  try {
    // Prompts and tool results live here: owner-only, like the ledger files. SQLite gives the -wal
    // and -shm files the database file's mode, so set it before WAL makes them.
    chmodSync(file, 0o600)
    db.pragma('journal_mode = WAL')
    db.pragma('synchronous = FULL')
    db.pragma('foreign_keys = ON')
    migrate(db)
    return db
  } catch (cause) {
    db.close()
    throw cause
  }
}

const migrate = (db: Db): void => {
  const version = (): number => db.pragma('user_version', { simple: true }) as number
  const found = version()
  if (found > SCHEMA_VERSION) throw new SchemaTooNew(found)
  for (let next = found; next < SCHEMA_VERSION; next += 1) {
    // IMMEDIATE: two processes opening a fresh file at once must not both run a migration.
    db.transaction(() => {
      if (version() !== next) return
      db.exec(MIGRATIONS[next]!)
      db.pragma(`user_version = ${next + 1}`)
    }).immediate()
  }
}
