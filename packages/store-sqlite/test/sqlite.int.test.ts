/**
 * What the SQLite stores do beyond the conformance suite: the versioned schema, file modes, a read
 * that must not create the database, stored records that no longer decode, and the per-ledger
 * uniqueness of event ids, the pragmas a durable append rests on, and a fold (with the prefix digest
 * at a pin) and replay of a ledger longer than one page.
 */
import { createHash } from 'node:crypto'
import { existsSync, statSync } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { claimAndHeader, conformanceRows, runIdentity } from '@maka/store-conformance'
import Database from 'better-sqlite3'
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest'
import { openDatabase } from '../src/database.js'
import { openSqliteStores, SCHEMA_VERSION, type SqliteStores } from '../src/index.js'

const dirs: Array<string> = []
const open: Array<SqliteStores> = []
afterEach(async () => {
  for (const stores of open.splice(0)) await stores.close()
})
afterAll(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})

const freshFile = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'maka-sqlite-'))
  dirs.push(dir)
  return join(dir, 'data', 'maka.sqlite')
}
const stores = (file: string, options?: { create?: boolean }) => {
  const s = openSqliteStores(file, options)
  open.push(s)
  return s
}
const AT = '2026-01-02T03:04:05.678Z'
const S = 'session-1'
const header = {
  runId: 'run-1',
  sessionId: S,
  turnId: 'turn-1',
  invocationId: 'invocation-1',
  status: 'created',
  cwd: '/work/project',
  providerId: 'provider',
  modelId: 'model',
  createdAt: AT,
  updatedAt: AT,
} as never
const rawDb = (file: string, run: (db: Database.Database) => void) => {
  const db = new Database(file)
  try {
    run(db)
  } finally {
    db.close()
  }
}

describe('the SQLite database', () => {
  it('is created on first use with the current schema version, WAL and owner-only modes', async () => {
    const file = await freshFile()
    expect(await stores(file).sessions.list()()).toEqual({ _tag: 'Right', right: [] })
    rawDb(file, (db) => {
      expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION)
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal')
    })
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(statSync(join(file, '..')).mode & 0o777).toBe(0o700)
  })

  // What `capabilities.durableAppend: true` rests on: every commit of the store's connection is
  // fsynced before it returns. WAL's default, NORMAL (1), fsyncs only at checkpoints.
  it('is opened in WAL with synchronous=FULL, so the store says a durable append is durable', async () => {
    const file = await freshFile()
    const db = openDatabase(file)
    try {
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal')
      expect(db.pragma('synchronous', { simple: true })).toBe(2)
    } finally {
      db.close()
    }
    const s = stores(file)
    expect(s.capabilities).toEqual({ durableAppend: true })
    expect(await s.sessions.list()()).toEqual({ _tag: 'Right', right: [] })
    expect(s.capabilities.durableAppend).toBe(true)
  })

  it('refuses a database written by a newer schema, changing nothing', async () => {
    const file = await freshFile()
    await stores(file).sessions.list()()
    await open.pop()!.close()
    rawDb(file, (db) => db.pragma(`user_version = ${SCHEMA_VERSION + 1}`))
    const result = await stores(file).sessions.list()()
    expect(result).toMatchObject({ _tag: 'Left', left: { _tag: 'IoFailed', code: 'SCHEMA_TOO_NEW' } })
    rawDb(file, (db) => expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION + 1))
  })

  it('is IoFailed, not a throw, when the file is not a database', async () => {
    const file = await freshFile()
    await mkdir(dirname(file), { recursive: true })
    await writeFile(file, 'this is not a database, just text long enough to have a header page')
    const result = await stores(file).sessions.list()()
    expect(result).toMatchObject({ _tag: 'Left', left: { _tag: 'IoFailed', code: 'SQLITE_NOTADB' } })
  })

  it('with create: false reads a missing file as an empty store and leaves no file behind', async () => {
    const file = await freshFile()
    const s = stores(file, { create: false })
    expect(await s.sessions.list()()).toEqual({ _tag: 'Right', right: [] })
    expect(await s.sessions.read(S)()).toMatchObject({ _tag: 'Left', left: { _tag: 'NotFound' } })
    expect(existsSync(file)).toBe(false)
  })
})

describe('an append (decision 170)', () => {
  it('compiles no statement once the instance has appended to the run, and takes one statement', async () => {
    const file = await freshFile()
    const s = stores(file)
    await s.runs.create(header)()
    const rows = conformanceRows(S, 1, 6)
    expect(await s.events.append(S, 'run-1', rows[0]!)()).toEqual({ _tag: 'Right', right: { highWater: 1 } })
    expect(await s.events.append(S, 'run-1', rows[1]!)()).toEqual({ _tag: 'Right', right: { highWater: 2 } })
    const prepare = vi.spyOn(Database.prototype, 'prepare')
    const exec = vi.spyOn(Database.prototype, 'exec')
    try {
      for (const [i, row] of rows.slice(2).entries()) {
        const pinned = i % 2 === 0 ? { expectedHighWater: i + 2 } : {}
        expect(await s.events.append(S, 'run-1', row, pinned)()).toEqual({ _tag: 'Right', right: { highWater: i + 3 } })
      }
      expect(prepare).not.toHaveBeenCalled()
      // No BEGIN or COMMIT: each append is one statement, its own transaction.
      expect(exec).not.toHaveBeenCalled()
    } finally {
      prepare.mockRestore()
      exec.mockRestore()
    }
    const read = await s.events.read(S, 'run-1')()
    expect(read._tag === 'Right' && read.right.events).toEqual(rows)
  })

  it('takes the checking append when another instance wrote since, and refuses a stale pin', async () => {
    const file = await freshFile()
    const mine = stores(file)
    const theirs = stores(file)
    await mine.runs.create(header)()
    const rows = conformanceRows(S, 1, 4)
    await mine.events.append(S, 'run-1', rows[0]!)()
    await theirs.events.append(S, 'run-1', rows[1]!)()
    const stale = await mine.events.append(S, 'run-1', rows[2]!, { expectedHighWater: 1 })()
    expect(stale._tag === 'Left' && stale.left._tag).toBe('HighWaterConflict')
    expect(await mine.events.append(S, 'run-1', rows[2]!)()).toEqual({ _tag: 'Right', right: { highWater: 3 } })
    expect(await theirs.events.append(S, 'run-1', rows[3]!, { expectedHighWater: 3 })()).toEqual({
      _tag: 'Right',
      right: { highWater: 4 },
    })
    const read = await mine.events.read(S, 'run-1')()
    expect(read._tag === 'Right' && read.right.events).toEqual(rows)
  })
})

describe('the first append of a new run (decision 301)', () => {
  it('is one statement with no transaction around it, and a ledger with rows is checked first', async () => {
    const file = await freshFile()
    const s = stores(file)
    await s.runs.create(header)()
    const rows = conformanceRows(S, 1, 3)
    const statement = Object.getPrototypeOf(new Database(':memory:').prepare('SELECT 1')) as Database.Statement
    const run = vi.spyOn(statement, 'run')
    const exec = vi.spyOn(Database.prototype, 'exec')
    try {
      expect(await s.events.append(S, 'run-1', rows[0]!)()).toEqual({ _tag: 'Right', right: { highWater: 1 } })
      expect(run).toHaveBeenCalledTimes(1)
      expect(exec).not.toHaveBeenCalled()
    } finally {
      run.mockRestore()
      exec.mockRestore()
    }
    // Another instance has not seen these rows: it checks them before its first append lands.
    const other = stores(file)
    const stale = await other.events.append(S, 'run-1', rows[1]!, { expectedHighWater: 0 })()
    expect(stale._tag === 'Left' && stale.left._tag).toBe('HighWaterConflict')
    const repeated = await other.events.append(S, 'run-1', rows[0]!)()
    expect(repeated._tag === 'Left' && repeated.left._tag).toBe('InvalidRecord')
    expect(await other.events.append(S, 'run-1', rows[1]!)()).toEqual({ _tag: 'Right', right: { highWater: 2 } })
    expect(await stores(file).events.append(S, 'run-1', rows[2]!, { expectedHighWater: 2 })()).toEqual({
      _tag: 'Right',
      right: { highWater: 3 },
    })
    const read = await s.events.read(S, 'run-1')()
    expect(read._tag === 'Right' && read.right.events).toEqual(rows)
  })
})

describe('a claim (decision 302)', () => {
  // Run `target` claims run-1's boundary at `highWater`.
  const claimOf = (highWater: number, target: string) =>
    claimAndHeader(runIdentity(S, 1), highWater, {
      sessionId: S,
      runId: target,
      invocationId: `invocation-${target}`,
      turnId: `turn-${target}`,
    })

  it('is one transaction of inserts that reads nothing and compiles nothing once warm', async () => {
    const file = await freshFile()
    const s = stores(file)
    await s.runs.create(header)()
    const warm = claimOf(0, 'run-2')
    expect(await s.claims.claimBoundary(warm.claim, warm.header)()).toEqual({ _tag: 'Right', right: undefined })
    const warmRefusal = claimOf(5, 'run-2')
    expect((await s.claims.claimBoundary(warmRefusal.claim, warmRefusal.header)())._tag).toBe('Left')
    const statement = Object.getPrototypeOf(new Database(':memory:').prepare('SELECT 1')) as Database.Statement
    const spies = [
      vi.spyOn(Database.prototype, 'prepare'),
      vi.spyOn(Database.prototype, 'exec'),
      vi.spyOn(statement, 'get'),
      vi.spyOn(statement, 'all'),
    ]
    try {
      const next = claimOf(1, 'run-3')
      expect(await s.claims.claimBoundary(next.claim, next.header)()).toEqual({ _tag: 'Right', right: undefined })
      // A target run that exists refuses the claim, and the claim's row goes with the transaction.
      const taken = claimOf(2, 'run-2')
      const refused = await s.claims.claimBoundary(taken.claim, taken.header)()
      expect(refused._tag === 'Left' && refused.left._tag).toBe('RunAlreadyExists')
      for (const spy of spies) expect(spy).not.toHaveBeenCalled()
    } finally {
      for (const spy of spies) spy.mockRestore()
    }
    const claims = await s.claims.list(S)()
    expect(claims._tag === 'Right' && claims.right.map((c) => c.sourceRuntimeEventHighWater)).toEqual([0, 1])
    const again = claimOf(1, 'run-4')
    const conflict = await s.claims.claimBoundary(again.claim, again.header)()
    expect(conflict._tag === 'Left' && conflict.left._tag).toBe('ClaimConflict')
    const runs = await s.runs.list(S)()
    expect(runs._tag === 'Right' && runs.right.map((r) => r.runId)).toEqual(['run-1', 'run-2', 'run-3'])
  })
})

describe('stored records', () => {
  it('lists a header that no longer decodes as an error entry, and reads it as Unreadable', async () => {
    const file = await freshFile()
    const s = stores(file)
    await s.runs.create(header)()
    rawDb(file, (db) => db.prepare('UPDATE runs SET header = \'{"runId":"run-1"}\'').run())
    const listed = await s.runs.list(S)()
    expect(listed).toMatchObject({ _tag: 'Right', right: [{ runId: 'run-1', error: { _tag: 'Unreadable' } }] })
    expect(await s.runs.read(S, 'run-1')()).toMatchObject({ _tag: 'Left', left: { _tag: 'Unreadable' } })
  })

  it('fails the run and shell-run lists closed on a row whose id is not an id, and skips such a session', async () => {
    const file = await freshFile()
    const s = stores(file)
    await s.runs.create(header)()
    rawDb(file, (db) => {
      db.prepare('INSERT INTO runs (session_id, run_id, header) VALUES (?, ?, ?)').run(S, '../run-2', '{}')
      db.prepare('INSERT INTO shell_runs (session_id, shell_run_id, record) VALUES (?, ?, ?)').run(S, 'a b', '{}')
      db.prepare('INSERT INTO session_ids (session_id) VALUES (?)').run('not/a/session')
    })
    expect(await s.runs.list(S)()).toMatchObject({
      _tag: 'Left',
      left: { _tag: 'Unreadable', reason: 'run id is invalid' },
    })
    expect(await s.shellRuns.list(S)()).toMatchObject({
      _tag: 'Left',
      left: { _tag: 'Unreadable', reason: 'shell run id is invalid' },
    })
    expect(await s.sessions.list()()).toEqual({ _tag: 'Right', right: [S] })
  })

  it('fails the claim list on a claim that names another boundary than its key', async () => {
    const file = await freshFile()
    const s = stores(file)
    await s.sessions.list()()
    rawDb(file, (db) =>
      db
        .prepare('INSERT INTO claims (session_id, source_run_id, high_water, record) VALUES (?, ?, ?, ?)')
        .run(S, 'run-1', 3, '{}'),
    )
    expect(await s.claims.list(S)()).toMatchObject({ _tag: 'Left', left: { _tag: 'Unreadable' } })
  })

  it('refuses an append that repeats an event id of the ledger, writing nothing', async () => {
    const file = await freshFile()
    const s = stores(file)
    await s.runs.create(header)()
    const [first, second] = conformanceRows(S, 1, 2)
    expect(await s.events.append(S, 'run-1', first!)()).toEqual({ _tag: 'Right', right: { highWater: 1 } })
    const repeated = await s.events.append(S, 'run-1', { ...second!, id: first!.id })()
    expect(repeated).toMatchObject({ _tag: 'Left', left: { _tag: 'InvalidRecord' } })
    expect(await s.events.read(S, 'run-1')()).toMatchObject({ _tag: 'Right', right: { highWater: 1, problem: null } })
  })

  it('reports a row committed behind the port under another run as an identity mismatch, then refuses appends', async () => {
    const file = await freshFile()
    const s = stores(file)
    await s.runs.create(header)()
    const [first] = conformanceRows(S, 1, 1)
    const [foreign] = conformanceRows(S, 2, 1)
    await s.events.append(S, 'run-1', first!)()
    rawDb(file, (db) =>
      db
        .prepare('INSERT INTO events (session_id, run_id, seq, event_id, row) VALUES (?, ?, 2, ?, ?)')
        .run(S, 'run-1', foreign!.id, JSON.stringify(foreign)),
    )
    expect(await s.events.read(S, 'run-1')()).toMatchObject({
      _tag: 'Right',
      right: { highWater: 2, problem: { _tag: 'IdentityMismatch', line: 2, field: 'runId' } },
    })
    const [third] = conformanceRows(S, 1, 3).slice(2)
    expect(await s.events.append(S, 'run-1', third!)()).toMatchObject({
      _tag: 'Left',
      left: { _tag: 'LedgerUnreadable' },
    })
  })

  it('folds a ledger of many pages as read reads it, and replays it in bounded, ordered batches', async () => {
    const file = await freshFile()
    const s = stores(file)
    await s.runs.create(header)()
    const events = conformanceRows(S, 1, 2000)
    const [foreign] = conformanceRows(S, 2, 1)
    const texts = [...events.map((event) => JSON.stringify(event)), JSON.stringify({ ...foreign!, id: 'foreign-1' })]
    rawDb(file, (db) =>
      db.transaction(() => {
        const insert = db.prepare('INSERT INTO events (session_id, run_id, seq, event_id, row) VALUES (?, ?, ?, ?, ?)')
        texts.forEach((text, i) => insert.run(S, 'run-1', i + 1, `e-${i}`, text))
      })(),
    )
    const read = await s.events.read(S, 'run-1')()
    if (read._tag === 'Left') throw new Error(read.left.message)
    const handed: Array<unknown> = []
    const folded = await s.events.fold(S, 'run-1', (event) => handed.push(event))()
    if (folded._tag === 'Left') throw new Error(folded.left.message)
    const { events: kept, ...rest } = read.right
    expect(rest.problem).toMatchObject({ _tag: 'IdentityMismatch', line: 2001 })
    expect(handed).toEqual(kept)
    const digest = createHash('sha256')
      .update(texts.map((text) => `${text}\n`).join(''))
      .digest('hex')
    expect(folded.right).toEqual({ rows: kept.length, ...rest, digest })
    // The prefix digest at a pin on either side of a page's end, and at and past the high-water.
    const prefix = (rows: number) =>
      createHash('sha256')
        .update(
          texts
            .slice(0, rows)
            .map((text) => `${text}\n`)
            .join(''),
        )
        .digest('hex')
    for (const pin of [511, 512, 513, 1537, 2001]) {
      const pinned = await s.events.fold(S, 'run-1', () => undefined, { digestAt: pin })()
      expect(pinned).toEqual({
        _tag: 'Right',
        right: { ...folded.right, digestAt: { rows: pin, digest: prefix(pin) } },
      })
    }
    expect(await s.events.fold(S, 'run-1', () => undefined, { digestAt: 2002 })()).toEqual(folded)

    const batches: Array<number> = []
    const replayed: Array<unknown> = []
    const result = await s.events.replay(S, 'run-1', folded.right, async (rows) => {
      batches.push(rows.length)
      await new Promise((resolve) => setTimeout(resolve, 1))
      replayed.push(...rows)
    })()
    expect(result).toEqual({ _tag: 'Right', right: undefined })
    expect(replayed).toEqual(kept)
    expect(batches.length).toBeGreaterThan(1)
    expect(Math.max(...batches)).toBeLessThanOrEqual(512)

    // The last row gone: fewer bytes. A row grown by a byte: the rows no longer add up.
    rawDb(file, (db) => db.prepare('DELETE FROM events WHERE seq = 2001').run())
    expect(await s.events.replay(S, 'run-1', folded.right, () => undefined)()).toMatchObject({
      _tag: 'Left',
      left: { _tag: 'LedgerChanged', reason: 'fewer_bytes' },
    })
    rawDb(file, (db) =>
      db
        .prepare('INSERT INTO events (session_id, run_id, seq, event_id, row) VALUES (?, ?, 2001, ?, ?)')
        .run(S, 'run-1', 'foreign-1', `${texts[2000]!} `),
    )
    expect(await s.events.replay(S, 'run-1', folded.right, () => undefined)()).toMatchObject({
      _tag: 'Left',
      left: { _tag: 'LedgerChanged', reason: 'different_bytes' },
    })
  })
})
