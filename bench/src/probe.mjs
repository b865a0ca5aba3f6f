/**
 * One measurement, run in a fresh child process (`node --expose-gc probe.mjs <variant> <dataDir>`)
 * so that its memory numbers are its own. Prints one JSON line on stdout.
 *
 * Memory: `peakRssGrowth` = VmHWM at the end − VmRSS just before the measured work (the peak of
 * everything the work allocated, transient buffers included); `retained` = heapUsed + external +
 * arrayBuffers after a full GC with the result still alive, minus the same before (what the
 * caller keeps).
 *
 * `MAKA_BENCH_STORES=/path/to/dist/index.js` swaps in another build of @maka/stores (before/after).
 */
import { readFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { planContinuation } from '@maka/planner'
import { pathToFileURL } from 'node:url'
import { IDENTITY, hostFacts, sourceHeader } from './ledger.mjs'

// MAKA_BENCH_STORES=<path to another build's dist/index.js> measures that build instead (before/after).
const { ledgerPath, makeFileStores } = await import(
  process.env.MAKA_BENCH_STORES ? pathToFileURL(process.env.MAKA_BENCH_STORES).href : '@maka/stores'
)

const statusKb = (field) => {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync('/proc/self/status', 'utf8'))
  return m === null ? NaN : Number(m[1]) * 1024
}
const heapNow = () => {
  const m = process.memoryUsage()
  return m.heapUsed + m.external + m.arrayBuffers
}
const gc = () => {
  if (typeof globalThis.gc === 'function') {
    globalThis.gc()
    globalThis.gc()
  }
}

// Every line parsed, results kept (`keep`) or dropped as soon as parsed (`discard`).
const baseline = async (path, keep) => {
  const text = await readFile(path, 'utf8')
  const rows = []
  let count = 0
  let start = 0
  for (;;) {
    const end = text.indexOf('\n', start)
    if (end === -1) break
    const row = JSON.parse(text.slice(start, end))
    if (keep) rows.push(row)
    else if (row === null) throw new Error('unreachable')
    count += 1
    start = end + 1
  }
  return { result: keep ? rows : null, summary: { rows: count } }
}

const storeAndPlan = async (dataDir) => {
  const stores = makeFileStores(dataDir)
  const t0 = performance.now()
  const read = await stores.events.read(IDENTITY.sessionId, IDENTITY.runId)()
  const t1 = performance.now()
  if (read._tag === 'Left') throw new Error(`read failed: ${read.left._tag}`)
  const snapshot = read.right
  const plan = planContinuation(
    { source: sourceHeader(), ledger: snapshot, facts: hostFacts() },
    { invocationId: 'bench-invocation-2', runId: 'bench-run-2', turnId: 'bench-turn-2' },
  )
  const t2 = performance.now()
  return {
    result: { snapshot, plan },
    summary: {
      rows: snapshot.events.length,
      highWater: snapshot.highWater,
      problem: snapshot.problem,
      disposition: plan.disposition,
      rejectionReasons: plan.rejectionReasons,
      readMs: t1 - t0,
      planMs: t2 - t1,
    },
  }
}

const variants = {
  'baseline-keep': (dir) => baseline(ledgerPath(dir, IDENTITY.sessionId, IDENTITY.runId), true),
  'baseline-discard': (dir) => baseline(ledgerPath(dir, IDENTITY.sessionId, IDENTITY.runId), false),
  'store-plan': storeAndPlan,
}

const [variant, dataDir] = process.argv.slice(2)
const run = variants[variant]
if (run === undefined || dataDir === undefined) {
  process.stderr.write(`usage: probe.mjs <${Object.keys(variants).join('|')}> <dataDir>\n`)
  process.exit(2)
}
gc()
const rssBefore = statusKb('VmRSS')
const heapBefore = heapNow()
const t0 = performance.now()
const { result, summary } = await run(dataDir)
const ms = performance.now() - t0
const peakRss = statusKb('VmHWM')
gc()
const retained = heapNow() - heapBefore
// Keeps the result alive until after the retained measurement.
if (result === undefined) throw new Error('unreachable')
process.stdout.write(
  `${JSON.stringify({ variant, ms, peakRssGrowth: Math.max(0, peakRss - rssBefore), retained, ...summary })}\n`,
)
