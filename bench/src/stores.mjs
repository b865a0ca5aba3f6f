/**
 * The store micro-benchmarks of `pnpm bench --only stores`, in one process against the built
 * packages: durable appends per second and claim latency for the JSONL, SQLite and (with
 * `--postgres URL`) PostgreSQL stores, each against its floor measured in the same run and
 * interleaved with it —
 *   JSONL appends: `write` + `fsync` of the same row bytes to one O_APPEND file;
 *   SQLite appends: a bare `INSERT` of the same row text, one commit each, WAL + synchronous=FULL;
 *   PostgreSQL appends: a bare `INSERT` of the same row text on one connection, one commit each;
 *   JSONL claims: two new files (claim + header) each written and fsynced, then their folder fsynced;
 *   SQLite and PostgreSQL claims: a bare two-row `INSERT` transaction.
 * Also writes a SQLite or PostgreSQL copy of a JSONL fixture for the plan-time variants
 * (`--sqlite-fixture`, `--postgres-fixture`). Prints one JSON object on stdout.
 */
import {
  closeSync,
  fsyncSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { makeLedgerBuilderUnsafe } from '@maka/events/testing'
import { makeFileStores, syncStoreFs } from '@maka/store-jsonl'
import { openSqliteStores } from '@maka/store-sqlite'
import { openPostgresStores } from '@maka/store-postgres'
import pg from 'pg'

const args = process.argv.slice(2)
const value = (name, fallback) => {
  const i = args.indexOf(name)
  return i < 0 ? fallback : args[i + 1]
}

const must = async (task) => {
  const result = await task()
  if (result._tag === 'Left') throw new Error(result.left.message)
  return result.right
}
const AT = '2026-01-02T03:04:05.678Z'
const S = 'bench-session'
const header = (runId, extra = {}) => ({
  runId,
  sessionId: S,
  turnId: `turn-${runId}`,
  invocationId: `invocation-${runId}`,
  status: 'created',
  cwd: '/work/project',
  providerId: 'provider',
  modelId: 'model',
  createdAt: AT,
  updatedAt: AT,
  ...extra,
})
const claimOf = (hw) => {
  const target = `target-${hw}`
  const pin = {
    sourceInvocationId: 'invocation-source',
    sourceRunId: 'source',
    sourceTurnId: 'turn-source',
    sourceRuntimeEventHighWater: hw,
  }
  return {
    claim: {
      sessionId: S,
      ...pin,
      targetInvocationId: `invocation-${target}`,
      targetRunId: target,
      targetTurnId: `turn-${target}`,
      claimedAt: AT,
    },
    header: header(target, { parentRunId: 'source', parentTurnId: 'turn-source', continuationSource: pin }),
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}
const now = () => Number(process.hrtime.bigint()) / 1e6

// Interleaves the store and its floor in rounds, so load from other work falls on both alike.
const duel = async (rounds, perRound, pair) => {
  const times = { store: [], floor: [] }
  for (let r = 0; r < rounds; r += 1) {
    for (const side of r % 2 === 0 ? ['store', 'floor'] : ['floor', 'store']) {
      for (let i = 0; i < perRound; i += 1) {
        const started = now()
        await pair[side](r * perRound + i)
        times[side].push(now() - started)
      }
    }
  }
  const summary = (xs) => ({
    opsPerSecond: Number((1000 / (xs.reduce((a, b) => a + b, 0) / xs.length)).toFixed(1)),
    medianMs: Number(median(xs).toFixed(3)),
  })
  return { store: summary(times.store), floor: summary(times.floor) }
}

const appendsAndClaims = async (rounds, perRound) => {
  const root = mkdtempSync(join(tmpdir(), 'maka-bench-stores-'))
  try {
    const rows = makeLedgerBuilderUnsafe({
      sessionId: S,
      invocationId: 'invocation-source',
      runId: 'source',
      turnId: 'turn-source',
    })
    const events = Array.from({ length: rounds * perRound + 1 }, (_, i) =>
      i === 0 ? rows.userText('go') : rows.modelText(`step ${i} `.repeat(20)),
    )
    const text = events.map((e) => JSON.stringify(e))

    // JSONL
    const jsonl = makeFileStores(join(root, 'jsonl'))
    await must(jsonl.runs.create(header('source')))
    const floorFile = join(root, 'floor.jsonl')
    const fd = openSync(floorFile, 'a', 0o600)
    const floorDir = join(root, 'floor-claims')
    mkdirSync(floorDir)
    const jsonlAppends = await duel(rounds, perRound, {
      store: (i) => must(jsonl.events.append(S, 'source', events[i], { durable: true })),
      floor: (i) => {
        writeSync(fd, `${text[i]}\n`)
        fsyncSync(fd)
      },
    })
    // The same appends through the synchronous port, which the commands that run a turn and exit
    // (`run`, `resume`) use (decision 68), on a ledger of their own.
    const jsonlSync = makeFileStores(join(root, 'jsonl-sync'), { fs: syncStoreFs })
    await must(jsonlSync.runs.create(header('source')))
    const jsonlSyncAppends = await duel(rounds, perRound, {
      store: (i) => must(jsonlSync.events.append(S, 'source', events[i], { durable: true })),
      floor: (i) => {
        writeSync(fd, `${text[i]}\n`)
        fsyncSync(fd)
      },
    })
    closeSync(fd)
    const dirFd = openSync(floorDir, 'r')
    const jsonlClaims = await duel(rounds, Math.max(1, Math.floor(perRound / 4)), {
      store: (i) => {
        const { claim, header: h } = claimOf(i)
        return must(jsonl.claims.claimBoundary(claim, h))
      },
      floor: (i) => {
        const { claim, header: h } = claimOf(i)
        for (const [name, record] of [
          [`c-${i}.json`, claim],
          [`h-${i}.json`, h],
        ]) {
          const f = openSync(join(floorDir, name), 'wx', 0o600)
          writeSync(f, `${JSON.stringify(record, null, 2)}\n`)
          fsyncSync(f)
          closeSync(f)
        }
        fsyncSync(dirFd)
      },
    })
    closeSync(dirFd)

    // SQLite
    const sqlite = openSqliteStores(join(root, 'maka.sqlite'))
    await must(sqlite.runs.create(header('source')))
    const bare = new Database(join(root, 'floor.sqlite'))
    bare.pragma('journal_mode = WAL')
    bare.pragma('synchronous = FULL')
    bare.exec('CREATE TABLE rows (seq INTEGER PRIMARY KEY, row TEXT NOT NULL)')
    bare.exec('CREATE TABLE pairs (k INTEGER NOT NULL, side TEXT NOT NULL, record TEXT NOT NULL, UNIQUE (k, side))')
    const insertRow = bare.prepare('INSERT INTO rows (seq, row) VALUES (?, ?)')
    const insertPair = bare.prepare('INSERT INTO pairs (k, side, record) VALUES (?, ?, ?)')
    const pairTx = bare.transaction((k, a, b) => {
      insertPair.run(k, 'claim', a)
      insertPair.run(k, 'header', b)
    })
    const sqliteAppends = await duel(rounds, perRound, {
      store: (i) => must(sqlite.events.append(S, 'source', events[i], { durable: true })),
      floor: (i) => insertRow.run(i + 1, text[i]),
    })
    const sqliteClaims = await duel(rounds, Math.max(1, Math.floor(perRound / 4)), {
      store: (i) => {
        const { claim, header: h } = claimOf(i)
        return must(sqlite.claims.claimBoundary(claim, h))
      },
      floor: (i) => {
        const { claim, header: h } = claimOf(i)
        pairTx.immediate(i, JSON.stringify(claim), JSON.stringify(h))
      },
    })
    bare.close()
    await sqlite.close()

    const postgresUrl = value('--postgres', null)
    if (postgresUrl === null) return { jsonlAppends, jsonlSyncAppends, jsonlClaims, sqliteAppends, sqliteClaims }
    // PostgreSQL: the store on its own database, the floor on another of the same server.
    const admin = new pg.Client({ connectionString: postgresUrl })
    await admin.connect()
    const dbUrl = (name) => {
      const u = new URL(postgresUrl)
      u.pathname = `/${name}`
      return u.toString()
    }
    for (const name of ['bench_store', 'bench_floor']) {
      await admin.query(`DROP DATABASE IF EXISTS ${name}`)
      await admin.query(`CREATE DATABASE ${name}`)
    }
    const postgres = openPostgresStores(dbUrl('bench_store'))
    await must(postgres.runs.create(header('source')))
    const floorPg = new pg.Client({ connectionString: dbUrl('bench_floor') })
    await floorPg.connect()
    await floorPg.query('CREATE TABLE rows (seq integer PRIMARY KEY, row text NOT NULL)')
    await floorPg.query(
      'CREATE TABLE pairs (k integer NOT NULL, side text NOT NULL, record text NOT NULL, UNIQUE (k, side))',
    )
    const postgresAppends = await duel(rounds, perRound, {
      store: (i) => must(postgres.events.append(S, 'source', events[i], { durable: true })),
      floor: (i) => floorPg.query('INSERT INTO rows (seq, row) VALUES ($1, $2)', [i + 1, text[i]]),
    })
    const postgresClaims = await duel(rounds, Math.max(1, Math.floor(perRound / 4)), {
      store: (i) => {
        const { claim, header: h } = claimOf(i)
        return must(postgres.claims.claimBoundary(claim, h))
      },
      floor: async (i) => {
        const { claim, header: h } = claimOf(i)
        await floorPg.query('BEGIN')
        await floorPg.query('INSERT INTO pairs (k, side, record) VALUES ($1, $2, $3)', [
          i,
          'claim',
          JSON.stringify(claim),
        ])
        await floorPg.query('INSERT INTO pairs (k, side, record) VALUES ($1, $2, $3)', [i, 'header', JSON.stringify(h)])
        await floorPg.query('COMMIT')
      },
    })
    await floorPg.end()
    await postgres.close()
    for (const name of ['bench_store', 'bench_floor']) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await admin.end()
    return { jsonlAppends, jsonlSyncAppends, jsonlClaims, sqliteAppends, sqliteClaims, postgresAppends, postgresClaims }
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}

// Every session of a JSONL fixture data dir as rows of the SQL schema: the session's id and record,
// each run's header and each ledger line with its 1-based seq. Yields one session at a time, so a
// 10,000-session tree never sits in memory whole.
function* fixtureSessions(dataDir) {
  const sessionsDir = join(dataDir, 'sessions')
  for (const sessionId of readdirSync(sessionsDir)) {
    const sessionDir = join(sessionsDir, sessionId)
    const record = JSON.stringify(JSON.parse(readFileSync(join(sessionDir, 'session.json'), 'utf8')))
    const runs = readdirSync(join(sessionDir, 'runs')).map((runId) => {
      const runDir = join(sessionDir, 'runs', runId)
      const lines = readFileSync(join(runDir, 'runtime-events.jsonl'), 'utf8')
        .split('\n')
        .filter((l) => l !== '')
      const header = JSON.stringify(JSON.parse(readFileSync(join(runDir, 'run.json'), 'utf8')))
      return { runId, header, lines }
    })
    yield { sessionId, record, runs }
  }
}

// A SQLite database holding every session of a JSONL fixture data dir, written straight in one
// transaction (like the JSONL fixtures, not through the store's per-row commits).
const sqliteFixture = async (dataDir, file) => {
  rmSync(file, { force: true })
  rmSync(`${file}-wal`, { force: true })
  rmSync(`${file}-shm`, { force: true })
  const stores = openSqliteStores(file)
  await must(stores.sessions.list())
  await stores.close()
  const db = new Database(file)
  const insertId = db.prepare('INSERT INTO session_ids VALUES (?)')
  const insertSession = db.prepare('INSERT INTO sessions VALUES (?, ?)')
  const insertRun = db.prepare('INSERT INTO runs VALUES (?, ?, ?)')
  const insertEvent = db.prepare('INSERT INTO events (session_id, run_id, seq, event_id, row) VALUES (?, ?, ?, ?, ?)')
  db.transaction(() => {
    for (const session of fixtureSessions(dataDir)) {
      insertId.run(session.sessionId)
      insertSession.run(session.sessionId, session.record)
      for (const run of session.runs) {
        insertRun.run(session.sessionId, run.runId, run.header)
        run.lines.forEach((line, i) => insertEvent.run(session.sessionId, run.runId, i + 1, JSON.parse(line).id, line))
      }
    }
  })()
  db.close()
  return { file }
}

// A PostgreSQL database holding every session of a JSONL fixture data dir: the schema made by the
// store itself, the rows written straight in one transaction, 1,000 to a statement.
const postgresFixture = async (dataDir, adminUrl, name) => {
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  const target = new URL(adminUrl)
  target.pathname = `/${name}`
  const url = target.toString()
  const stores = openPostgresStores(url)
  await must(stores.sessions.list())
  await stores.close()
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  const batches = {
    sessions: {
      sql:
        'WITH t AS (SELECT e->>0 AS id, e->>1 AS record FROM jsonb_array_elements($1::jsonb) AS e), ' +
        'i AS (INSERT INTO session_ids SELECT id FROM t) INSERT INTO sessions SELECT id, record FROM t',
      rows: [],
    },
    runs: { sql: 'INSERT INTO runs SELECT e->>0, e->>1, e->>2 FROM jsonb_array_elements($1::jsonb) AS e', rows: [] },
    events: {
      sql:
        'INSERT INTO events (session_id, run_id, seq, event_id, row) ' +
        'SELECT e->>0, e->>1, (e->>2)::integer, e->>3, e->>4 FROM jsonb_array_elements($1::jsonb) AS e',
      rows: [],
    },
  }
  const flush = async (batch) => {
    if (batch.rows.length === 0) return
    await client.query(batch.sql, [JSON.stringify(batch.rows)])
    batch.rows = []
  }
  // Parents first, as the store writes them.
  const flushAll = async () => {
    await flush(batches.sessions)
    await flush(batches.runs)
    await flush(batches.events)
  }
  const add = async (batch, row) => {
    batch.rows.push(row)
    if (batch.rows.length >= 1000) await flushAll()
  }
  await client.query('BEGIN')
  for (const session of fixtureSessions(dataDir)) {
    await add(batches.sessions, [session.sessionId, session.record])
    for (const run of session.runs) {
      await add(batches.runs, [session.sessionId, run.runId, run.header])
      for (const [i, line] of run.lines.entries()) {
        await add(batches.events, [session.sessionId, run.runId, i + 1, JSON.parse(line).id, line])
      }
    }
  }
  await flushAll()
  await client.query('COMMIT')
  // A database in use has its statistics: autovacuum gathers them after a bulk load, at a moment of
  // its own, which made the first repetitions' plans (and their times) differ from the later ones'.
  await client.query('VACUUM ANALYZE')
  await client.end()
  return { database: name }
}

const postgresFixtureArgs = value('--postgres-fixture', null)
const fixtureArgs = value('--sqlite-fixture', null)
if (postgresFixtureArgs !== null) {
  const [dataDir, adminUrl, name] = postgresFixtureArgs.split(',')
  process.stdout.write(`${JSON.stringify(await postgresFixture(dataDir, adminUrl, name))}\n`)
} else if (fixtureArgs !== null) {
  const [dataDir, file] = fixtureArgs.split(',')
  process.stdout.write(`${JSON.stringify(await sqliteFixture(dataDir, file))}\n`)
} else {
  const rounds = Number(value('--rounds', '6'))
  const perRound = Number(value('--per-round', '100'))
  process.stdout.write(`${JSON.stringify(await appendsAndClaims(rounds, perRound))}\n`)
}
