/**
 * `pnpm bench`: the speed and memory targets of maka-resume, measured on the built packages.
 *
 *   node --expose-gc src/run.mjs [--events N] [--runs R] [--check]
 *
 * For 100k events and N events (default 1,000,000) it writes a realistic ledger into a temp dir,
 * then measures in fresh child processes (best of R runs for time, worst of R for memory):
 *   baseline-keep     readFile + JSON.parse of every line, rows kept in an array  ← the target's baseline
 *   baseline-discard  the same, each row dropped once parsed (reported only)
 *   store-plan        makeFileStores(dir).events.read(...) then planContinuation(...)
 * Targets (foundation issue): store-plan time ≤ 1.5 × baseline-keep; store-plan peak RSS growth
 * ≤ 2 × the ledger's bytes. It also times CLI startup (report only). Exit code 0 — it is a report —
 * unless `--check` is given and a target is missed.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { writeBenchLedger } from './ledger.mjs'

const TIME_TARGET = 1.5
const MEMORY_TARGET = 2
// The targets are stated at 1M events; below that, V8's fixed heap overhead (~50 MB of young
// generation and code) dominates peak RSS, so smaller runs are shown for information only.
const TARGET_EVENTS = 1_000_000

const parseArgs = (argv) => {
  const options = { events: 1_000_000, runs: 3, check: false }
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]
    if (arg === '--check') options.check = true
    else if (arg === '--events' || arg === '--runs') {
      const n = Number(argv[++i])
      if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${arg} needs a positive integer`)
      options[arg.slice(2)] = n
    } else throw new Error(`unknown option ${arg} (use --events N, --runs R, --check)`)
  }
  return options
}

const here = dirname(fileURLToPath(import.meta.url))
const probe = join(here, 'probe.mjs')

const runProbe = (variant, dataDir) => {
  const child = spawnSync(process.execPath, ['--expose-gc', probe, variant, dataDir], {
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  })
  if (child.status !== 0) throw new Error(`probe ${variant} failed (${child.status}):\n${child.stderr}`)
  return JSON.parse(child.stdout.trim().split('\n').pop())
}

const measure = (variant, dataDir, runs) => {
  const results = []
  for (let i = 0; i < runs; i += 1) results.push(runProbe(variant, dataDir))
  const best = results.reduce((a, b) => (b.ms < a.ms ? b : a))
  return {
    ...best,
    ms: best.ms,
    peakRssGrowth: Math.max(...results.map((r) => r.peakRssGrowth)),
    retained: Math.max(...results.map((r) => r.retained)),
  }
}

const benchLedger = (events, runs) => async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'maka-bench-'))
  try {
    const { bytes } = await writeBenchLedger(dataDir, events)
    const keep = measure('baseline-keep', dataDir, runs)
    const discard = measure('baseline-discard', dataDir, runs)
    const store = measure('store-plan', dataDir, runs)
    if (store.rows !== events || store.disposition !== 'continue') {
      throw new Error(
        `unexpected read/plan: ${JSON.stringify({ rows: store.rows, disposition: store.disposition, reasons: store.rejectionReasons, problem: store.problem })}`,
      )
    }
    return { events, bytes, keep, discard, store }
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
}

const cliStartup = (runs) => {
  const require = createRequire(import.meta.url)
  const bin = join(dirname(require.resolve('@maka/cli/package.json')), 'dist', 'bin.js')
  const emptyDir = mkdtempSync(join(tmpdir(), 'maka-bench-cli-'))
  try {
    const time = (args) => {
      let best = Infinity
      for (let i = 0; i < runs; i += 1) {
        const t0 = performance.now()
        const child = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8' })
        const ms = performance.now() - t0
        if (child.status !== 0) throw new Error(`maka ${args.join(' ')} exited ${child.status}:\n${child.stderr}`)
        best = Math.min(best, ms)
      }
      return best
    }
    return [
      { command: 'maka --help', ms: time(['--help']) },
      { command: 'maka sessions --data-dir <empty>', ms: time(['sessions', '--data-dir', emptyDir]) },
    ]
  } finally {
    rmSync(emptyDir, { recursive: true, force: true })
  }
}

// -------------------------------------------------------------------------------------
// report
// -------------------------------------------------------------------------------------

const mb = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`
const s = (ms) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`)
const x = (ratio) => `${ratio.toFixed(2)}×`
const table = (rows) => {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => String(r[c]).length)))
  return rows
    .map((r) =>
      r
        .map((cell, c) => String(cell).padEnd(widths[c]))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')
}

const report = (result) => {
  const { events, bytes, keep, discard, store } = result
  const timeRatio = store.ms / keep.ms
  const memoryRatio = store.peakRssGrowth / bytes
  const timeOk = timeRatio <= TIME_TARGET
  const memoryOk = memoryRatio <= MEMORY_TARGET
  const binding = events >= TARGET_EVENTS
  const verdict = (ok) => (binding ? (ok ? 'PASS' : 'FAIL') : `(info) ${ok ? 'pass' : 'fail'}`)
  console.log(`\n## ${events.toLocaleString('en-US')} events, ledger ${mb(bytes)}\n`)
  console.log(
    table([
      ['variant', 'time (best)', 'peak RSS growth', '÷ bytes', 'retained heap+ext', '÷ bytes'],
      ...[keep, discard, store].map((r) => [
        r.variant,
        s(r.ms),
        mb(r.peakRssGrowth),
        x(r.peakRssGrowth / bytes),
        mb(r.retained),
        x(r.retained / bytes),
      ]),
    ]),
  )
  console.log(`store-plan = read ${s(store.readMs)} + plan ${s(store.planMs)} (plan: ${store.disposition})`)
  console.log(
    table([
      ['target', 'measured', 'limit', 'verdict'],
      ['time store-plan ÷ baseline-keep', x(timeRatio), `≤ ${x(TIME_TARGET)}`, verdict(timeOk)],
      ['time store-plan ÷ baseline-discard', x(store.ms / discard.ms), '(report)', ''],
      ['peak RSS growth ÷ ledger bytes', x(memoryRatio), `≤ ${x(MEMORY_TARGET)}`, verdict(memoryOk)],
      ['retained heap+external ÷ ledger bytes', x(store.retained / bytes), '(report)', ''],
    ]),
  )
  return !binding || (timeOk && memoryOk)
}

const main = async () => {
  const options = parseArgs(process.argv.slice(2))
  const sizes = [...new Set([100_000, options.events])].sort((a, b) => a - b)
  console.log(
    `maka-resume bench — node ${process.version}, best of ${options.runs} (time), worst of ${options.runs} (memory)`,
  )
  let allOk = true
  for (const events of sizes) allOk = report(await benchLedger(events, options.runs)()) && allOk
  console.log('\n## CLI startup (best of 5, report only)\n')
  console.log(table([['command', 'wall time'], ...cliStartup(5).map((r) => [r.command, s(r.ms)])]))
  if (!sizes.some((n) => n >= TARGET_EVENTS))
    console.log(`\nno run at ${TARGET_EVENTS.toLocaleString('en-US')} events: targets not checked`)
  else console.log(`\n${allOk ? 'all targets met' : 'a target was missed'}`)
  if (options.check && !allOk) process.exitCode = 1
}

await main()
