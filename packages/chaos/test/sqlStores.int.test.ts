/**
 * The raw-row readers of the SQL stores: the same runs, ledgers, claims and owner locks written as
 * JSONL files and as rows (plain SQL, the adapters' table shapes) read back as the same snapshot, so
 * the checker judges a SQLite or PostgreSQL store exactly as it judges a data dir. A store not yet
 * opened is empty; the scratch database is made empty and dropped.
 */
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import pg from 'pg'
import { afterAll, describe, expect, inject, it } from 'vitest'
import {
  type DataDirSnapshot,
  dropScratchDatabase,
  readDataDir,
  readPostgresSnapshot,
  readSqliteSnapshot,
  recreateScratchDatabase,
} from '../src/index.js'

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string
  }
}

const roots: Array<string> = []
afterAll(async () => {
  await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })))
})

const scratch = async (): Promise<string> => {
  const root = await mkdtemp(join(tmpdir(), 'maka-chaos-sql-'))
  roots.push(root)
  return root
}

const header = (runId: string) => JSON.stringify({ runId, status: 'failed', failureClass: 'app_restarted' })
const row = (runId: string, seq: number) => JSON.stringify({ runId, seq, role: 'model' })

/** Two sessions: runs with ledgers, a run without rows, a claim, an owner lock. */
const CONTENT = {
  runs: [
    { s: 'chaos-1', r: 'run-a', header: header('run-a'), rows: [row('run-a', 1), row('run-a', 2), row('run-a', 3)] },
    { s: 'chaos-1', r: 'run-b', header: header('run-b'), rows: [row('run-b', 1)] },
    { s: 'chaos-2', r: 'run-c', header: header('run-c'), rows: [] },
  ],
  claims: [{ s: 'chaos-1', r: 'run-a', hw: 3, record: JSON.stringify({ targetRunId: 'run-b' }) }],
  owners: [{ s: 'chaos-1', record: JSON.stringify({ pid: 4242, host: 'h' }) }],
} as const

const writeFiles = async (dataDir: string): Promise<void> => {
  for (const { s, r, header: h, rows } of CONTENT.runs) {
    const dir = join(dataDir, 'sessions', s, 'runs', r)
    await mkdir(dir, { recursive: true })
    await writeFile(join(dir, 'run.json'), h)
    if (rows.length > 0) await writeFile(join(dir, 'runtime-events.jsonl'), rows.map((x) => `${x}\n`).join(''))
  }
  for (const { s, r, hw, record } of CONTENT.claims) {
    await mkdir(join(dataDir, 'sessions', s, 'claims'), { recursive: true })
    await writeFile(join(dataDir, 'sessions', s, 'claims', `${r}@${hw}.json`), record)
  }
  for (const { s, record } of CONTENT.owners) await writeFile(join(dataDir, 'sessions', s, 'owner.lock'), record)
}

const TABLES = [
  'CREATE TABLE runs (session_id TEXT NOT NULL, run_id TEXT NOT NULL, header TEXT NOT NULL, PRIMARY KEY (session_id, run_id))',
  'CREATE TABLE events (session_id TEXT NOT NULL, run_id TEXT NOT NULL, seq INTEGER NOT NULL, row TEXT NOT NULL, PRIMARY KEY (session_id, run_id, seq))',
  'CREATE TABLE claims (session_id TEXT NOT NULL, source_run_id TEXT NOT NULL, high_water INTEGER NOT NULL, record TEXT NOT NULL)',
  'CREATE TABLE owner_locks (session_id TEXT PRIMARY KEY, record TEXT NOT NULL)',
]

/** The same content as rows, inserted in an order unlike the files' so the readers must sort. */
const inserts = (): ReadonlyArray<readonly [string, ReadonlyArray<unknown>]> => [
  ...[...CONTENT.runs]
    .reverse()
    .flatMap(({ s, r, header: h, rows }) => [
      ['INSERT INTO runs VALUES ($1, $2, $3)', [s, r, h]] as const,
      ...rows.map((x, i) => ['INSERT INTO events VALUES ($1, $2, $3, $4)', [s, r, i + 1, x]] as const).reverse(),
    ]),
  ...CONTENT.claims.map(
    ({ s, r, hw, record }) => ['INSERT INTO claims VALUES ($1, $2, $3, $4)', [s, r, hw, record]] as const,
  ),
  ...CONTENT.owners.map(({ s, record }) => ['INSERT INTO owner_locks VALUES ($1, $2)', [s, record]] as const),
]

const asData = (snapshot: DataDirSnapshot) => ({
  runs: [...snapshot.runs.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, run]) => [
      key,
      run.sessionId,
      run.runId,
      run.header?.toString('utf8'),
      run.ledger?.toString('utf8') ?? null,
    ]),
  claims: [...snapshot.claims.entries()].map(([key, c]) => [key, c.sessionId, c.name, c.bytes.toString('utf8')]),
  owners: [...(snapshot.owners ?? new Map<string, Buffer>()).entries()].map(([s, b]) => [s, b.toString('utf8')]),
})

const openSqlite = (file: string, options: { readonly readonly: true; readonly timeout: number }) =>
  new Database(file, options)

describe('readSqliteSnapshot', () => {
  describe('when the store file does not exist yet', () => {
    it('is an empty store and creates no file', async () => {
      const file = join(await scratch(), 'maka.sqlite')
      const snapshot = readSqliteSnapshot(file, openSqlite)
      expect(snapshot.runs.size).toBe(0)
      expect(snapshot.claims.size).toBe(0)
      expect(existsSync(file)).toBe(false)
    })
  })

  describe('when the store file exists but has no tables yet (its opener was killed before the schema)', () => {
    it('is an empty store', async () => {
      const file = join(await scratch(), 'maka.sqlite')
      new Database(file).close()
      const snapshot = readSqliteSnapshot(file, openSqlite)
      expect(snapshot.runs.size).toBe(0)
      expect(snapshot.claims.size).toBe(0)
    })
  })

  describe('when the store holds runs, rows, claims and locks', () => {
    it('reads them in the files’ shape: the snapshot of the same data dir', async () => {
      const root = await scratch()
      await writeFiles(join(root, 'data'))
      const file = join(root, 'maka.sqlite')
      const db = new Database(file)
      for (const table of TABLES) db.exec(table)
      for (const [sql, params] of inserts()) db.prepare(sql.replaceAll(/\$\d/g, '?')).run(...params)
      db.close()
      const fromRows = readSqliteSnapshot(file, openSqlite)
      expect(asData(fromRows)).toEqual(asData(await readDataDir(join(root, 'data'))))
      expect(asData(fromRows).runs).toHaveLength(3)
    })
  })
})

const query = async (url: string, sql: string, params: ReadonlyArray<unknown> = []) => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query(sql, [...params])).rows as Array<Record<string, unknown>>
  } finally {
    await client.end()
  }
}

const databaseUrl = (name: string): string => {
  const url = new URL(inject('postgresUrl'))
  url.pathname = `/${name}`
  return url.toString()
}

const exists = async (name: string): Promise<boolean> =>
  (await query(inject('postgresUrl'), 'SELECT 1 FROM pg_database WHERE datname = $1', [name])).length === 1

describe('readPostgresSnapshot', () => {
  const name = `maka_chaos_test_${process.pid}`
  afterAll(() => dropScratchDatabase(inject('postgresUrl'), name))

  describe('when the scratch database was just made', () => {
    it('is an empty store', async () => {
      await recreateScratchDatabase(inject('postgresUrl'), name)
      const snapshot = await readPostgresSnapshot(databaseUrl(name))
      expect(snapshot.runs.size).toBe(0)
      expect(snapshot.claims.size).toBe(0)
    })
  })

  describe('when the store file exists but has no tables yet (its opener was killed before the schema)', () => {
    it('is an empty store', async () => {
      const file = join(await scratch(), 'maka.sqlite')
      new Database(file).close()
      const snapshot = readSqliteSnapshot(file, openSqlite)
      expect(snapshot.runs.size).toBe(0)
      expect(snapshot.claims.size).toBe(0)
    })
  })

  describe('when the store holds runs, rows, claims and locks', () => {
    it('reads them in the files’ shape: the snapshot of the same data dir', async () => {
      const root = await scratch()
      await writeFiles(join(root, 'data'))
      await recreateScratchDatabase(inject('postgresUrl'), name)
      for (const table of TABLES) await query(databaseUrl(name), table)
      for (const [sql, params] of inserts()) await query(databaseUrl(name), sql, params)
      const fromRows = await readPostgresSnapshot(databaseUrl(name))
      expect(asData(fromRows)).toEqual(asData(await readDataDir(join(root, 'data'))))
      expect(asData(fromRows).runs).toHaveLength(3)
    })
  })

  describe('when the scratch database is made again and dropped', () => {
    it('holds nothing of before, then is gone; a name that is not a plain identifier is refused', async () => {
      await recreateScratchDatabase(inject('postgresUrl'), name)
      expect((await readPostgresSnapshot(databaseUrl(name))).runs.size).toBe(0)
      await dropScratchDatabase(inject('postgresUrl'), name)
      expect(await exists(name)).toBe(false)
      await expect(recreateScratchDatabase(inject('postgresUrl'), 'x; DROP DATABASE postgres')).rejects.toThrow(
        'not a plain database name',
      )
    })
  })
})
