/**
 * `pnpm bench`: the CLI commands a user runs, timed end to end as separate processes against their
 * floors, in the same run and interleaved (repetition i runs every variant of a group before
 * repetition i + 1 starts, in a rotating order), so load on a shared machine hits both sides.
 *
 *   node src/run.mjs [--quick] [--reps N] [--cli PATH] [--label after|before] [--check]
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
 * Each variant: ≥ 5 repetitions [3], wall time median and min, peak RSS (`/usr/bin/time`'s
 * maximum resident set size) median. Writes `results/<label>.json` (`latest.json` for the
 * default label `after`) and, when both exist, the table in `docs/performance.md`. Exit code 0 —
 * it is a report — unless `--check` is given and a target is missed.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
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
    else if (arg === '--') continue
    else
      throw new Error(
        `unknown option ${arg} (use --quick, --reps N, --cli PATH, --label NAME, --only GROUPS (ledger,tree,cold,stores), --check)`,
      )
  }
  if (options.reps !== undefined && (!Number.isSafeInteger(options.reps) || options.reps < 1)) {
    throw new Error('--reps needs a positive integer')
  }
  options.reps ??= options.quick ? 3 : 5
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
const runOnce = (args, expectCodes) => {
  const argv =
    timeBin === null ? [process.execPath, ...args] : [timeBin, '-f', '%M', '-o', rssFile, process.execPath, ...args]
  const started = process.hrtime.bigint()
  const child = spawnSync(argv[0], argv.slice(1), { stdio: ['ignore', devNull, 'pipe'], env, maxBuffer: 1 << 24 })
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
    [join(here, 'stores.mjs'), '--sqlite-fixture', `${f.dataDir},${f.sessionId},${sqliteFile}`],
    { encoding: 'utf8', env },
  )
  if (made.status !== 0) throw new Error(`stores.mjs --sqlite-fixture exited ${made.status}: ${made.stderr}`)
  const planUrl = new URL(postgresUrl)
  planUrl.pathname = '/bench_plan'
  const madePg = spawnSync(
    process.execPath,
    [join(here, 'stores.mjs'), '--postgres-fixture', `${f.dataDir},${f.sessionId},${postgresUrl},bench_plan`],
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

const ratio = (a, b) => a / b
const verdicts = (report) => {
  const out = []
  const add = (name, value, limit) => out.push({ name, value: Number(value.toFixed(3)), limit, met: value <= limit })
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
    info(
      'JSONL durable appends/s vs write+fsync floor',
      ratio(micro.jsonlAppends.store.opsPerSecond, micro.jsonlAppends.floor.opsPerSecond),
    )
    info(
      'SQLite durable appends/s vs bare INSERT floor',
      ratio(micro.sqliteAppends.store.opsPerSecond, micro.sqliteAppends.floor.opsPerSecond),
    )
    info(
      'JSONL claim latency vs two-file floor',
      ratio(micro.jsonlClaims.store.medianMs, micro.jsonlClaims.floor.medianMs),
    )
    info(
      'SQLite claim latency vs bare two-row INSERT floor',
      ratio(micro.sqliteClaims.store.medianMs, micro.sqliteClaims.floor.medianMs),
    )
    if (micro.postgresAppends !== undefined) {
      info(
        'PostgreSQL durable appends/s vs bare INSERT floor',
        ratio(micro.postgresAppends.store.opsPerSecond, micro.postgresAppends.floor.opsPerSecond),
      )
      info(
        'PostgreSQL claim latency vs bare two-row INSERT floor',
        ratio(micro.postgresClaims.store.medianMs, micro.postgresClaims.floor.medianMs),
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
  const missed = report.targets.filter((t) => t.met === false)
  if (options.check && missed.length > 0) process.exitCode = 1
}

const fmtMs = (ms) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`)
const fmtMb = (bytes) => (Number.isNaN(bytes) ? 'n/a' : `${(bytes / 2 ** 20).toFixed(0)} MB`)

const printReport = (report) => {
  const rows = tableRows(report)
  for (const row of rows) process.stdout.write(`${row.join('  |  ')}\n`)
  process.stdout.write('\nTargets:\n')
  for (const t of report.targets) {
    process.stdout.write(
      `  ${t.met === undefined ? 'info' : t.met ? 'met ' : 'MISS'}  ${t.name}: ${t.value}${t.limit === undefined ? '' : ` (≤ ${t.limit})`}\n`,
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
const reportSection = (title, report) => [
  `### ${title}`,
  '',
  `${report.date}, ${report.quick ? 'quick mode, ' : ''}${report.reps} repetitions, ${report.machine.cpus} × ${report.machine.cpuModel}, ${report.machine.memoryGiB} GiB, Node ${report.machine.node}, load average ${report.loadAverageAtStart.join(' ')} at start and ${report.loadAverageAtEnd.join(' ')} at the end; CLI \`${relativeCli(report.cli)}\`.`,
  '',
  '| what | median | min | peak RSS (median) |',
  '| --- | --- | --- | --- |',
  ...tableRows(report).map((r) => `| ${r.join(' | ')} |`),
  '',
  '| target | value | limit | met |',
  '| --- | --- | --- | --- |',
  ...report.targets.map(
    (t) =>
      `| ${t.name} | ${t.value} | ${t.limit ?? '—'} | ${t.met === undefined ? 'info' : t.met ? 'yes' : '**no**'} |`,
  ),
  '',
]

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
  // The repository checks formatting, so the generated tables are laid out as prettier would.
  const prettier = join(repoRoot, 'node_modules', '.bin', 'prettier')
  if (existsSync(prettier)) spawnSync(prettier, ['--write', docPath], { stdio: 'ignore' })
  return docPath
}

await main()
