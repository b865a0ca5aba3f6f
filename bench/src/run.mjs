/**
 * `pnpm bench`: the CLI commands a user runs, timed end to end as separate processes against their
 * floors, in the same run and interleaved (repetition i runs every variant of a group before
 * repetition i + 1 starts, in a rotating order), so load on a shared machine hits both sides.
 *
 *   node src/run.mjs [--quick] [--reps N] [--journal-reps N] [--only GROUPS] [--cli PATH] [--label after|before] [--check]
 *
 * Groups (sizes in --quick mode in brackets):
 *   ledger  `resume plan --json` and `resume` at 10k / 100k / 1M events [2k / 20k] against a node
 *           script that reads the ledger and JSON.parses every line
 *   tree    `recover` on 10,000 sessions × 3 runs [500] against a recursive walk that reads and
 *           parses every file of the tree; `resume plan --session X --json` on that tree against
 *           the same command on a data dir holding only session X
 *   cold    every command on a tiny data dir against `node -e 0`
 *   stores  durable appends/s and claim latency, JSONL, SQLite and PostgreSQL (a scratch cluster
 *           of its own), each against its floor (src/stores.mjs); `resume plan --json` at 100k
 *           events [20k] on JSONL, SQLite and PostgreSQL
 *   firstbyte `maka resume` on a 100-event ledger against an OpenAI-compatible endpoint on loopback:
 *           from the command's start to the first byte the endpoint receives, against `node -e 0` plus
 *           as many write+fsync as the resume makes before it (src/firstByteEndpoint.mjs)
 *   sql     `resume plan --json` at 100k and 1M events [20k] and `recover` on the 10,000-session tree
 *           [500], on SQLite and PostgreSQL copies of the fixtures, against a bare SELECT of the
 *           same rows with JSON.parse (src/floors/selectParse.mjs)
 *   journal `maka run`, a turn of 20 `read_file` calls, with the tool journal off and on: (on − off)
 *           / 20 against one bare `write` + `fsync` of the journal's row size in the same folder,
 *           timed inside a floor process of 20 such appends (the whole floor process, less the same
 *           process with 0 appends and less `node -e 0`, is reported too); 50 repetitions [10]
 *           (`--journal-reps`), each in the reverse order of the one before. Its results and its
 *           block of `docs/performance.md` are its own: `results/journal.json`
 * Each variant: ≥ 5 repetitions [3], wall time median and min, peak RSS (`/usr/bin/time`'s
 * maximum resident set size) median. Writes `results/<label>.json` (`latest.json` for the
 * default label `after`) and, when both exist, the table in `docs/performance.md`. Exit code 0 —
 * it is a report — unless `--check` is given and a target is missed.
 */
import { spawn, spawnSync } from 'node:child_process'
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { cpus, loadavg, tmpdir, totalmem } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ledgerFixture, treeFixture, undoResume, workspace, TARGET_RUN } from './fixtures.mjs'
import { startScratchPostgres } from '../../scripts/scratch-postgres.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const repoRoot = resolve(here, '..', '..')
const resultsDir = join(here, '..', 'results')

const parseArgs = (argv) => {
  const options = {
    quick: false,
    reps: undefined,
    cli: join(repoRoot, 'apps/cli/dist/bin.cjs'),
    label: 'after',
    check: false,
    only: undefined,
  }
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]
    if (arg === '--quick') options.quick = true
    else if (arg === '--check') options.check = true
    else if (arg === '--reps') options.reps = Number(argv[++i])
    else if (arg === '--cli') options.cli = resolve(argv[++i])
    else if (arg === '--label') options.label = argv[++i]
    else if (arg === '--only') options.only = argv[++i].split(',')
    else if (arg === '--events') options.events = argv[++i].split(',').map(Number)
    else if (arg === '--sessions') options.sessions = Number(argv[++i])
    else if (arg === '--journal-reps') options.journalReps = Number(argv[++i])
    else if (arg === '--') continue
    else
      throw new Error(
        `unknown option ${arg} (use --quick, --reps N, --journal-reps N, --cli PATH, --label NAME, --only GROUPS (ledger,tree,cold,stores,firstbyte,sql,journal), --check)`,
      )
  }
  if (options.reps !== undefined && (!Number.isSafeInteger(options.reps) || options.reps < 1)) {
    throw new Error('--reps needs a positive integer')
  }
  options.reps ??= options.quick ? 3 : 5
  if (options.journalReps !== undefined && (!Number.isSafeInteger(options.journalReps) || options.journalReps < 2)) {
    throw new Error('--journal-reps needs an integer of 2 or more')
  }
  // The journal's cost is a few milliseconds in a turn of ~100: it needs many more repetitions.
  options.journalReps ??= options.quick ? 10 : 50
  return options
}

const options = parseArgs(process.argv.slice(2))
const sizes = options.events ?? (options.quick ? [2_000, 20_000] : [10_000, 100_000, 1_000_000])
const treeSessions = options.sessions ?? (options.quick ? 500 : 10_000)
const devNull = openSync('/dev/null', 'w')
const timeBin = existsSync('/usr/bin/time') ? '/usr/bin/time' : null
const rssFile = join(mkdtempSync(join(tmpdir(), 'maka-bench-rss-')), 'rss')
const env = { ...process.env, MAKA_RUNTIME_SAFE_BOUNDARY_RESUME: '1', NO_COLOR: '1' }
delete env.MAKA_HOME

// One process, timed from spawn to exit; stdout goes to /dev/null, stderr is kept for errors.
const runOnce = (args, expectCodes, runEnv = env) => {
  const argv =
    timeBin === null ? [process.execPath, ...args] : [timeBin, '-f', '%M', '-o', rssFile, process.execPath, ...args]
  const started = process.hrtime.bigint()
  const child = spawnSync(argv[0], argv.slice(1), {
    stdio: ['ignore', devNull, 'pipe'],
    env: runEnv,
    maxBuffer: 1 << 24,
  })
  const ms = Number(process.hrtime.bigint() - started) / 1e6
  if (!expectCodes.includes(child.status)) {
    throw new Error(`${args.join(' ')} exited ${child.status}: ${String(child.stderr).slice(0, 2000)}`)
  }
  const rssKb = timeBin === null ? NaN : Number(readFileSync(rssFile, 'utf8').trim().split('\n').pop())
  return { ms, rssBytes: rssKb * 1024 }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(s.length / 2)
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2
}

/**
 * Runs every variant `reps` times, interleaved. A variant: { name, args, codes, after? }.
 */
const interleaved = (group, variants) => {
  const samples = new Map(variants.map((v) => [v.name, []]))
  for (let rep = 0; rep < options.reps; rep += 1) {
    for (let k = 0; k < variants.length; k += 1) {
      const v = variants[(k + rep) % variants.length]
      if (v.before !== undefined) v.before()
      samples.get(v.name).push(runOnce(v.args, v.codes ?? [0]))
      if (v.after !== undefined) v.after()
    }
    process.stderr.write(`  ${group}: repetition ${rep + 1}/${options.reps} done\n`)
  }
  const out = {}
  for (const [name, xs] of samples) {
    out[name] = {
      medianMs: median(xs.map((x) => x.ms)),
      minMs: Math.min(...xs.map((x) => x.ms)),
      medianRssBytes: median(xs.map((x) => x.rssBytes)),
      maxRssBytes: Math.max(...xs.map((x) => x.rssBytes)),
      samplesMs: xs.map((x) => Math.round(x.ms)),
    }
  }
  return out
}

const cli = (...args) => [options.cli, ...args]
const floor = (script, ...args) => [join(here, 'floors', script), ...args]

const ledgerGroup = () =>
  sizes.map((events) => {
    process.stderr.write(`ledger ${events} events: preparing\n`)
    const f = ledgerFixture(events)
    const cleanup = () => undoResume(f.dataDir, f.sessionId, [TARGET_RUN])
    cleanup()
    const results = interleaved(`ledger ${events}`, [
      { name: 'floor', args: floor('readParse.mjs', f.ledger) },
      {
        name: 'resumePlanJson',
        args: cli('resume', 'plan', '--session', f.sessionId, '--json', '--data-dir', f.dataDir),
      },
      { name: 'resume', args: cli('resume', '--session', f.sessionId, '--data-dir', f.dataDir), after: cleanup },
      // Decision 103: a session shown whole, every row narrated (report only: no target yet).
      { name: 'showJson', args: cli('show', f.sessionId, '--json', '--data-dir', f.dataDir) },
    ])
    return { events, ledgerBytes: f.bytes, results }
  })

const treeGroup = () => {
  process.stderr.write(`tree ${treeSessions} sessions: preparing\n`)
  const t = treeFixture(treeSessions)
  const results = interleaved(`tree ${treeSessions}`, [
    { name: 'floor', args: floor('walk.mjs', t.tree) },
    { name: 'recover', args: cli('recover', '--data-dir', t.tree) },
    { name: 'resumePlanTree', args: cli('resume', 'plan', '--session', t.sessionId, '--json', '--data-dir', t.tree) },
    {
      name: 'resumePlanSingle',
      args: cli('resume', 'plan', '--session', t.sessionId, '--json', '--data-dir', t.single),
    },
    // The same plan without --session, so the most recent session is picked (report only).
    { name: 'resumePlanPicked', args: cli('resume', 'plan', '--json', '--data-dir', t.tree) },
  ])
  return { sessions: treeSessions, runsPerSession: 3, results }
}

// Store adapters (issue 14): durable appends/s and claim latency of JSONL and SQLite against their
// floors (src/stores.mjs, in-process), and plan time at 100k events [quick 20k] per store.
// PostgreSQL runs on a scratch cluster of its own (scripts/scratch-postgres.mjs, fsync on), stopped
// and removed when the group ends.
const storesGroup = async () => {
  const events = options.quick ? 20_000 : 100_000
  process.stderr.write('stores: starting a scratch PostgreSQL\n')
  const cluster = await startScratchPostgres({ fsync: true })
  try {
    return storesGroupOn(cluster.url, events)
  } finally {
    cluster.stop()
  }
}

const storesGroupOn = (postgresUrl, events) => {
  process.stderr.write('stores: appends and claims\n')
  const micro = spawnSync(
    process.execPath,
    [
      join(here, 'stores.mjs'),
      '--rounds',
      options.quick ? '2' : '6',
      '--per-round',
      options.quick ? '50' : '200',
      '--postgres',
      postgresUrl,
    ],
    { encoding: 'utf8', env, maxBuffer: 1 << 24 },
  )
  if (micro.status !== 0) throw new Error(`stores.mjs exited ${micro.status}: ${micro.stderr.slice(0, 2000)}`)
  process.stderr.write(`stores: plan time at ${events} events, preparing\n`)
  const f = ledgerFixture(events)
  const sqliteFile = join(mkdtempSync(join(tmpdir(), 'maka-bench-sqlite-')), 'maka.sqlite')
  const made = spawnSync(
    process.execPath,
    [join(here, 'stores.mjs'), '--sqlite-fixture', `${f.dataDir},${sqliteFile}`],
    { encoding: 'utf8', env },
  )
  if (made.status !== 0) throw new Error(`stores.mjs --sqlite-fixture exited ${made.status}: ${made.stderr}`)
  const planUrl = new URL(postgresUrl)
  planUrl.pathname = '/bench_plan'
  const madePg = spawnSync(
    process.execPath,
    [join(here, 'stores.mjs'), '--postgres-fixture', `${f.dataDir},${postgresUrl},bench_plan`],
    { encoding: 'utf8', env },
  )
  if (madePg.status !== 0) throw new Error(`stores.mjs --postgres-fixture exited ${madePg.status}: ${madePg.stderr}`)
  const plan = interleaved(`stores plan ${events}`, [
    { name: 'floor', args: floor('readParse.mjs', f.ledger) },
    { name: 'planJsonl', args: cli('resume', 'plan', '--session', f.sessionId, '--json', '--data-dir', f.dataDir) },
    {
      name: 'planSqlite',
      args: cli('resume', 'plan', '--session', f.sessionId, '--json', '--store', `sqlite:${sqliteFile}`),
    },
    {
      name: 'planPostgres',
      args: cli('resume', 'plan', '--session', f.sessionId, '--json', '--store', planUrl.toString()),
    },
  ])
  rmSync(dirname(sqliteFile), { recursive: true, force: true })
  return { events, micro: JSON.parse(micro.stdout), plan }
}

// Issue 23 item 4b: `resume plan` on a 100k- and a 1M-event ledger [quick 20k] and `recover` on the
// 10,000-session tree [quick 500], on SQLite and on PostgreSQL (a scratch cluster of its own, fsync
// on), each against a bare `SELECT` of the rows it reads with `JSON.parse` (floors/selectParse.mjs).
// The databases are copies of the JSONL fixtures (stores.mjs), removed when the group ends.
const sqlGroup = async () => {
  process.stderr.write('sql: starting a scratch PostgreSQL\n')
  const cluster = await startScratchPostgres({ fsync: true })
  try {
    return sqlGroupOn(cluster.url)
  } finally {
    cluster.stop()
  }
}

// SQLite and PostgreSQL copies of a JSONL data dir, as `--store` values.
const sqlCopies = (dataDir, postgresUrl, name) => {
  const sqliteDir = mkdtempSync(join(tmpdir(), 'maka-bench-sql-'))
  const sqliteFile = join(sqliteDir, 'maka.sqlite')
  for (const [flag, value] of [
    ['--sqlite-fixture', `${dataDir},${sqliteFile}`],
    ['--postgres-fixture', `${dataDir},${postgresUrl},${name}`],
  ]) {
    const made = spawnSync(process.execPath, [join(here, 'stores.mjs'), flag, value], { encoding: 'utf8', env })
    if (made.status !== 0) throw new Error(`stores.mjs ${flag} exited ${made.status}: ${made.stderr.slice(0, 2000)}`)
  }
  const url = new URL(postgresUrl)
  url.pathname = `/${name}`
  return {
    sqlite: `sqlite:${sqliteFile}`,
    postgres: url.toString(),
    remove: () => rmSync(sqliteDir, { recursive: true, force: true }),
  }
}

const sqlGroupOn = (postgresUrl) => {
  const ledgers = (options.quick ? [20_000] : [100_000, 1_000_000]).map((events) => {
    process.stderr.write(`sql plan ${events} events: preparing\n`)
    const f = ledgerFixture(events)
    const copies = sqlCopies(f.dataDir, postgresUrl, `bench_ledger_${events}`)
    try {
      const plan = (store) => cli('resume', 'plan', '--session', f.sessionId, '--json', '--store', store)
      const results = interleaved(`sql plan ${events}`, [
        { name: 'sqliteFloor', args: floor('selectParse.mjs', copies.sqlite, 'ledger', f.sessionId) },
        { name: 'sqlitePlan', args: plan(copies.sqlite) },
        { name: 'postgresFloor', args: floor('selectParse.mjs', copies.postgres, 'ledger', f.sessionId) },
        { name: 'postgresPlan', args: plan(copies.postgres) },
      ])
      return { events, results }
    } finally {
      copies.remove()
    }
  })
  process.stderr.write(`sql recover ${treeSessions} sessions: preparing\n`)
  const t = treeFixture(treeSessions)
  const copies = sqlCopies(t.tree, postgresUrl, `bench_tree_${treeSessions}`)
  try {
    const results = interleaved(`sql recover ${treeSessions}`, [
      { name: 'sqliteFloor', args: floor('selectParse.mjs', copies.sqlite, 'headers') },
      { name: 'sqliteRecover', args: cli('recover', '--store', copies.sqlite) },
      { name: 'postgresFloor', args: floor('selectParse.mjs', copies.postgres, 'headers') },
      { name: 'postgresRecover', args: cli('recover', '--store', copies.postgres) },
    ])
    return { ledgers, tree: { sessions: treeSessions, runsPerSession: 3, results } }
  } finally {
    copies.remove()
  }
}

// Issue 23 item 4a: what a user waits for between starting `maka resume` and the first byte the
// model's endpoint receives — recovery, the plan, the claim, the durable start row, the replay and
// the request — on a ledger fixture of FIRST_BYTE_EVENTS rows, against an OpenAI-compatible endpoint
// on loopback in a process of its own (src/firstByteEndpoint.mjs, which stamps the monotonic clock
// when a request's first byte arrives). The floor is `node -e 0` plus as many `write` + `fsync` as
// the resume makes before that byte: one floor process (floors/writeFsync.mjs) doing that many.
// The count is read with strace when the machine has it, else FIRST_BYTE_FSYNCS (decision 175).
const FIRST_BYTE_EVENTS = 100
const FIRST_BYTE_FSYNCS = 13

const waitForLine = (child) =>
  new Promise((done, fail) => {
    let text = ''
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (chunk) => {
      text += chunk
      if (text.includes('\n')) done(JSON.parse(text.split('\n')[0]))
    })
    child.on('exit', (code) => fail(new Error(`the first-byte endpoint exited ${code}`)))
  })

const fsyncsBeforeFirstByte = (args, runEnv, port) => {
  const which = spawnSync('sh', ['-c', 'command -v strace'], { encoding: 'utf8' })
  if (which.status !== 0) return { count: FIRST_BYTE_FSYNCS, counted: false }
  const trace = join(mkdtempSync(join(tmpdir(), 'maka-bench-strace-')), 'trace')
  const traced = spawnSync(
    'strace',
    ['-f', '-e', 'trace=fsync,fdatasync,connect', '-o', trace, process.execPath, ...args],
    { stdio: ['ignore', devNull, 'pipe'], env: runEnv },
  )
  if (traced.status !== 0) return { count: FIRST_BYTE_FSYNCS, counted: false }
  let count = 0
  for (const line of readFileSync(trace, 'utf8').split('\n')) {
    if (line.includes('connect(') && line.includes(`htons(${port})`)) return { count, counted: true }
    if (/\b(fsync|fdatasync)\(/.test(line)) count += 1
  }
  return { count: FIRST_BYTE_FSYNCS, counted: false }
}

const firstByteGroup = async () => {
  process.stderr.write('firstbyte: preparing\n')
  const f = ledgerFixture(FIRST_BYTE_EVENTS)
  const cleanup = () => undoResume(f.dataDir, f.sessionId, [TARGET_RUN])
  cleanup()
  const root = mkdtempSync(join(tmpdir(), 'maka-bench-firstbyte-'))
  const stamps = join(root, 'stamps')
  writeFileSync(stamps, '')
  const endpoint = spawn(process.execPath, [join(here, 'firstByteEndpoint.mjs'), stamps], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  try {
    const { port } = await waitForLine(endpoint)
    const args = cli(
      'resume',
      '--session',
      f.sessionId,
      '--data-dir',
      f.dataDir,
      '--provider',
      'openai-compatible',
      '--base-url',
      `http://127.0.0.1:${port}/v1`,
      '--model',
      'm',
    )
    const runEnv = { ...env, MAKA_API_KEY: 'bench' }
    const fsyncs = fsyncsBeforeFirstByte(args, runEnv, port)
    cleanup()
    const lastStamp = () => BigInt(readFileSync(stamps, 'utf8').trim().split('\n').pop())
    const samples = { resume: [], floor: [], node: [] }
    for (let rep = 0; rep < options.reps; rep += 1) {
      const order = rep % 2 === 0 ? ['resume', 'floor', 'node'] : ['node', 'floor', 'resume']
      for (const side of order) {
        if (side === 'resume') {
          const before = readFileSync(stamps, 'utf8').length
          const started = process.hrtime.bigint()
          runOnce(args, [0], runEnv)
          if (readFileSync(stamps, 'utf8').length === before)
            throw new Error('firstbyte: the resume never reached the endpoint')
          samples.resume.push(Number(lastStamp() - started) / 1e6)
          cleanup()
        } else if (side === 'floor') {
          // writeFsync.mjs makes one durable append before its N: N = count − 1 gives count in all.
          samples.floor.push(
            runOnce(floor('writeFsync.mjs', root, String(Math.max(0, fsyncs.count - 1)), '512'), [0]).ms,
          )
        } else {
          samples.node.push(runOnce(['-e', '0'], [0]).ms)
        }
      }
      process.stderr.write(`  firstbyte: repetition ${rep + 1}/${options.reps} done\n`)
    }
    const summary = (xs) => ({ medianMs: median(xs), minMs: Math.min(...xs), samplesMs: xs.map((x) => Math.round(x)) })
    return {
      events: FIRST_BYTE_EVENTS,
      fsyncs: fsyncs.count,
      fsyncsCounted: fsyncs.counted,
      results: { resume: summary(samples.resume), floor: summary(samples.floor), 'node -e 0': summary(samples.node) },
    }
  } finally {
    endpoint.kill('SIGTERM')
    rmSync(root, { recursive: true, force: true })
  }
}

const coldGroup = () => {
  process.stderr.write('cold start: preparing\n')
  const small = ledgerFixture(20)
  const empty = mkdtempSync(join(tmpdir(), 'maka-bench-empty-'))
  const runDir = join(tmpdir(), `maka-bench-run-${process.pid}`)
  const cleanup = () => undoResume(small.dataDir, small.sessionId, [TARGET_RUN])
  cleanup()
  const ws = workspace()
  const results = interleaved('cold start', [
    { name: 'node -e 0', args: ['-e', '0'] },
    { name: 'maka --help', args: cli('--help') },
    { name: 'maka sessions', args: cli('sessions', '--data-dir', empty) },
    { name: 'maka recover', args: cli('recover', '--data-dir', empty) },
    { name: 'maka show', args: cli('show', small.sessionId, '--data-dir', small.dataDir) },
    {
      name: 'maka resume plan',
      args: cli('resume', 'plan', '--session', small.sessionId, '--json', '--data-dir', small.dataDir),
    },
    {
      name: 'maka resume',
      args: cli('resume', '--session', small.sessionId, '--data-dir', small.dataDir),
      after: cleanup,
    },
    {
      name: 'maka run',
      args: cli('run', '--cwd', ws.cwd, '--data-dir', runDir, 'List the files.'),
      after: () => rmSync(runDir, { recursive: true, force: true }),
    },
  ])
  rmSync(empty, { recursive: true, force: true })
  return { results }
}

// Issue 22 item 7: what the tool journal costs a turn. `maka run` with a scripted model (no delays)
// whose turn is JOURNAL_CALLS `read_file` calls and then a text, with the journal off and on, against
// JOURNAL_CALLS bare durable appends (floors/writeFsync.mjs: `write` of a row of the journal's size +
// `fsync`, into the same folder as the runs' data dirs), each floor process against the same process
// with no append. Every repetition runs the variants in the reverse order of the one before, so
// journal off and on, and the floor with and without its appends, always run back to back and a
// pair of repetitions cancels a linear drift of the machine's load (decision 165).
const JOURNAL_CALLS = 20

// The one ledger a turn of the group wrote, and what is in it.
const turnLedger = (dataDir) => {
  const sessions = join(dataDir, 'sessions')
  const [session] = readdirSync(sessions)
  const runs = join(sessions, session, 'runs')
  const [run] = readdirSync(runs)
  const lines = readFileSync(join(runs, run, 'runtime-events.jsonl'), 'utf8')
    .split('\n')
    .slice(0, -1)
  const rows = lines.map((line) => ({ bytes: Buffer.byteLength(line) + 1, row: JSON.parse(line) }))
  const perCall = rows.filter(
    (r) => r.row.actions?.toolDispatch !== undefined || r.row.content?.kind === 'function_response',
  )
  // The mean time from one call of the model to the next: the pace of the journal's appends.
  const callTimes = rows.filter((r) => r.row.content?.kind === 'function_call').map((r) => Number(r.row.ts))
  return {
    rows: rows.length,
    bytes: rows.reduce((sum, r) => sum + r.bytes, 0),
    callIntervalMs: (callTimes[callTimes.length - 1] - callTimes[0]) / (callTimes.length - 1),
    dispatchRows: rows.filter((r) => r.row.actions?.toolDispatch !== undefined).length,
    responseRows: rows.filter((r) => r.row.content?.kind === 'function_response').length,
    // The rows a protocol run writes durably per call (T1 and T2), their mean size: the floor's row.
    perCallRowBytes: Math.round(perCall.reduce((sum, r) => sum + r.bytes, 0) / perCall.length),
  }
}

const journalGroup = () => {
  process.stderr.write('journal: preparing\n')
  const reps = options.journalReps
  const root = mkdtempSync(join(tmpdir(), 'maka-bench-journal-'))
  const ws = join(root, 'workspace')
  mkdirSync(ws)
  writeFileSync(join(ws, 'notes.txt'), 'A short note that every call of the turn reads.\n')
  const script = join(root, 'script.json')
  const calls = Array.from({ length: JOURNAL_CALLS }, () => ({
    toolCall: { name: 'read_file', args: { path: 'notes.txt' } },
  }))
  writeFileSync(script, JSON.stringify([...calls, { text: 'I read notes.txt.' }]))
  const dataDir = join(root, 'data')
  const clean = () => rmSync(dataDir, { recursive: true, force: true })
  // Each turn also reports its own CPU time at exit (src/cpuAtExit.cjs), on and off alike.
  const cpuOut = join(root, 'cpu')
  const turnArgs = [
    '--require',
    join(here, 'cpuAtExit.cjs'),
    ...cli('run', '--cwd', ws, '--data-dir', dataDir, '--script', script, 'Read notes.txt.'),
  ]
  const journalEnv = (value) => ({ ...env, MAKA_RUNTIME_TOOL_JOURNAL: value, BENCH_CPU_OUT: cpuOut })
  // One turn each way first: it writes the commands' code cache if a build left none, and shows
  // that the journal really is on in one and off in the other.
  const ledgers = {}
  for (const [name, value] of [
    ['off', '0'],
    ['on', '1'],
  ]) {
    clean()
    runOnce(turnArgs, [0], journalEnv(value))
    ledgers[name] = turnLedger(dataDir)
    clean()
  }
  if (ledgers.on.dispatchRows !== JOURNAL_CALLS || ledgers.off.dispatchRows !== 0) {
    throw new Error(
      `journal: expected ${JOURNAL_CALLS} dispatch rows with the journal on and none off, found ${ledgers.on.dispatchRows} and ${ledgers.off.dispatchRows}`,
    )
  }
  const rowBytes = ledgers.on.perCallRowBytes
  const floorOut = join(root, 'floor-ns')
  const floorArgs = (count, gapUs = 0) =>
    floor('writeFsync.mjs', root, String(count), String(rowBytes), floorOut, String(gapUs))
  // The paced floor spaces its appends as the turn with the journal off spaces its calls (decision 241).
  const gapUs = Math.max(0, Math.round(ledgers.off.callIntervalMs * 1000))
  const paced = `floor, ${JOURNAL_CALLS} appends ${gapUs} µs apart`
  const variants = [
    { name: 'node -e 0', args: ['-e', '0'] },
    { name: 'journal off', args: turnArgs, env: journalEnv('0'), after: clean },
    { name: 'journal on', args: turnArgs, env: journalEnv('1'), after: clean },
    { name: 'floor, 0 appends', args: floorArgs(0) },
    { name: `floor, ${JOURNAL_CALLS} appends`, args: floorArgs(JOURNAL_CALLS) },
    { name: paced, args: floorArgs(JOURNAL_CALLS, gapUs) },
  ]
  const samples = new Map(variants.map((v) => [v.name, []]))
  const inProcessNs = []
  const pacedNs = []
  const cpu = new Map([
    ['journal off', []],
    ['journal on', []],
  ])
  for (let rep = 0; rep < reps; rep += 1) {
    const order = rep % 2 === 0 ? variants : [...variants].reverse()
    for (const v of order) {
      samples.get(v.name).push(runOnce(v.args, [0], v.env ?? env))
      if (v.name === `floor, ${JOURNAL_CALLS} appends`) inProcessNs.push(Number(readFileSync(floorOut, 'utf8')))
      if (v.name === paced) pacedNs.push(Number(readFileSync(floorOut, 'utf8')))
      if (cpu.has(v.name)) {
        const [us, switches] = readFileSync(cpuOut, 'utf8').trim().split(' ').map(Number)
        cpu.get(v.name).push({ us, switches })
      }
      if (v.after !== undefined) v.after()
    }
    if ((rep + 1) % 10 === 0 || rep + 1 === reps)
      process.stderr.write(`  journal: repetition ${rep + 1}/${reps} done\n`)
  }
  rmSync(root, { recursive: true, force: true })
  const results = {}
  for (const [name, xs] of samples) {
    results[name] = {
      medianMs: median(xs.map((x) => x.ms)),
      minMs: Math.min(...xs.map((x) => x.ms)),
      medianRssBytes: median(xs.map((x) => x.rssBytes)),
      maxRssBytes: Math.max(...xs.map((x) => x.rssBytes)),
      samplesMs: xs.map((x) => Math.round(x.ms)),
    }
  }
  const ms = (name) => samples.get(name).map((x) => x.ms)
  const pairedMedian = (a, b) => median(ms(a).map((x, i) => x - ms(b)[i]))
  const pairedCpu = (key) => median(cpu.get('journal on').map((x, i) => x[key] - cpu.get('journal off')[i][key]))
  const round = (x) => Number(x.toFixed(4))
  const on = 'journal on'
  const off = 'journal off'
  const full = `floor, ${JOURNAL_CALLS} appends`
  const empty = 'floor, 0 appends'
  const perCallMs = (results[on].medianMs - results[off].medianMs) / JOURNAL_CALLS
  const perAppendMs = (results[full].medianMs - results[empty].medianMs) / JOURNAL_CALLS
  return {
    calls: JOURNAL_CALLS,
    reps,
    rowBytes,
    gapUs,
    ledgers,
    results,
    perCall: {
      journalMs: round(perCallMs),
      appendMs: round(perAppendMs),
      pairedJournalMs: round(pairedMedian(on, off) / JOURNAL_CALLS),
      pairedAppendMs: round(pairedMedian(full, empty) / JOURNAL_CALLS),
      inProcessAppendMs: round(median(inProcessNs) / 1e6 / JOURNAL_CALLS),
      pacedAppendMs: round(median(pacedNs) / 1e6 / JOURNAL_CALLS),
      appendOverNodeMs: round((results[full].medianMs - results['node -e 0'].medianMs) / JOURNAL_CALLS),
      // Median of back-to-back differences of each turn's own user + system time, and its voluntary
      // context switches (a blocking fsync is one).
      pairedJournalCpuMs: round(pairedCpu('us') / 1000 / JOURNAL_CALLS),
      pairedJournalSwitches: round(pairedCpu('switches') / JOURNAL_CALLS),
    },
  }
}

// The target divides by the floor's appends as timed inside the floor process: 20 appends take ~4 ms,
// less than the spread of a process's start on a shared machine, so the floor's whole-process
// difference (floor 20 − floor 0) is reported but can even come out negative (decision 165). A
// ratio over a floor difference of 0 or less is no figure at all: null.
const journalVerdicts = (journal) => {
  const p = journal.perCall
  const value = (x, floorMs) => (floorMs > 0 ? Number((x / floorMs).toFixed(3)) : null)
  // Results kept before decision 241 have no paced floor: their verdict stays the back-to-back one.
  const floorMs = p.pacedAppendMs ?? p.inProcessAppendMs
  const cost = value(p.journalMs, floorMs)
  const pacing = p.pacedAppendMs === undefined ? 'back to back' : `${journal.gapUs} µs apart, as the turn's calls`
  return [
    {
      name: `tool journal, cost per call (on − off, ${journal.calls} calls) vs one write+fsync timed in the floor process, appends ${pacing}`,
      value: cost,
      limit: 1.3,
      met: cost !== null && cost <= 1.3,
    },
    {
      name: 'the same, medians of back-to-back differences (report only)',
      value: value(p.pairedJournalMs, floorMs),
    },
    {
      name: 'the same, against the floor appends back to back (report only)',
      value: value(p.journalMs, p.inProcessAppendMs),
    },
    {
      name: `the same, against (floor ${journal.calls} − floor 0) / ${journal.calls}, whole processes (report only)`,
      value: value(p.journalMs, p.appendMs),
    },
    {
      name: `the same, against (floor ${journal.calls} − node -e 0) / ${journal.calls}, whole processes (report only)`,
      value: value(p.journalMs, p.appendOverNodeMs),
    },
  ]
}

const ratio = (a, b) => a / b
const verdicts = (report) => {
  const out = []
  // A limit is a ceiling unless `atLeast` (a rate that must reach it, as appends/s against a floor).
  const add = (name, value, limit, atLeast = false) =>
    out.push({
      name,
      value: Number(value.toFixed(3)),
      limit,
      met: atLeast ? value >= limit : value <= limit,
      ...(atLeast ? { atLeast } : {}),
    })
  const bigSizes = report.ledger?.slice(-2) ?? []
  for (const l of bigSizes) {
    const { floor: f, resumePlanJson: p, resume: r } = l.results
    add(`resume plan --json ${l.events} events, time vs floor`, ratio(p.medianMs, f.medianMs), 2)
    add(`resume plan --json ${l.events} events, peak RSS vs ledger bytes`, ratio(p.medianRssBytes, l.ledgerBytes), 2.5)
    out.push({
      name: `resume ${l.events} events, time vs floor (report only)`,
      value: Number(ratio(r.medianMs, f.medianMs).toFixed(3)),
    })
    if (l.results.showJson !== undefined) {
      const sj = l.results.showJson
      out.push({
        name: `show --json ${l.events} events, time vs floor (report only)`,
        value: Number(ratio(sj.medianMs, f.medianMs).toFixed(3)),
      })
      out.push({
        name: `show --json ${l.events} events, peak RSS vs ledger bytes (report only)`,
        value: Number(ratio(sj.medianRssBytes, l.ledgerBytes).toFixed(3)),
      })
    }
    out.push({
      name: `floor ${l.events} events, peak RSS vs ledger bytes (report only)`,
      value: Number(ratio(f.medianRssBytes, l.ledgerBytes).toFixed(3)),
    })
  }
  if (report.tree !== undefined) {
    const r = report.tree.results
    add(`recover ${report.tree.sessions} sessions, time vs walk floor`, ratio(r.recover.medianMs, r.floor.medianMs), 3)
    add(
      `resume plan one session in ${report.tree.sessions}, time vs a data dir of that session alone`,
      ratio(r.resumePlanTree.medianMs, r.resumePlanSingle.medianMs),
      1.5,
    )
    out.push({
      name: `resume plan, most recent session picked in ${report.tree.sessions}, vs that session alone (report only)`,
      value: Number(ratio(r.resumePlanPicked.medianMs, r.resumePlanSingle.medianMs).toFixed(3)),
    })
  }
  if (report.stores !== undefined) {
    const { micro, plan, events } = report.stores
    const info = (name, v) => out.push({ name: `${name} (report only)`, value: Number(v.toFixed(3)) })
    // Issue 23's JSONL targets, on both file ports: the async one of the chat and the UI, and the
    // sync one of `run` and `resume`.
    add(
      'JSONL durable appends/s vs write+fsync floor',
      ratio(micro.jsonlAppends.store.opsPerSecond, micro.jsonlAppends.floor.opsPerSecond),
      0.85,
      true,
    )
    if (micro.jsonlSyncAppends !== undefined) {
      add(
        'JSONL durable appends/s through the sync port (run, resume) vs write+fsync floor',
        ratio(micro.jsonlSyncAppends.store.opsPerSecond, micro.jsonlSyncAppends.floor.opsPerSecond),
        0.85,
        true,
      )
    }
    add(
      'SQLite durable appends/s vs bare INSERT floor',
      ratio(micro.sqliteAppends.store.opsPerSecond, micro.sqliteAppends.floor.opsPerSecond),
      0.9,
      true,
    )
    add(
      'JSONL claim latency vs two-file floor',
      ratio(micro.jsonlClaims.store.medianMs, micro.jsonlClaims.floor.medianMs),
      1.3,
    )
    add(
      'SQLite claim latency vs bare two-row INSERT floor',
      ratio(micro.sqliteClaims.store.medianMs, micro.sqliteClaims.floor.medianMs),
      1.3,
    )
    if (micro.postgresAppends !== undefined) {
      add(
        'PostgreSQL durable appends/s vs bare INSERT floor',
        ratio(micro.postgresAppends.store.opsPerSecond, micro.postgresAppends.floor.opsPerSecond),
        0.8,
        true,
      )
      add(
        'PostgreSQL claim latency vs bare two-row INSERT floor',
        ratio(micro.postgresClaims.store.medianMs, micro.postgresClaims.floor.medianMs),
        1.3,
      )
    }
    info(`resume plan ${events} events, SQLite vs JSONL`, ratio(plan.planSqlite.medianMs, plan.planJsonl.medianMs))
    if (plan.planPostgres !== undefined) {
      info(
        `resume plan ${events} events, PostgreSQL vs JSONL`,
        ratio(plan.planPostgres.medianMs, plan.planJsonl.medianMs),
      )
    }
    info(`resume plan ${events} events on SQLite, time vs floor`, ratio(plan.planSqlite.medianMs, plan.floor.medianMs))
  }
  if (report.sql !== undefined) {
    for (const l of report.sql.ledgers) {
      const r = l.results
      add(
        `resume plan --json ${l.events} events on SQLite, time vs SELECT floor`,
        ratio(r.sqlitePlan.medianMs, r.sqliteFloor.medianMs),
        1.5,
      )
      add(
        `resume plan --json ${l.events} events on PostgreSQL, time vs SELECT floor`,
        ratio(r.postgresPlan.medianMs, r.postgresFloor.medianMs),
        1.5,
      )
    }
    const r = report.sql.tree.results
    const n = report.sql.tree.sessions
    add(
      `recover ${n} sessions on SQLite, time vs SELECT floor`,
      ratio(r.sqliteRecover.medianMs, r.sqliteFloor.medianMs),
      3,
    )
    add(
      `recover ${n} sessions on PostgreSQL, time vs SELECT floor`,
      ratio(r.postgresRecover.medianMs, r.postgresFloor.medianMs),
      3,
    )
  }
  if (report.firstbyte !== undefined) {
    const r = report.firstbyte.results
    add(
      `time to the model's first byte on resume (${report.firstbyte.events} events) vs node -e 0 + ${report.firstbyte.fsyncs} write+fsync`,
      ratio(r.resume.medianMs, r.floor.medianMs),
      1.5,
    )
  }
  if (report.cold !== undefined) {
    const base = report.cold.results['node -e 0'].medianMs
    for (const [name, v] of Object.entries(report.cold.results)) {
      if (name !== 'node -e 0') add(`${name} cold start vs node -e 0`, ratio(v.medianMs, base), 2.5)
    }
  }
  return out
}

const machine = () => ({
  cpus: cpus().length,
  cpuModel: cpus()[0]?.model ?? 'unknown',
  memoryGiB: Number((totalmem() / 2 ** 30).toFixed(1)),
  node: process.version,
  platform: `${process.platform} ${process.arch}`,
})

const main = async () => {
  const wants = (group) => options.only === undefined || options.only.includes(group)
  const mainGroups = ['cold', 'tree', 'ledger', 'stores', 'firstbyte', 'sql']
  const missed = []
  if (mainGroups.some(wants)) missed.push(...(await mainReport(wants)))
  if (wants('journal')) missed.push(...journalReport())
  if (options.check && missed.length > 0) process.exitCode = 1
}

// The groups of issues 11 and 14: `results/latest.json` (or `<label>.json`) and the main block of
// docs/performance.md. Returns the targets missed.
const mainReport = async (wants) => {
  const report = {
    label: options.label,
    date: new Date().toISOString(),
    quick: options.quick,
    reps: options.reps,
    cli: options.cli,
    machine: machine(),
    loadAverageAtStart: loadavg().map((x) => Number(x.toFixed(2))),
  }
  if (wants('cold')) report.cold = coldGroup()
  if (wants('tree')) report.tree = treeGroup()
  if (wants('ledger')) report.ledger = ledgerGroup()
  if (wants('stores')) report.stores = await storesGroup()
  if (wants('firstbyte')) report.firstbyte = await firstByteGroup()
  if (wants('sql')) report.sql = await sqlGroup()
  report.loadAverageAtEnd = loadavg().map((x) => Number(x.toFixed(2)))
  report.targets = verdicts(report)
  mkdirSync(resultsDir, { recursive: true })
  const file = join(resultsDir, options.label === 'after' ? 'latest.json' : `${options.label}.json`)
  // The run before stays beside it, so two consecutive runs can be compared.
  if (options.label === 'after' && existsSync(file)) renameSync(file, join(resultsDir, 'previous.json'))
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`)
  printReport(report)
  process.stderr.write(`\nwrote ${file}\n`)
  const docs = writePerformanceDoc()
  if (docs !== null) process.stderr.write(`wrote ${docs}\n`)
  return report.targets.filter((t) => t.met === false)
}

// The journal group (issue 22) keeps results of its own — `results/journal.json`, the one before as
// `journal-previous.json`, other labels `journal-<label>.json` — and its own block of
// docs/performance.md, so `--only journal` leaves the other groups' results and tables as they are
// (decision 166). Returns the targets missed.
const journalReport = () => {
  const report = {
    label: options.label,
    date: new Date().toISOString(),
    quick: options.quick,
    reps: options.journalReps,
    cli: options.cli,
    machine: machine(),
    loadAverageAtStart: loadavg().map((x) => Number(x.toFixed(2))),
  }
  report.journal = journalGroup()
  report.loadAverageAtEnd = loadavg().map((x) => Number(x.toFixed(2)))
  report.targets = journalVerdicts(report.journal)
  if (report.loadAverageAtStart[0] > report.machine.cpus) {
    // Every fsync waits for the file system's shared journal commit, so other work's writes set
    // both sides' fsync times, and not alike: such a run's ratio is no verdict.
    process.stderr.write(
      `journal: load average ${report.loadAverageAtStart[0]} on ${report.machine.cpus} cores at start; rerun on a quiet machine before reading the ratio\n`,
    )
  }
  mkdirSync(resultsDir, { recursive: true })
  const file = join(resultsDir, options.label === 'after' ? 'journal.json' : `journal-${options.label}.json`)
  if (options.label === 'after' && existsSync(file)) renameSync(file, join(resultsDir, 'journal-previous.json'))
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`)
  process.stdout.write(`${journalTables(report).join('\n')}\n`)
  process.stderr.write(`\nwrote ${file}\n`)
  const docs = writeJournalDoc()
  if (docs !== null) process.stderr.write(`wrote ${docs}\n`)
  return report.targets.filter((t) => t.met === false)
}

const fmtMs = (ms) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`)
const fmtMb = (bytes) => (Number.isNaN(bytes) ? 'n/a' : `${(bytes / 2 ** 20).toFixed(0)} MB`)

const printReport = (report) => {
  const rows = tableRows(report)
  for (const row of rows) process.stdout.write(`${row.join('  |  ')}\n`)
  printTargets(report.targets)
}

const printTargets = (targets) => {
  process.stdout.write('\nTargets:\n')
  for (const t of targets) {
    process.stdout.write(
      `  ${t.met === undefined ? 'info' : t.met ? 'met ' : 'MISS'}  ${t.name}: ${t.value ?? 'n/a'}${t.limit === undefined ? '' : ` (${t.atLeast === true ? '≥' : '≤'} ${t.limit})`}\n`,
    )
  }
}

const tableRows = (report) => {
  const rows = []
  for (const [name, v] of Object.entries(report.cold?.results ?? {})) {
    rows.push([`cold: ${name}`, fmtMs(v.medianMs), fmtMs(v.minMs), fmtMb(v.medianRssBytes)])
  }
  if (report.tree !== undefined) {
    for (const [name, v] of Object.entries(report.tree.results)) {
      rows.push([`tree ${report.tree.sessions}×3: ${name}`, fmtMs(v.medianMs), fmtMs(v.minMs), fmtMb(v.medianRssBytes)])
    }
  }
  if (report.stores !== undefined) {
    const { micro, plan, events } = report.stores
    for (const [name, v] of Object.entries(micro)) {
      for (const side of ['store', 'floor']) {
        rows.push([`stores ${name} ${side}`, `${v[side].opsPerSecond}/s`, `${v[side].medianMs} ms median`, '—'])
      }
    }
    for (const [name, v] of Object.entries(plan)) {
      rows.push([`stores plan ${events}: ${name}`, fmtMs(v.medianMs), fmtMs(v.minMs), fmtMb(v.medianRssBytes)])
    }
  }
  if (report.firstbyte !== undefined) {
    const counted = report.firstbyte.fsyncsCounted ? 'counted with strace' : 'the known count'
    for (const [name, v] of Object.entries(report.firstbyte.results)) {
      const what =
        name === 'resume'
          ? 'resume, start to the first byte at the endpoint'
          : name === 'floor'
            ? `floor: node + ${report.firstbyte.fsyncs} write+fsync (${counted})`
            : name
      rows.push([`firstbyte: ${what}`, fmtMs(v.medianMs), fmtMs(v.minMs), '—'])
    }
  }
  for (const l of report.sql?.ledgers ?? []) {
    for (const [name, v] of Object.entries(l.results)) {
      rows.push([`sql plan ${l.events}: ${name}`, fmtMs(v.medianMs), fmtMs(v.minMs), fmtMb(v.medianRssBytes)])
    }
  }
  if (report.sql !== undefined) {
    for (const [name, v] of Object.entries(report.sql.tree.results)) {
      rows.push([
        `sql recover ${report.sql.tree.sessions}×3: ${name}`,
        fmtMs(v.medianMs),
        fmtMs(v.minMs),
        fmtMb(v.medianRssBytes),
      ])
    }
  }
  for (const l of report.ledger ?? []) {
    for (const [name, v] of Object.entries(l.results)) {
      rows.push([
        `ledger ${l.events} (${fmtMb(l.ledgerBytes)}): ${name}`,
        fmtMs(v.medianMs),
        fmtMs(v.minMs),
        fmtMb(v.medianRssBytes),
      ])
    }
  }
  return rows
}

// docs/performance.md: the latest report and, when recorded, the "before" one, between markers.
const runLine = (report) =>
  `${report.date}, ${report.quick ? 'quick mode, ' : ''}${report.reps} repetitions, ${report.machine.cpus} × ${report.machine.cpuModel}, ${report.machine.memoryGiB} GiB, Node ${report.machine.node}, load average ${report.loadAverageAtStart.join(' ')} at start and ${report.loadAverageAtEnd.join(' ')} at the end; CLI \`${relativeCli(report.cli)}\`.`

const targetTable = (targets) => [
  '| target | value | limit | met |',
  '| --- | --- | --- | --- |',
  ...targets.map(
    (t) =>
      `| ${t.name} | ${t.value ?? 'n/a'} | ${t.limit === undefined ? '—' : t.atLeast === true ? `≥ ${t.limit}` : t.limit} | ${t.met === undefined ? 'info' : t.met ? 'yes' : '**no**'} |`,
  ),
]

const reportSection = (title, report) => [
  `### ${title}`,
  '',
  runLine(report),
  '',
  '| what | median | min | peak RSS (median) |',
  '| --- | --- | --- | --- |',
  ...tableRows(report).map((r) => `| ${r.join(' | ')} |`),
  '',
  ...targetTable(report.targets),
  '',
]

// The journal group's tables: the processes, the cost per call and per append, the targets.
const journalTables = (report) => {
  const j = report.journal
  const p = j.perCall
  // Results written before a figure existed show a dash for it.
  const fmt = (x) => (x === undefined ? '—' : `${x.toFixed(3)} ms`)
  return [
    `A turn of ${j.calls} \`read_file\` calls and a text; floor rows of ${j.rowBytes} bytes (the mean of the turn's dispatch and response rows). Ledger of the turn: ${j.ledgers.off.rows} rows (${j.ledgers.off.bytes} bytes) with the journal off, ${j.ledgers.on.rows} rows (${j.ledgers.on.bytes} bytes) on.`,
    '',
    '| process | median | min | peak RSS (median) |',
    '| --- | --- | --- | --- |',
    ...Object.entries(j.results).map(
      ([name, v]) => `| ${name} | ${fmtMs(v.medianMs)} | ${fmtMs(v.minMs)} | ${fmtMb(v.medianRssBytes)} |`,
    ),
    '',
    '| per tool call or append | from the medians | median of back-to-back differences |',
    '| --- | --- | --- |',
    `| journal on − off, per call | ${fmt(p.journalMs)} | ${fmt(p.pairedJournalMs)} |`,
    `| floor ${j.calls} − floor 0, per write+fsync | ${fmt(p.appendMs)} | ${fmt(p.pairedAppendMs)} |`,
    `| journal on − off, CPU per call (user + system, the turn's own \`resourceUsage()\`) | — | ${fmt(p.pairedJournalCpuMs)} |`,
    `| journal on − off, voluntary context switches per call | — | ${p.pairedJournalSwitches ?? '—'} |`,
    `| floor, timed inside its process, per write+fsync, back to back | ${fmt(p.inProcessAppendMs)} | — |`,
    `| floor, timed inside its process, per write+fsync, ${j.gapUs ?? '—'} µs of work apart (the turn's pace) | ${fmt(p.pacedAppendMs)} | — |`,
    `| (floor ${j.calls} − node -e 0) / ${j.calls} | ${fmt(p.appendOverNodeMs)} | — |`,
    '',
    ...targetTable(report.targets),
  ]
}

const journalSection = (title, report) => [`### ${title}`, '', runLine(report), '', ...journalTables(report), '']

const relativeCli = (path) => (path.startsWith(repoRoot) ? path.slice(repoRoot.length + 1) : path)

const writePerformanceDoc = () => {
  const docPath = join(repoRoot, 'docs', 'performance.md')
  const sections = []
  for (const [title, file] of [
    ['Latest run', 'latest.json'],
    ['Previous run', 'previous.json'],
    ['Before (main before issue 11)', 'before.json'],
  ]) {
    const path = join(resultsDir, file)
    if (existsSync(path)) sections.push(...reportSection(title, JSON.parse(readFileSync(path, 'utf8'))))
  }
  if (sections.length === 0 || !existsSync(docPath)) return null
  const block = [
    '<!-- bench:start (written by `pnpm bench`; edit outside the markers) -->',
    '',
    ...sections,
    '<!-- bench:end -->',
  ].join('\n')
  const current = readFileSync(docPath, 'utf8')
  writeFileSync(docPath, current.replace(/<!-- bench:start[\s\S]*?<!-- bench:end -->/, block))
  formatDoc(docPath)
  return docPath
}

// The repository checks formatting, so the generated tables are laid out as prettier would.
const formatDoc = (docPath) => {
  const prettier = join(repoRoot, 'node_modules', '.bin', 'prettier')
  if (existsSync(prettier)) spawnSync(prettier, ['--write', docPath], { stdio: 'ignore' })
}

// docs/performance.md: the journal group's latest and previous runs, between markers of their own.
const writeJournalDoc = () => {
  const docPath = join(repoRoot, 'docs', 'performance.md')
  const sections = []
  for (const [title, file] of [
    ['Latest journal run', 'journal.json'],
    ['Previous journal run', 'journal-previous.json'],
  ]) {
    const path = join(resultsDir, file)
    if (existsSync(path)) sections.push(...journalSection(title, JSON.parse(readFileSync(path, 'utf8'))))
  }
  const pattern = /<!-- bench:journal:start[\s\S]*?<!-- bench:journal:end -->/
  if (sections.length === 0 || !existsSync(docPath)) return null
  const current = readFileSync(docPath, 'utf8')
  if (!pattern.test(current)) return null
  const block = [
    '<!-- bench:journal:start (written by `pnpm bench --only journal` and full runs; edit outside the markers) -->',
    '',
    ...sections,
    '<!-- bench:journal:end -->',
  ].join('\n')
  writeFileSync(
    docPath,
    current.replace(pattern, () => block),
  )
  formatDoc(docPath)
  return docPath
}

await main()
