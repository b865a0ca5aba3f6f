/**
 * The raw rows of a SQLite or PostgreSQL store, as the invariant checker sees them: read with plain
 * SQL in the files' shape — a header's JSON, a ledger's rows each ended by a newline, a claim's JSON
 * under `<source>@<high-water>.json`, an owner lock's record — never through the adapter it judges
 * (the same rule as `readDataDir` for the JSONL files). Also the scratch database an iteration's
 * children share on a PostgreSQL server, made before the iteration and dropped with its folder.
 *
 * better-sqlite3 is a native addon: the host that chose a SQLite store already ships it and hands
 * the reader its constructor, so `checkInvariants` does not make every consumer compile it. pg is
 * plain JavaScript and a dependency of this package, loaded only when a PostgreSQL store is read.
 */
import { existsSync } from 'node:fs'
import type { ClaimFile, DataDirSnapshot, RunFiles } from './DataDirSnapshot.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * The part of a better-sqlite3 statement the reader uses.
 * @category models
 */
export interface SqliteStatementLike {
  all(...params: Array<unknown>): Array<unknown>
  pluck(): SqliteStatementLike
}

/**
 * The part of a better-sqlite3 database the reader uses.
 * @category models
 */
export interface SqliteDatabaseLike {
  prepare(sql: string): SqliteStatementLike
  close(): unknown
}

/**
 * Opens a SQLite file the way the reader asks (`(file, options) => new Database(file, options)`).
 * @category models
 */
export type OpenSqlite = (
  file: string,
  options: { readonly readonly: true; readonly timeout: number },
) => SqliteDatabaseLike

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Reads every run, claim and owner lock of a SQLite store file; a file that does not exist yet, or
 * has no tables yet, is an empty store.
 * @category constructors
 */
export const readSqliteSnapshot = (file: string, open: OpenSqlite): DataDirSnapshot => {
  if (!existsSync(file)) return { runs: new Map(), claims: new Map() }
  const db = open(file, { readonly: true, timeout: 30_000 })
  try {
    // A process killed in its start-up may leave the file created and its schema not yet committed:
    // that store is still empty.
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'runs'").all()
    if (tables.length === 0) return { runs: new Map(), claims: new Map() }
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

/**
 * Reads every run, claim and owner lock of the PostgreSQL database at `url`; a database no child
 * has opened yet has no tables and is an empty store.
 * @category constructors
 */
export const readPostgresSnapshot = async (url: string): Promise<DataDirSnapshot> =>
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

// The name goes into SQL unquoted: only a plain lower-case identifier is accepted.
const identifier = (database: string): string => {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(database)) throw new Error(`not a plain database name: ${database}`)
  return database
}

/**
 * Drops `database` on the server at `serverUrl` if it exists (its connections too), then creates
 * it empty. The URL's user needs CREATEDB.
 * @category constructors
 */
export const recreateScratchDatabase = (serverUrl: string, database: string): Promise<void> =>
  onDatabase(serverUrl, async (query) => {
    await query(`DROP DATABASE IF EXISTS ${identifier(database)} WITH (FORCE)`)
    await query(`CREATE DATABASE ${identifier(database)}`)
  })

/**
 * Drops `database` on the server at `serverUrl` if it exists (its connections too).
 * @category constructors
 */
export const dropScratchDatabase = (serverUrl: string, database: string): Promise<void> =>
  onDatabase(serverUrl, async (query) => {
    await query(`DROP DATABASE IF EXISTS ${identifier(database)} WITH (FORCE)`)
  })
