/**
 * What the PostgreSQL stores do beyond the conformance suite: the versioned schema (migrated once
 * however many hosts open a fresh database at once, a newer one refused), words that never carry
 * the connection string, the host id recorded with each owner lock, a lock that another host's
 * stale-looking pid cannot take, the fence that stops writes once the lock connection drops, and a
 * fold (with the prefix digest at a pin) and replay of a ledger longer than one page.
 */
import { createHash } from 'node:crypto'
import { hostname } from 'node:os'
import { fileURLToPath } from 'node:url'
import { claimAndHeader, conformanceRows, runIdentity } from '@maka/store-conformance'
import { describeStoreError, type StoreError } from '@maka/stores'
import { spawn } from 'node:child_process'
import pg from 'pg'
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest'
import { currentHostId, openPostgresStores, SCHEMA_VERSION, type PostgresStores } from '../src/index.js'
import { sessionLockKey } from '../src/database.js'
import { clusterUrl, dropDatabase, freshDatabase, onDatabase } from './support.js'

const DIST = fileURLToPath(new URL('../dist/index.js', import.meta.url))
const CHILD = fileURLToPath(new URL('../../store-conformance/child/storeChild.mjs', import.meta.url))
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
const session = { sessionId: S, cwd: '/work/project', createdAt: AT } as never
const lockOf = (pid: number) => ({ pid, hostname: 'host-b', startedAt: AT }) as never

const databases: Array<string> = []
const open: Array<PostgresStores> = []
const children: Array<ReturnType<typeof spawn>> = []
afterEach(async () => {
  for (const stores of open.splice(0)) await stores.close()
})
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL')
  for (const url of databases.splice(0)) await dropDatabase(url)
})
const fresh = async () => {
  const url = await freshDatabase()
  databases.push(url)
  return url
}
const stores = (url: string, hostId?: string) => {
  const s = openPostgresStores(url, hostId === undefined ? {} : { hostId })
  open.push(s)
  return s
}
const value = async <A>(task: () => Promise<{ _tag: 'Left'; left: StoreError } | { _tag: 'Right'; right: A }>) => {
  const result = await task()
  if (result._tag === 'Left') throw new Error(describeStoreError(result.left))
  return result.right
}
const failure = async (task: () => Promise<{ _tag: 'Left'; left: StoreError } | { _tag: 'Right'; right: unknown }>) => {
  const result = await task()
  if (result._tag === 'Right') throw new Error('expected a failure')
  return result.left
}

describe('the PostgreSQL database', () => {
  it('is migrated once when several instances open a fresh database at once', async () => {
    const url = await fresh()
    const many = Array.from({ length: 6 }, () => stores(url))
    const listed = await Promise.all(many.map((s) => s.sessions.list()()))
    expect(listed.every((r) => r._tag === 'Right')).toBe(true)
    const version = await onDatabase(url, async (c) => (await c.query('SELECT version FROM maka_schema')).rows)
    expect(version).toEqual([{ version: SCHEMA_VERSION }])
  })

  it('refuses a database written by a newer maka, writing nothing', async () => {
    const url = await fresh()
    await value(stores(url).sessions.list())
    await onDatabase(url, (c) => c.query('UPDATE maka_schema SET version = $1', [SCHEMA_VERSION + 1]))
    const newer = stores(url)
    const refused = await failure(newer.sessions.create(session))
    expect(refused).toMatchObject({ _tag: 'IoFailed', code: 'SCHEMA_TOO_NEW' })
    await expect(newer.ready()).rejects.toMatchObject({ code: 'SCHEMA_TOO_NEW' })
    expect(await onDatabase(url, async (c) => (await c.query('SELECT * FROM session_ids')).rows)).toEqual([])
  })

  it('reports a stored record that no longer decodes as Unreadable', async () => {
    const url = await fresh()
    const s = stores(url)
    await value(s.runs.create(header))
    await onDatabase(url, (c) => c.query(`UPDATE runs SET header = '{"runId":"run-1"}'`))
    expect((await failure(s.runs.read(S, 'run-1')))._tag).toBe('Unreadable')
    const listed = await value(s.runs.list(S))
    expect(listed).toEqual([{ runId: 'run-1', error: expect.objectContaining({ _tag: 'Unreadable' }) }])
  })

  it('fails the run and shell-run lists closed on a row whose id is not an id, and skips such a session', async () => {
    const url = await fresh()
    const s = stores(url)
    await value(s.runs.create(header))
    await onDatabase(url, async (c) => {
      await c.query('INSERT INTO runs (session_id, run_id, header) VALUES ($1, $2, $3)', [S, '../run-2', '{}'])
      await c.query('INSERT INTO shell_runs (session_id, shell_run_id, record) VALUES ($1, $2, $3)', [S, 'a b', '{}'])
      await c.query('INSERT INTO session_ids (session_id) VALUES ($1)', ['not/a/session'])
    })
    expect(await failure(s.runs.list(S))).toMatchObject({ _tag: 'Unreadable', reason: 'run id is invalid' })
    expect(await failure(s.shellRuns.list(S))).toMatchObject({ _tag: 'Unreadable', reason: 'shell run id is invalid' })
    expect(await value(s.sessions.list())).toEqual([S])
  })
})

describe('the ledger', () => {
  it('holds an event id once per run: a second row with it is refused, appending nothing', async () => {
    const url = await fresh()
    const s = stores(url)
    await value(s.runs.create(header))
    const [first, second] = conformanceRows(S, 1, 2)
    await value(s.events.append(S, 'run-1', first!))
    const again = await failure(s.events.append(S, 'run-1', { ...second!, id: first!.id }))
    expect(again).toMatchObject({ _tag: 'InvalidRecord' })
    expect((await value(s.events.read(S, 'run-1'))).events).toEqual([first])
    expect(await value(s.events.append(S, 'run-1', second!))).toEqual({ highWater: 2 })
  })
})

describe('an append (decision 170)', () => {
  it('is one statement, one round trip, once the instance knows the ledger to its last row', async () => {
    const url = await fresh()
    const s = stores(url)
    await value(s.runs.create(header))
    const [first, second, third] = conformanceRows(S, 1, 3)
    await value(s.events.append(S, 'run-1', first!))
    const queries = vi.spyOn(pg.Client.prototype, 'query')
    try {
      expect(await value(s.events.append(S, 'run-1', second!, { expectedHighWater: 1 }))).toEqual({ highWater: 2 })
      expect(await value(s.events.append(S, 'run-1', third!))).toEqual({ highWater: 3 })
      expect(queries).toHaveBeenCalledTimes(2)
    } finally {
      queries.mockRestore()
    }
    expect((await value(s.events.read(S, 'run-1'))).events).toEqual([first, second, third])
  })

  it('loses a race to another instance without writing twice, and says why as the checking append does', async () => {
    const url = await fresh()
    const mine = stores(url)
    const theirs = stores(url)
    await value(mine.runs.create(header))
    const rows = conformanceRows(S, 1, 12)
    await value(mine.events.append(S, 'run-1', rows[0]!))
    await value(theirs.events.read(S, 'run-1'))
    await value(theirs.events.append(S, 'run-1', rows[1]!))
    // Both know a ledger of two rows now; each races five appends, alternately pinned and not.
    const race = await Promise.all(
      [mine, theirs].flatMap((s, side) =>
        [0, 1, 2, 3, 4].map((i) => {
          const row = rows[2 + side * 5 + i]!
          return s.events.append(S, 'run-1', row, i % 2 === 0 ? {} : { expectedHighWater: 2 + i })()
        }),
      ),
    )
    const landed = race.flatMap((r) => (r._tag === 'Right' ? [r.right.highWater] : []))
    const refused = race.flatMap((r) => (r._tag === 'Left' ? [r.left._tag] : []))
    expect(new Set(refused)).toEqual(refused.length === 0 ? new Set() : new Set(['HighWaterConflict']))
    expect([...landed].sort((a, b) => a - b)).toEqual(Array.from({ length: landed.length }, (_, i) => i + 3))
    const read = await value(mine.events.read(S, 'run-1'))
    expect(read.highWater).toBe(2 + landed.length)
    expect(new Set(read.events.map((e) => e.id)).size).toBe(read.events.length)
  })
})

describe('an append (decisions 300, 301, 303)', () => {
  it('is one prepared statement, one round trip, from the first append of a new run on', async () => {
    const url = await fresh()
    const s = stores(url)
    await value(s.runs.create(header))
    const all = conformanceRows(S, 1, 5)
    const rows = all.slice(0, 3)
    const queries = vi.spyOn(pg.Client.prototype, 'query')
    try {
      expect(await value(s.events.append(S, 'run-1', rows[0]!, { expectedHighWater: 0 }))).toEqual({ highWater: 1 })
      expect(await value(s.events.append(S, 'run-1', rows[1]!))).toEqual({ highWater: 2 })
      expect(await value(s.events.append(S, 'run-1', rows[2]!, { expectedHighWater: 2 }))).toEqual({ highWater: 3 })
      expect(queries).toHaveBeenCalledTimes(3)
      // Sent by name: the server parses and plans it once per connection.
      for (const [config] of queries.mock.calls)
        expect(config).toEqual(expect.objectContaining({ name: expect.any(String) }))
    } finally {
      queries.mockRestore()
    }
    // A ledger with rows that an instance has not seen refuses the one statement; the checking
    // append reads it first and answers as it always did.
    const more = all.slice(3)
    const stale = await failure(stores(url).events.append(S, 'run-1', more[0]!, { expectedHighWater: 0 }))
    expect(stale._tag).toBe('HighWaterConflict')
    expect((await failure(stores(url).events.append(S, 'run-1', rows[0]!)))._tag).toBe('InvalidRecord')
    expect(await value(stores(url).events.append(S, 'run-1', more[0]!))).toEqual({ highWater: 4 })
    expect(await value(stores(url).events.append(S, 'run-1', more[1]!, { expectedHighWater: 4 }))).toEqual({
      highWater: 5,
    })
    expect((await value(s.events.read(S, 'run-1'))).events).toEqual(all)
  })

  it('goes over a connection of its own, made again after the server drops it', async () => {
    const url = await fresh()
    const s = stores(url)
    await value(s.runs.create(header))
    const rows = conformanceRows(S, 1, 2)
    const pooled = vi.spyOn(pg.Pool.prototype, 'query')
    try {
      expect(await value(s.events.append(S, 'run-1', rows[0]!))).toEqual({ highWater: 1 })
      expect(pooled).not.toHaveBeenCalled()
    } finally {
      pooled.mockRestore()
    }
    await onDatabase(url, (c) =>
      c.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
      ),
    )
    // A write sent before the drop is seen fails, as on a pooled connection; the next connects again.
    for (let attempt = 0; ; attempt += 1) {
      const updated = await s.runs.update(header)()
      if (updated._tag === 'Right') break
      expect(updated.left._tag).toBe('IoFailed')
      expect(attempt).toBeLessThan(20)
    }
    expect(await value(s.events.append(S, 'run-1', rows[1]!))).toEqual({ highWater: 2 })
    expect((await value(s.events.read(S, 'run-1'))).events).toEqual(rows)
  })

  it('is connected when the store opens, so the first write waits for no connect', async () => {
    const url = await fresh()
    const s = stores(url)
    await s.ready()
    const connects = vi.spyOn(pg.Client.prototype, 'connect')
    try {
      await value(s.runs.create(header))
      expect(await value(s.events.append(S, 'run-1', conformanceRows(S, 1, 1)[0]!))).toEqual({ highWater: 1 })
      expect(connects).not.toHaveBeenCalled()
    } finally {
      connects.mockRestore()
    }
  })

  it('lets a process that never closes the store exit once its writes are done', async () => {
    const url = await fresh()
    const env: NodeJS.ProcessEnv = { ...process.env }
    delete env['NODE_OPTIONS']
    const script = [
      `const { openPostgresStores } = await import(${JSON.stringify(DIST)})`,
      `const s = openPostgresStores(${JSON.stringify(url)})`,
      `const header = ${JSON.stringify(header)}`,
      `const row = ${JSON.stringify(conformanceRows(S, 1, 1)[0])}`,
      `console.log(JSON.stringify([await s.runs.create(header)(), await s.events.append('${S}', 'run-1', row)()]))`,
    ].join('\n')
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    children.push(child)
    let out = ''
    child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()))
    // The pool's idle connections keep it up to their idle timeout; the writes' own connection must not.
    const code = await new Promise((done) => child.once('exit', done))
    expect(code).toBe(0)
    expect(JSON.parse(out)).toEqual([
      { _tag: 'Right', right: undefined },
      { _tag: 'Right', right: { highWater: 1 } },
    ])
  })
})

describe('a claim (decision 174)', () => {
  it('is one statement, one round trip: the claim, the target header and the session id, or none of them', async () => {
    const url = await fresh()
    const s = stores(url)
    await value(s.runs.create(header))
    // Run `target` claims run-1's boundary at 0.
    const claimOf = (target: string) =>
      claimAndHeader(runIdentity(S, 1), 0, {
        sessionId: S,
        runId: target,
        invocationId: `invocation-${target}`,
        turnId: `turn-${target}`,
      })
    const won = claimOf('run-2')
    const queries = vi.spyOn(pg.Client.prototype, 'query')
    try {
      await value(s.claims.claimBoundary(won.claim, won.header))
      expect(queries).toHaveBeenCalledTimes(1)
    } finally {
      queries.mockRestore()
    }
    const lost = claimOf('run-3')
    expect((await failure(s.claims.claimBoundary(lost.claim, lost.header)))._tag).toBe('ClaimConflict')
    const runs = (await value(s.runs.list(S))).map((entry) => entry.runId)
    expect(runs).toEqual(['run-1', 'run-2'])
  })
})

describe('words about the database', () => {
  it('name the database only: never the URL, its host, user or password', async () => {
    const base = new URL(clusterUrl())
    const url = `postgres://maka_secret_user:hunter2-pw@127.0.0.1:1/some_db`
    const s = stores(url)
    expect(s.location).toBe('postgres database some_db')
    const refused = await failure(s.sessions.list())
    expect(refused).toMatchObject({ _tag: 'IoFailed', code: 'ECONNREFUSED' })
    const rejected = await s.ready().then(
      () => null,
      (e: Error) => e,
    )
    expect(rejected).toMatchObject({ code: 'ECONNREFUSED' })
    for (const words of [describeStoreError(refused), JSON.stringify(refused), rejected!.message]) {
      for (const secret of ['hunter2', 'maka_secret_user', '127.0.0.1', url]) expect(words).not.toContain(secret)
    }
    // A server that answers but refuses the database: its SQLSTATE, still no host.
    const missing = `postgres://postgres@${base.host}/no_such_db`
    const absent = await failure(stores(missing).sessions.list())
    expect(absent).toMatchObject({ _tag: 'IoFailed', code: '3D000' })
    expect(describeStoreError(absent)).not.toContain(base.host)
  })
})

describe('owner locks across hosts', () => {
  it('takes the host id from MAKA_HOST_ID, else the hostname', () => {
    expect(currentHostId({ MAKA_HOST_ID: ' rack-7 ' })).toBe('rack-7')
    expect(currentHostId({ MAKA_HOST_ID: '' })).toBe(hostname())
    expect(currentHostId({})).toBe(hostname())
  })

  it('records the holding host, and a judge that calls the holder stale cannot take it', async () => {
    const url = await fresh()
    const env: NodeJS.ProcessEnv = { ...process.env, MAKA_HOST_ID: 'host-a' }
    delete env['NODE_OPTIONS']
    const input = { module: DIST, open: 'openPostgresStores', location: url, mode: 'lock', sessionId: S, lock: null }
    const holder = spawn(process.execPath, [CHILD, JSON.stringify(input)], { env, stdio: ['ignore', 'pipe', 'pipe'] })
    children.push(holder)
    const exited = new Promise((done) => holder.once('exit', done))
    await new Promise<void>((done, fail) => {
      let out = ''
      holder.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString()
        if (out.includes('"result":"acquired"')) done()
        else if (out.includes('"result"')) fail(new Error(out))
      })
      holder.once('exit', () => fail(new Error(`holder exited: ${out}`)))
    })
    const rows = await onDatabase(url, async (c) => (await c.query('SELECT host_id FROM owner_locks')).rows)
    expect(rows).toEqual([{ host_id: 'host-a' }])
    const other = stores(url, 'host-b')
    const judged: Array<unknown> = []
    const held = await failure(
      other.ownerLocks.acquire(S, lockOf(process.pid), (existing) => {
        judged.push(existing)
        return Promise.resolve(true)
      }),
    )
    expect(held).toMatchObject({ _tag: 'OwnerLockHeld', existing: { pid: holder.pid } })
    expect(judged).toEqual([])
    holder.kill('SIGKILL')
    await exited
    for (let waited = 0; (await value(other.ownerLocks.read(S))) !== null; waited += 1) {
      if (waited > 600) throw new Error('the dead holder still owns the session')
      await new Promise((done) => setTimeout(done, 100))
    }
    await value(other.ownerLocks.acquire(S, lockOf(process.pid), () => Promise.resolve(false)))
    const after = await onDatabase(url, async (c) => (await c.query('SELECT host_id FROM owner_locks')).rows)
    expect(after).toEqual([{ host_id: 'host-b' }])
  })

  it('fences every write to a session whose lock connection dropped, until the lock is taken again', async () => {
    const url = await fresh()
    const s = stores(url, 'host-a')
    await value(s.sessions.create(session))
    await value(s.runs.create(header))
    const [first, second] = conformanceRows(S, 1, 2)
    const lock = lockOf(process.pid)
    await value(s.ownerLocks.acquire(S, lock, () => Promise.resolve(false)))
    await value(s.events.append(S, 'run-1', first!))
    // The server ends the lock connection (a network cut, an administrator): its locks go with it.
    const ended = await onDatabase(url, async (c) => {
      const { backend_pid: pid } = (await c.query('SELECT backend_pid FROM owner_locks')).rows[0] as {
        backend_pid: number
      }
      return (await c.query('SELECT pg_terminate_backend($1) AS ok', [pid])).rows[0] as { ok: boolean }
    })
    expect(ended.ok).toBe(true)
    for (let waited = 0; (await value(s.ownerLocks.read(S))) !== null; waited += 1) {
      if (waited > 600) throw new Error('the terminated connection still holds the lock')
      await new Promise((done) => setTimeout(done, 100))
    }
    let fenced: StoreError | null = null
    for (let waited = 0; fenced === null; waited += 1) {
      const attempt = await s.events.append(S, 'run-1', second!)()
      if (attempt._tag === 'Left') fenced = attempt.left
      else throw new Error('a write went through after the lock was lost')
      if (waited > 600) throw new Error('no fence')
    }
    expect(fenced).toMatchObject({ _tag: 'IoFailed', code: 'OWNER_LOCK_LOST' })
    expect((await failure(s.runs.update(header)))._tag).toBe('IoFailed')
    expect((await value(s.events.read(S, 'run-1'))).highWater).toBe(1)
    await value(s.ownerLocks.acquire(S, lock, () => Promise.resolve(false)))
    expect(await value(s.events.append(S, 'run-1', second!))).toEqual({ highWater: 2 })
    await value(s.ownerLocks.release(S, lock))
    expect(await value(s.ownerLocks.read(S))).toBeNull()
  })
})

describe('an owner lock let go while another host waits for its row (decision 305)', () => {
  it('is taken by the waiting host, not refused as held by a connection that recorded no owner', async () => {
    const url = await fresh()
    const [k1, k2] = sessionLockKey(S)
    // A connection that holds the session's lock and records no row: a holder between its lock and
    // its row, or one done so fast that its row is gone before a waiter reads it.
    const holder = new pg.Client({ connectionString: url })
    await holder.connect()
    try {
      await holder.query('SELECT pg_advisory_lock($1, $2)', [k1, k2])
      const waiter = stores(url, 'host-b')
      await value(waiter.sessions.list())
      const queries = vi.spyOn(pg.Client.prototype, 'query')
      try {
        const acquired = waiter.ownerLocks.acquire(S, lockOf(process.pid), () => Promise.resolve(false))()
        // Let go once the waiter has found the lock taken.
        for (let waited = 0; ; waited += 1) {
          const tries = queries.mock.calls.flatMap(([config], i) =>
            String(typeof config === 'string' ? config : (config as { text?: unknown }).text).includes(
              'pg_try_advisory_lock',
            )
              ? [i]
              : [],
          )
          if (tries.length > 0) {
            const first = (await queries.mock.results[tries[0]!]!.value) as { rows: Array<{ ok: boolean }> }
            expect(first.rows[0]!.ok).toBe(false)
            break
          }
          if (waited > 600) throw new Error('the waiter never tried the lock')
          await new Promise((done) => setTimeout(done, 5))
        }
        await holder.query('SELECT pg_advisory_unlock($1, $2)', [k1, k2])
        expect(await acquired).toEqual({ _tag: 'Right', right: undefined })
      } finally {
        queries.mockRestore()
      }
      expect(await value(waiter.ownerLocks.read(S))).toEqual(lockOf(process.pid))
    } finally {
      await holder.end()
    }
  })
})

describe('a fold and a replay of a long ledger', () => {
  it('fold as read reads it, page after page (the prefix digest at any pin), and replay in bounded, ordered batches', async () => {
    const url = await fresh()
    const s = stores(url)
    await value(s.sessions.create(session))
    await value(s.runs.create(header))
    const texts = conformanceRows(S, 1, 1500).map((event) => JSON.stringify(event))
    await onDatabase(url, (client) =>
      client.query(
        'INSERT INTO events (session_id, run_id, seq, event_id, row) ' +
          "SELECT $1, $2, i, 'e-' || i, t FROM unnest($3::text[]) WITH ORDINALITY AS u(t, i)",
        [S, 'run-1', texts],
      ),
    )
    const read = await value(s.events.read(S, 'run-1'))
    const handed: Array<unknown> = []
    const scan = await value(s.events.fold(S, 'run-1', (event) => handed.push(event)))
    const { events: kept, ...rest } = read
    expect(kept).toHaveLength(1500)
    expect(handed).toEqual(kept)
    const digest = createHash('sha256')
      .update(texts.map((text) => `${text}\n`).join(''))
      .digest('hex')
    expect(scan).toEqual({ rows: 1500, ...rest, digest })
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
    for (const pin of [511, 512, 513, 1025, 1500]) {
      const pinned = await value(s.events.fold(S, 'run-1', () => undefined, { digestAt: pin }))
      expect(pinned).toEqual({ ...scan, digestAt: { rows: pin, digest: prefix(pin) } })
    }
    expect(await value(s.events.fold(S, 'run-1', () => undefined, { digestAt: 1501 }))).toEqual(scan)

    const batches: Array<number> = []
    const replayed: Array<unknown> = []
    await value(
      s.events.replay(S, 'run-1', scan, async (rows) => {
        batches.push(rows.length)
        await new Promise((resolve) => setTimeout(resolve, 1))
        replayed.push(...rows)
      }),
    )
    expect(replayed).toEqual(kept)
    expect(batches.length).toBeGreaterThan(1)
    expect(Math.max(...batches)).toBeLessThanOrEqual(512)

    await onDatabase(url, (client) => client.query('DELETE FROM events WHERE seq = 1500'))
    expect(await failure(s.events.replay(S, 'run-1', scan, () => undefined))).toMatchObject({
      _tag: 'LedgerChanged',
      reason: 'fewer_bytes',
    })
  })
})
