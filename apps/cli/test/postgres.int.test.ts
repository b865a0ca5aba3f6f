/**
 * A PostgreSQL store under the BUILT CLI (issue 14), on the scratch cluster the globalSetup started:
 * two "hosts" — processes with distinct `MAKA_HOST_ID`s — racing to continue one boundary make
 * exactly one continuation; SIGKILLing the host that owns a continuation releases its lock (the
 * server drops it with the connection), the other host's recovery leaves the session alone while
 * the owner lives and recovers the run once it is gone; `maka store copy` between JSONL, SQLite and
 * PostgreSQL; `maka chaos --store postgres://` finding no violation and leaving no database behind.
 */
import { execFile, spawn } from 'node:child_process'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, describe, expect, inject, it } from 'vitest'
import {
  CLI,
  type CliResult,
  cliEnv,
  interruptedSession,
  json,
  removeScratch,
  runCli,
  scratch,
  scriptFile,
} from './support.js'

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string
  }
}

const made: Array<string> = []
let counter = 0

const onDatabase = async <A>(url: string, body: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await body(client)
  } finally {
    await client.end()
  }
}
const rows = async (url: string, sql: string): Promise<ReadonlyArray<Record<string, unknown>>> =>
  onDatabase(url, async (client) => (await client.query(sql)).rows as ReadonlyArray<Record<string, unknown>>)

// A fresh database on the scratch cluster, dropped when the file's tests end.
const freshDatabase = async (): Promise<string> => {
  counter += 1
  const name = `cli_${process.pid}_${counter}`
  await onDatabase(inject('postgresUrl'), (client) => client.query(`CREATE DATABASE ${name}`))
  made.push(name)
  const url = new URL(inject('postgresUrl'))
  url.pathname = `/${name}`
  return url.toString()
}

afterAll(async () => {
  for (const name of made.splice(0)) {
    await onDatabase(inject('postgresUrl'), (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
  }
  await removeScratch()
})

const asHost = (hostId: string, args: ReadonlyArray<string>): Promise<CliResult> =>
  new Promise((done) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { env: { ...cliEnv(true), MAKA_HOST_ID: hostId }, timeout: 300_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1
        done({ code, stdout, stderr })
      },
    )
  })

// Waits for a condition on the database, generously: the machine is shared and loaded.
const until = async (what: string, check: () => Promise<boolean>): Promise<void> => {
  for (let waited = 0; !(await check()); waited += 1) {
    if (waited > 1200) throw new Error(`gave up waiting: ${what}`)
    await new Promise((done) => setTimeout(done, 100))
  }
}

// The owner rows whose advisory lock is held right now, with the host that holds each.
const liveOwners = (url: string) =>
  rows(
    url,
    `SELECT o.session_id, o.host_id FROM owner_locks o WHERE EXISTS (SELECT 1 FROM pg_locks l
       WHERE l.locktype = 'advisory' AND l.granted AND l.pid = o.backend_pid AND l.objsubid = 2)`,
  )

const interruptedInPostgres = async (sessionId: string) => {
  const { root, dataDir, workspace } = await scratch()
  await interruptedSession(dataDir, workspace, sessionId, root)
  const url = await freshDatabase()
  const copied = await runCli(['store', 'copy', '--from', `jsonl:${dataDir}`, '--to', url, '--json'])
  expect(copied.code).toBe(0)
  return { root, url }
}

describe('two hosts sharing a PostgreSQL store', () => {
  it('race to continue one boundary: exactly one continuation, whichever host wins', async () => {
    const { url } = await interruptedInPostgres('session-race')
    const racers = await Promise.all(
      ['host-a', 'host-b', 'host-a', 'host-b'].map((host) =>
        asHost(host, ['resume', '--store', url, '--session', 'session-race', '--json']),
      ),
    )
    const codes = racers.map((r) => r.code)
    expect(codes.filter((c) => c === 0)).toHaveLength(1)
    expect(
      codes.filter((c) => c !== 0).every((c) => c === 3),
      JSON.stringify(racers.map((r) => [r.code, r.stdout.slice(0, 600), r.stderr.slice(0, 600)])),
    ).toBe(true)
    const continuations = await rows(url, "SELECT run_id FROM runs WHERE header::jsonb ? 'continuationSource'")
    expect(continuations).toHaveLength(1)
    expect(await rows(url, 'SELECT session_id FROM claims')).toHaveLength(1)
    const statuses = (await rows(url, "SELECT header::jsonb->>'status' AS s FROM runs")).map((r) => r['s']).sort()
    expect(statuses).toEqual(['completed', 'failed'])
    // Nobody holds the session once every racer has ended.
    expect(await liveOwners(url)).toEqual([])
    for (const racer of racers) expect(racer.stderr).not.toContain(new URL(url).host)
  })

  it('SIGKILL of the owning host releases its lock; the other host recovers the run only then', async () => {
    const { root, url } = await interruptedInPostgres('session-kill')
    // Host A continues, then waits in the model call, holding the session.
    const slow = await scriptFile(root, 'slow-continuation.json', [{ delayMs: 120_000 }, { text: 'never reached' }])
    const owner = spawn(
      process.execPath,
      [CLI, 'resume', '--store', url, '--session', 'session-kill', '--yes', '--script', slow],
      { env: { ...cliEnv(true), MAKA_HOST_ID: 'host-a' }, stdio: ['ignore', 'pipe', 'pipe'] },
    )
    const gone = new Promise<string | null>((done) => owner.once('exit', (_code, signal) => done(signal)))
    try {
      await until('host-a owns a continuation that has started', async () => {
        const owners = await liveOwners(url)
        const started = await rows(
          url,
          "SELECT e.run_id FROM events e JOIN runs r USING (session_id, run_id) WHERE r.header::jsonb ? 'continuationSource'",
        )
        return owners.some((o) => o['host_id'] === 'host-a') && started.length > 0
      })
      const [continuation] = await rows(
        url,
        "SELECT run_id, header::jsonb->>'status' AS status FROM runs WHERE header::jsonb ? 'continuationSource'",
      )
      expect(continuation?.['status']).toBe('running')

      // While host A lives, host B's recovery repairs nothing of its session.
      const early = await asHost('host-b', ['recover', '--store', url, '--json'])
      expect(early.code).toBe(0)
      const earlyActions = json<{ actions: ReadonlyArray<Record<string, unknown>> }>(early).actions
      expect(earlyActions.filter((a) => a['sessionId'] === 'session-kill').map((a) => a['action'])).toEqual([
        'session_skipped',
      ])
      const runningStill = await rows(
        url,
        `SELECT header::jsonb->>'status' AS s FROM runs WHERE run_id = '${String(continuation?.['run_id'])}'`,
      )
      expect(runningStill[0]?.['s']).toBe('running')

      owner.kill('SIGKILL')
      expect(await gone).toBe('SIGKILL')
      await until('the server released the dead host’s lock', async () => (await liveOwners(url)).length === 0)

      const late = await asHost('host-b', ['recover', '--store', url, '--json'])
      expect(late.code).toBe(0)
      const lateActions = json<{ actions: ReadonlyArray<Record<string, unknown>> }>(late).actions
      expect(
        lateActions.some((a) => a['runId'] === continuation?.['run_id'] && a['action'] !== 'session_skipped'),
      ).toBe(true)
      const [after] = await rows(
        url,
        `SELECT header::jsonb->>'status' AS s FROM runs WHERE run_id = '${String(continuation?.['run_id'])}'`,
      )
      expect(after?.['s']).not.toBe('running')
      const [last] = await rows(
        url,
        `SELECT row::jsonb->'status' AS status FROM events WHERE run_id = '${String(continuation?.['run_id'])}' ORDER BY seq DESC LIMIT 1`,
      )
      expect(last?.['status']).toBe(after?.['s'])
      // A second pass finds nothing more to do.
      const again = await asHost('host-b', ['recover', '--store', url, '--json'])
      expect(json<{ actions: ReadonlyArray<unknown> }>(again).actions).toEqual([])
    } finally {
      owner.kill('SIGKILL')
      await gone
    }
  })
})

describe('maka store copy with PostgreSQL', () => {
  it('copies JSONL → PostgreSQL → SQLite → JSONL, verified, and never over a session the destination holds', async () => {
    const { root, dataDir, workspace } = await scratch()
    await interruptedSession(dataDir, workspace, 'session-c', root)
    expect((await runCli(['run', '--data-dir', dataDir, '--cwd', workspace, 'list'])).code).toBe(0)
    const url = await freshDatabase()
    const toPostgres = await runCli(['store', 'copy', '--from', `jsonl:${dataDir}`, '--to', url, '--json'])
    expect(toPostgres.code).toBe(0)
    const summary = json<{ to: string; sessions: number; runs: number; rows: number; verified: boolean }>(toPostgres)
    expect(summary).toMatchObject({ to: 'postgres', sessions: 2, runs: 2, verified: true })
    const n = (await rows(url, 'SELECT COUNT(*)::integer AS n FROM events'))[0]?.['n']
    expect(summary.rows).toBe(n)
    const file = join(root, 'from-postgres.sqlite')
    const toSqlite = await runCli(['store', 'copy', '--from', url, '--to', `sqlite:${file}`, '--json'])
    expect(toSqlite.code).toBe(0)
    expect(json<{ rows: number; verified: boolean }>(toSqlite)).toMatchObject({ rows: n, verified: true })
    const back = join(root, 'back')
    expect((await runCli(['store', 'copy', '--from', `sqlite:${file}`, '--to', `jsonl:${back}`])).code).toBe(0)
    const listed = async (args: ReadonlyArray<string>) =>
      json<{ sessions: ReadonlyArray<{ sessionId: string }> }>(await runCli(['sessions', '--json', ...args])).sessions
    expect((await listed(['--store', `jsonl:${back}`])).map((s) => s.sessionId)).toEqual(
      (await listed(['--data-dir', dataDir])).map((s) => s.sessionId),
    )
    const again = await runCli(['store', 'copy', '--from', `jsonl:${dataDir}`, '--to', url])
    expect(again.code).toBe(2)
    expect(again.stderr).toMatch(/already holds sessions .*never overwrites; nothing was copied/)
    expect(again.stderr).not.toContain(new URL(url).host)
    expect(await rows(url, 'SELECT COUNT(*)::integer AS n FROM events')).toEqual([{ n }])
  })
})

describe('maka chaos --store postgres://', () => {
  it('finds no violation over PostgreSQL, in scratch databases it drops', async () => {
    const url = await freshDatabase()
    const result = await asHost('host-chaos', ['chaos', '--store', url, '--iterations', '2', '--seed', '11', '--json'])
    expect(result.code).toBe(0)
    const summary = json<{ ok: boolean; children: number; violations: ReadonlyArray<unknown> }>(result)
    expect(summary.ok).toBe(true)
    expect(summary.violations).toEqual([])
    expect(summary.children).toBeGreaterThan(2)
    expect(
      await rows(inject('postgresUrl'), "SELECT datname FROM pg_database WHERE datname LIKE 'maka_chaos_%'"),
    ).toEqual([])
  })

  // Here, not in chaosStorms.int.test.ts: tests of one file run in turn, so the scratch-database check
  // above never sees another file's chaos run that is still going on the same cluster.
  it('storms over the dead owner lock in a PostgreSQL store, and drops its scratch databases', async () => {
    const url = await freshDatabase()
    const result = await asHost('host-chaos', [
      'chaos',
      '--store',
      url,
      '--iterations',
      '1',
      '--seed',
      '31',
      '--storm-size',
      '6',
      '--json',
    ])
    expect(result.code).toBe(0)
    const summary = json<{ ok: boolean; storms: number; maxStormSize: number; violations: ReadonlyArray<unknown> }>(
      result,
    )
    expect(summary).toMatchObject({ ok: true, storms: 1, maxStormSize: 6, violations: [] })
    expect(
      await rows(inject('postgresUrl'), "SELECT datname FROM pg_database WHERE datname LIKE 'maka_chaos_%'"),
    ).toEqual([])
  })
})
