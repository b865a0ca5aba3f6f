/**
 * The store `maka chaos --store` puts each iteration's children on (docs/decisions.md #84, #94).
 * Chaos never touches a user's store: the kind is taken from `--store`, the place is always the
 * iteration's own scratch store (`<iteration>/data/maka.sqlite` for SQLite; for PostgreSQL a
 * database `maka_chaos_<hash of the iteration's folder>` created on the given server and dropped
 * with the folder). This module only chooses: the store kind, the children's arguments, the
 * scratch database's name. The checker sees a SQLite or PostgreSQL store through its raw rows, read
 * by `@maka/chaos` with plain SQL in the files' shape, never through the adapter it judges; the CLI
 * hands it better-sqlite3, which it ships for its own SQLite store.
 */
import { createHash } from 'node:crypto'
import { join } from 'node:path'
import {
  type DataDirSnapshot,
  dropScratchDatabase,
  readPostgresSnapshot,
  readSqliteSnapshot,
  recreateScratchDatabase,
} from '@maka/chaos'
import type { StoreSpec } from '../storeChoice.js'
import { SQLITE_DRIVER, loadOptional } from '../optionalPackage.js'

/**
 * How the children of one chaos run reach their store, and how the checker reads it.
 * @category models
 */
export interface ChaosStore {
  readonly kind: 'jsonl' | 'sqlite' | 'postgres'
  /** The CLI arguments that put a child on the iteration's store. */
  readonly argsFor: (dataDir: string) => ReadonlyArray<string>
  /** `--store` for an in-process runtime over the iteration's store, or null for `--data-dir`. */
  readonly storeOf: (dataDir: string) => string | null
  readonly snapshot?: (dataDir: string) => Promise<DataDirSnapshot>
  /** Variables every child needs besides its arguments (a password kept off the command line). */
  readonly env?: NodeJS.ProcessEnv
  readonly prepare?: (dataDir: string) => Promise<void>
  readonly dispose?: (dataDir: string) => Promise<void>
}

const SQLITE_FILE = 'maka.sqlite'

/**
 * The chaos store for a `--store` choice (null: the JSONL files of each iteration's data dir).
 * @category constructors
 */
export const chaosStoreFor = (spec: StoreSpec | null): ChaosStore => {
  if (spec === null || spec.kind === 'jsonl') {
    return { kind: 'jsonl', argsFor: (dataDir) => ['--data-dir', dataDir], storeOf: () => null }
  }
  if (spec.kind === 'sqlite') {
    const storeOf = (dataDir: string) => `sqlite:${join(dataDir, SQLITE_FILE)}`
    return {
      kind: 'sqlite',
      argsFor: (dataDir) => ['--data-dir', dataDir, '--store', storeOf(dataDir)],
      storeOf,
      snapshot: async (dataDir) => {
        const { default: Database } = await loadOptional(SQLITE_DRIVER, () => import('better-sqlite3'))
        return readSqliteSnapshot(join(dataDir, SQLITE_FILE), (file, options) => new Database(file, options))
      },
    }
  }
  return postgresChaosStore(spec.url)
}

/**
 * Chaos over a PostgreSQL server: each iteration gets its own database there (the URL's user needs
 * CREATEDB), named by a hash of the iteration's folder. The children get the URL without its
 * password, which travels in `PGPASSWORD` instead, so it never shows in a process listing.
 * @category constructors
 */
export const postgresChaosStore = (url: string): ChaosStore => {
  const admin = new URL(url)
  const password = decodeURIComponent(admin.password)
  const databaseOf = (dataDir: string) =>
    `maka_chaos_${createHash('sha256').update(dataDir).digest('hex').slice(0, 20)}`
  const urlOf = (dataDir: string, withPassword: boolean) => {
    const at = new URL(url)
    at.pathname = `/${databaseOf(dataDir)}`
    if (!withPassword) at.password = ''
    return at.toString()
  }
  return {
    kind: 'postgres',
    argsFor: (dataDir) => ['--data-dir', dataDir, '--store', urlOf(dataDir, false)],
    storeOf: (dataDir) => urlOf(dataDir, true),
    snapshot: (dataDir) => readPostgresSnapshot(urlOf(dataDir, true)),
    ...(password === '' ? {} : { env: { PGPASSWORD: password } }),
    prepare: (dataDir) => recreateScratchDatabase(url, databaseOf(dataDir)),
    dispose: (dataDir) => dropScratchDatabase(url, databaseOf(dataDir)),
  }
}
