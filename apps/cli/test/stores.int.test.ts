/**
 * Store selection and `maka store copy` on the BUILT CLI (issue 14): `--store` and `MAKA_STORE` on
 * every command, bad values refused with one sentence and exit 2 (a connection string never
 * echoed), a SQLite store used end to end — a SIGKILLed turn copied into it, recovered and resumed,
 * 8 racing `maka resume` processes making exactly one continuation — copies verified by reading
 * back, refusals that change nothing, and `maka chaos --store sqlite:` finding no violation.
 */
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { readFile, readdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import {
  CLI,
  type CliResult,
  cliEnv,
  hashTree,
  interruptedSession,
  json,
  removeScratch,
  runCli,
  scratch,
} from './support.js'

afterAll(removeScratch)

const withEnv = (args: ReadonlyArray<string>, extra: NodeJS.ProcessEnv): Promise<CliResult> =>
  new Promise((done) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { env: { ...cliEnv(true), ...extra }, timeout: 300_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1
        done({ code, stdout, stderr })
      },
    )
  })

const rowCount = (file: string, table: string): number => {
  const db = new Database(file, { readonly: true })
  try {
    return db.prepare(`SELECT COUNT(*) FROM ${table}`).pluck().get() as number
  } finally {
    db.close()
  }
}

describe('choosing a store', () => {
  it.each([
    ['--store', 'bogus:somewhere', /not a store \(bogus:\)/],
    ['--store', 'sqlite:', /names no file/],
    ['--store', 'jsonl:', /names no directory/],
    ['--store', 'nothing-at-all', /not a store: use jsonl:DIR, sqlite:FILE or postgres/],
  ])('refuses %s %s with exit 2 and one sentence', async (flag, value, sentence) => {
    const result = await runCli(['sessions', flag, value])
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(sentence)
    expect(result.stderr.trim().split('\n')).toHaveLength(1)
  })

  it('refuses a bad MAKA_STORE the same way, naming the variable', async () => {
    const result = await withEnv(['sessions'], { MAKA_STORE: 'mysql://x' })
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/The MAKA_STORE value is not a store/)
  })

  it('never echoes a connection string, in errors or in the verbose log', async () => {
    for (const [value, code] of [
      ['postgres://maka:hunter2@db.internal:5432/maka', 1],
      ['postgress://maka:hunter2@db.internal/maka', 2],
      ['postgres://maka:hunter2@127.0.0.1:1/maka', 1],
      ['postgres://maka:hunter2@127.0.0.1:1/maka%zz', 2],
    ] as const) {
      const result = await runCli(['sessions', '--verbose', '--store', value])
      expect(result.code).toBe(code)
      expect(result.stderr).not.toContain('hunter2')
      expect(result.stderr).not.toContain('db.internal')
      expect(result.stderr).not.toContain('127.0.0.1')
      // One sentence (after the verbose note naming the store's kind), nothing on stdout.
      expect(
        result.stderr
          .trim()
          .split('\n')
          .filter((line) => !line.startsWith('maka: store ')),
      ).toHaveLength(1)
      expect(result.stdout).toBe('')
    }
    const unreachable = await runCli(['sessions', '--store', 'postgres://maka:hunter2@127.0.0.1:1/maka'])
    expect(unreachable.stderr).toMatch(
      /^maka: The store postgres database maka cannot be used \(ECONNREFUSED: .*\); nothing was written\.\n$/,
    )
  })

  it('runs, lists and shows over a SQLite file, touching no data dir', async () => {
    const { root, dataDir, workspace } = await scratch()
    const file = join(root, 'db', 'maka.sqlite')
    const run = await runCli([
      'run',
      '--store',
      `sqlite:${file}`,
      '--data-dir',
      dataDir,
      '--cwd',
      workspace,
      '--json',
      'list',
    ])
    expect(run.code).toBe(0)
    expect(existsSync(dataDir)).toBe(false)
    expect(rowCount(file, 'runs')).toBe(1)
    const listed = await withEnv(['sessions', '--json'], { MAKA_STORE: `sqlite:${file}` })
    expect(listed.code).toBe(0)
    const { dataDir: listedFrom, sessions } = json<{ dataDir: string; sessions: ReadonlyArray<{ sessionId: string }> }>(
      listed,
    )
    expect(listedFrom).toBe(file)
    expect(sessions).toHaveLength(1)
    const shown = await runCli(['show', sessions[0]!.sessionId, '--store', `sqlite:${file}`])
    expect(shown.code).toBe(0)
    expect(shown.stdout).toContain('completed')
    // The flag wins over the variable.
    const other = await withEnv(['sessions', '--json', '--store', `sqlite:${join(root, 'other.sqlite')}`], {
      MAKA_STORE: `sqlite:${file}`,
    })
    expect(json<{ sessions: ReadonlyArray<unknown> }>(other).sessions).toEqual([])
    expect(existsSync(join(root, 'other.sqlite'))).toBe(false)
  })
})

describe('maka store copy', () => {
  it('copies JSONL → SQLite → JSONL byte for byte, verified, and never over a session the destination holds', async () => {
    const { root, dataDir, workspace } = await scratch()
    await interruptedSession(dataDir, workspace, 'session-a', root)
    expect((await runCli(['run', '--data-dir', dataDir, '--cwd', workspace, 'list'])).code).toBe(0)
    const file = join(root, 'copy.sqlite')
    const toSqlite = await runCli(['store', 'copy', '--from', `jsonl:${dataDir}`, '--to', `sqlite:${file}`, '--json'])
    expect(toSqlite.code).toBe(0)
    const summary = json<{ sessions: number; runs: number; rows: number; verified: boolean }>(toSqlite)
    expect(summary).toMatchObject({ sessions: 2, runs: 2, verified: true })
    expect(summary.rows).toBe(rowCount(file, 'events'))

    const back = join(root, 'back')
    expect((await runCli(['store', 'copy', '--from', `sqlite:${file}`, '--to', `jsonl:${back}`])).code).toBe(0)
    const ledgers = async (dir: string) =>
      (await readdir(join(dir, 'sessions'), { recursive: true })).filter((f) => f.endsWith('.jsonl')).sort()
    expect(await ledgers(back)).toEqual(await ledgers(dataDir))
    for (const ledger of await ledgers(dataDir)) {
      expect(await hashTree(join(back, 'sessions', ledger))).toBe(await hashTree(join(dataDir, 'sessions', ledger)))
    }

    const before = rowCount(file, 'events')
    const again = await runCli(['store', 'copy', '--from', `jsonl:${dataDir}`, '--to', `sqlite:${file}`])
    expect(again.code).toBe(2)
    expect(again.stderr).toMatch(/already holds sessions .*never overwrites; nothing was copied/)
    expect(rowCount(file, 'events')).toBe(before)
    const same = await runCli(['store', 'copy', '--from', `sqlite:${file}`, '--to', `sqlite:${file}`])
    expect(same.code).toBe(2)
  })

  it('fails (exit 1) naming the run when a copied chain no longer finds the prefix digest a link records', async () => {
    const { root, dataDir, workspace } = await scratch()
    const journal = { MAKA_RUNTIME_TOOL_JOURNAL: '1' }
    await interruptedSession(dataDir, workspace, 'session-j', root, journal)
    // The interrupted run's rows, re-spaced before it is continued: the same values, other bytes,
    // so the continuation records the digest of these bytes. A copy re-encodes rows, and the copied
    // source no longer hashes to what the link records.
    const sessionDir = join(dataDir, 'sessions', 'session-j', 'runs')
    const [run] = await readdir(sessionDir)
    const ledger = join(sessionDir, run ?? '', 'runtime-events.jsonl')
    await writeFile(ledger, (await readFile(ledger, 'utf8')).replace('":', '": '))
    const resumed = await withEnv(['resume', '--data-dir', dataDir, '--session', 'session-j'], journal)
    expect(resumed.code).toBe(0)
    const copied = await runCli([
      'store',
      'copy',
      '--from',
      `jsonl:${dataDir}`,
      '--to',
      `sqlite:${join(root, 'c.sqlite')}`,
    ])
    expect(copied.code).toBe(1)
    expect(copied.stdout).toMatch(/the prefix digest it records of run .* differs in the copy/)
  })

  it('copies nothing from a source that does not read whole', async () => {
    const { root, dataDir, workspace } = await scratch()
    expect((await runCli(['run', '--data-dir', dataDir, '--cwd', workspace, 'list'])).code).toBe(0)
    const file = join(root, 'damaged.sqlite')
    expect((await runCli(['store', 'copy', '--from', `jsonl:${dataDir}`, '--to', `sqlite:${file}`])).code).toBe(0)
    const db = new Database(file)
    db.prepare('UPDATE events SET row = \'{"broken":true}\' WHERE seq = 2').run()
    db.close()
    const target = join(root, 'target')
    const result = await runCli(['store', 'copy', '--from', `sqlite:${file}`, '--to', `jsonl:${target}`])
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(
      /does not read whole, so nothing was copied: the ledger of run .* \(Unreadable at line 2\)/,
    )
    expect(await hashTree(join(target, 'sessions'))).toBe('absent')
  })
})

describe('a SQLite store under the runtime', () => {
  it('recovers and resumes a SIGKILLed turn, and 8 racing resumers make exactly one continuation', async () => {
    const { root, dataDir, workspace } = await scratch()
    await interruptedSession(dataDir, workspace, 'session-r', root)
    const file = join(root, 'race.sqlite')
    expect((await runCli(['store', 'copy', '--from', `jsonl:${dataDir}`, '--to', `sqlite:${file}`])).code).toBe(0)
    const store = `sqlite:${file}`
    const racers = await Promise.all(
      Array.from({ length: 8 }, () => withEnv(['resume', '--store', store, '--session', 'session-r', '--json'], {})),
    )
    const codes = racers.map((r) => r.code)
    expect(codes.filter((c) => c === 0)).toHaveLength(1)
    expect(codes.filter((c) => c !== 0).every((c) => c === 3)).toBe(true)
    const db = new Database(file, { readonly: true })
    const continuations = db
      .prepare("SELECT run_id FROM runs WHERE json_extract(header, '$.continuationSource') IS NOT NULL")
      .pluck()
      .all()
    const claims = db.prepare('SELECT COUNT(*) FROM claims').pluck().get()
    const statuses = db.prepare("SELECT json_extract(header, '$.status') FROM runs ORDER BY run_id").pluck().all()
    db.close()
    expect(continuations).toHaveLength(1)
    expect(claims).toBe(1)
    expect([...statuses].sort()).toEqual(['completed', 'failed'])
    const plan = await runCli(['resume', 'plan', '--store', store, '--session', 'session-r', '--json'], { flag: true })
    expect(plan.code).toBe(3)
  })
})

describe('maka chaos --store sqlite:', () => {
  it('finds no violation over SQLite, in scratch databases of its own', async () => {
    const result = await withEnv(
      ['chaos', '--store', 'sqlite:chaos.sqlite', '--iterations', '3', '--seed', '7', '--json'],
      {},
    )
    expect(result.code).toBe(0)
    const summary = json<{ ok: boolean; children: number; violations: ReadonlyArray<unknown> }>(result)
    expect(summary.ok).toBe(true)
    expect(summary.violations).toEqual([])
    expect(summary.children).toBeGreaterThan(3)
    expect(existsSync('chaos.sqlite')).toBe(false)
  })
})
