/**
 * The store `maka chaos --store` puts each iteration's children on (docs/decisions.md #84, #94).
 * Chaos never touches a user's store: the kind is taken from `--store`, the place is always the
 * iteration's own scratch store (`<iteration>/data/maka.sqlite` for SQLite; for PostgreSQL a
 * database `maka_chaos_<hash of the iteration's folder>` created on the given server and dropped
 * with the folder). The checker sees a SQLite or PostgreSQL store through its raw rows, read with
 * plain SQL in the files' shape — a header's JSON, a ledger's rows each ended by a newline, a
 * claim's JSON under `<source>@<high-water>.json`, an owner lock's record — never through the
 * adapter it judges.
 */
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { ClaimFile, DataDirSnapshot, RunFiles } from '@maka/chaos'
import type { StoreSpec } from '../storeChoice.js'

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

const readSqliteSnapshot = async (dataDir: string): Promise<DataDirSnapshot> => {
  const file = join(dataDir, SQLITE_FILE)
  if (!existsSync(file)) return { runs: new Map(), claims: new Map() }
  const { default: Database } = await import('better-sqlite3')
  const db = new Database(file, { readonly: true, timeout: 30_000 })
  try {
    const runs = new Map<string, RunFiles>()
    const headers = db.prepare('SELECT session_id AS s, run_id AS r, header FROM runs ORDER BY s, r').all() as Array<{
      readonly s: string
      readonly r: string
      readonly header: string
    }>
    const rowsOf = db.prepare('SELECT row FROM events WHERE session_id = ? AND run_id = ? ORDER BY seq').pluck()
    for (const { s, r, header } of headers) {
      const rows = rowsOf.all(s, r) as Array<string>
      runs.set(`${s}/${r}`, {
        sessionId: s,
        runId: r,
        header: Buffer.from(header, 'utf8'),
        ledger: rows.length === 0 ? null : Buffer.from(rows.map((row) => `${row}\n`).join(''), 'utf8'),
      })
    }
    const claims = new Map<string, ClaimFile>()
    const claimRows = db
      .prepare('SELECT session_id AS s, source_run_id AS r, high_water AS hw, record FROM claims ORDER BY s, r, hw')
      .all() as Array<{ readonly s: string; readonly r: string; readonly hw: number; readonly record: string }>
    for (const { s, r, hw, record } of claimRows) {
      const name = `${r}@${hw}.json`
      claims.set(`${s}/${name}`, { sessionId: s, name, bytes: Buffer.from(record, 'utf8') })
    }
    const owners = new Map<string, Buffer>()
    const lockRows = db.prepare('SELECT session_id AS s, record FROM owner_locks').all() as Array<{
      readonly s: string
      readonly record: string
    }>
    for (const { s, record } of lockRows) owners.set(s, Buffer.from(record, 'utf8'))
    return { runs, claims, owners }
  } finally {
    db.close()
  }
}

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
      snapshot: readSqliteSnapshot,
    }
  }
  return postgresChaosStore(spec.url)
}

type RawRows = ReadonlyArray<Record<string, unknown>>

// One short-lived connection per use: chaos judges the store between phases, never during them.
const onDatabase = async <A>(url: string, body: (query: (sql: string) => Promise<RawRows>) => Promise<A>) => {
  const { default: pg } = await import('pg')
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 })
  client.on('error', () => undefined)
  await client.connect()
  try {
    return await body(async (sql) => (await client.query(sql)).rows as RawRows)
  } finally {
    await client.end()
  }
}

const readPostgresSnapshot = async (url: string): Promise<DataDirSnapshot> =>
  onDatabase(url, async (query) => {
    const runs = new Map<string, RunFiles>()
    const claims = new Map<string, ClaimFile>()
    // A database no child has opened yet has no tables: an empty store.
    const tables = await query("SELECT to_regclass('runs') IS NOT NULL AS ready")
    if (tables[0]?.['ready'] !== true) return { runs, claims }
    const rows = new Map<string, Array<string>>()
    for (const r of await query('SELECT session_id, run_id, row FROM events ORDER BY session_id, run_id, seq')) {
      const key = `${String(r['session_id'])}/${String(r['run_id'])}`
      rows.set(key, [...(rows.get(key) ?? []), String(r['row'])])
    }
    for (const h of await query('SELECT session_id, run_id, header FROM runs ORDER BY session_id, run_id')) {
      const [s, r] = [String(h['session_id']), String(h['run_id'])]
      const ledger = rows.get(`${s}/${r}`)
      runs.set(`${s}/${r}`, {
        sessionId: s,
        runId: r,
        header: Buffer.from(String(h['header']), 'utf8'),
        ledger: ledger === undefined ? null : Buffer.from(ledger.map((row) => `${row}\n`).join(''), 'utf8'),
      })
    }
    for (const c of await query('SELECT session_id, source_run_id, high_water, record FROM claims')) {
      const name = `${String(c['source_run_id'])}@${String(c['high_water'])}.json`
      const s = String(c['session_id'])
      claims.set(`${s}/${name}`, { sessionId: s, name, bytes: Buffer.from(String(c['record']), 'utf8') })
    }
    // A row here outlives its owner's connection (the server's advisory lock is what counts), so after
    // a SIGKILL it is exactly the dead owner's lock a storm races over.
    const owners = new Map<string, Buffer>()
    for (const o of await query('SELECT session_id, record FROM owner_locks')) {
      owners.set(String(o['session_id']), Buffer.from(String(o['record']), 'utf8'))
    }
    return { runs, claims, owners }
  })

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
    prepare: (dataDir) =>
      onDatabase(url, async (query) => {
        await query(`DROP DATABASE IF EXISTS ${databaseOf(dataDir)} WITH (FORCE)`)
        await query(`CREATE DATABASE ${databaseOf(dataDir)}`)
      }),
    dispose: (dataDir) =>
      onDatabase(url, async (query) => {
        await query(`DROP DATABASE IF EXISTS ${databaseOf(dataDir)} WITH (FORCE)`)
      }),
  }
}
