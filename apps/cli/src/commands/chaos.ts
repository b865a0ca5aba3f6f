/**
 * `maka chaos [--iterations N] [--seed S] [--json] [--keep]`: the proof of "fail closed, lose
 * nothing" at volume, against this build. `@maka/chaos` drives real child processes of this very CLI
 * (`maka run`, `maka resume`, `maka recover`, and the hidden `maka __chaos-child` for kills at a crash
 * point) and checks the invariants on the files they leave; this command only composes the host
 * (how to start a child, how to plan) and prints progress, the kills per boundary and every violation
 * with the seed that replays it. Exit 0 no violation, 1 any violation, 2 bad input.
 */
import { randomInt } from 'node:crypto'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  type ChaosHost,
  type ChaosSummary,
  type ChildSpec,
  type IterationReport,
  parseSeed,
  runChaos,
} from '@maka/chaos'
import { composeRuntime } from '../composeRuntime.js'
import { BadInputError, ExitCode } from '../ExitCode.js'
import type { ChaosFlags, GlobalFlags } from '../CommandFlags.js'
import { providerForRuns } from '../providerChoice.js'
import { type Style, makeStyle, styleForStdout } from '../Style.js'
import { chooseStore, openChosenStores, parseStoreSpec } from '../storeChoice.js'
import { type ChaosStore, chaosStoreFor } from './chaosStore.js'
import { say, sayJson } from './commandContext.js'

const MAX_ITERATIONS = 1_000_000
const BAR_WIDTH = 30

const bin = (): string => fileURLToPath(new URL('../bin.cjs', import.meta.url))

const argsFor =
  (store: ChaosStore) =>
  (spec: ChildSpec): ReadonlyArray<string> => {
    const data = store.argsFor(spec.dataDir)
    if (spec.role === 'recover') return [bin(), 'recover', ...data]
    if (spec.crashAt !== null) {
      return [
        bin(),
        '__chaos-child',
        ...data,
        '--mode',
        spec.role,
        '--session',
        spec.sessionId,
        '--cwd',
        spec.workspace,
        '--script',
        spec.scriptPath,
        '--crash-at',
        spec.crashAt.point,
        '--crash-nth',
        String(spec.crashAt.nth),
      ]
    }
    return spec.role === 'turn'
      ? [
          bin(),
          'run',
          ...data,
          '--session',
          spec.sessionId,
          '--cwd',
          spec.workspace,
          '--yes',
          '--script',
          spec.scriptPath,
          'Run the chaos script.',
        ]
      : [bin(), 'resume', ...data, '--session', spec.sessionId, '--yes', '--script', spec.scriptPath]
  }

const host = (store: ChaosStore): ChaosHost => {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...store.env,
    MAKA_RUNTIME_SAFE_BOUNDARY_RESUME: '1',
    NO_COLOR: '1',
  }
  delete env['MAKA_HOME']
  // The children's store is named by their arguments alone.
  delete env['MAKA_STORE']
  return {
    command: process.execPath,
    argsFor: argsFor(store),
    env,
    ...(store.snapshot === undefined ? {} : { snapshot: store.snapshot }),
    ...(store.prepare === undefined ? {} : { prepare: store.prepare }),
    ...(store.dispose === undefined ? {} : { dispose: store.dispose }),
    // What `maka resume plan --json --no-recover` prints, from a runtime built afresh like a new host.
    plan: async (dataDir, sessionId) => {
      const chosen = store.storeOf(dataDir)
      const stores =
        chosen === null ? undefined : await openChosenStores(parseStoreSpec(chosen, '--store'), { create: false })
      const { runtime } = composeRuntime({
        dataDir,
        ...(stores === undefined ? {} : { stores }),
        providerFor: providerForRuns({ kind: 'scripted', steps: [] }, { turn: [], continuation: [] }),
        safeBoundaryResumeEnabled: true,
        permissionMode: 'deny',
        verbose: false,
      })
      try {
        return await runtime.plan({ sessionId })
      } finally {
        await stores?.close?.()
      }
    },
  }
}

const readCount = (text: string | undefined): number => {
  if (text === undefined) return 100
  if (!/^[0-9]+$/.test(text.trim()) || Number(text) < 1 || Number(text) > MAX_ITERATIONS) {
    throw new BadInputError(`--iterations must be a whole number from 1 to ${MAX_ITERATIONS}.`)
  }
  return Number(text)
}

const readSeed = (text: string | undefined): number => {
  if (text === undefined) return randomInt(0, 0xffffffff)
  const seed = parseSeed(text)
  if (seed === null) throw new BadInputError('--seed must be a whole number from 0 to 4294967295 (decimal or 0x hex).')
  return seed
}

const killList = (kills: Readonly<Record<string, number>>): string => {
  const entries = Object.entries(kills)
  return entries.length === 0 ? 'no kill' : entries.map(([point, n]) => (n === 1 ? point : `${point}×${n}`)).join(', ')
}

const replayHint = (seed: number): string => `maka chaos --seed ${seed} --iterations 1`

const summaryLines = (summary: ChaosSummary, style: Style, kept: string | null): ReadonlyArray<string> => {
  const lines = [
    style.bold(
      `maka chaos: ${summary.iterations} iteration${summary.iterations === 1 ? '' : 's'} from seed ${summary.seed} in ${(summary.wallMs / 1000).toFixed(1)} s`,
    ),
    `${summary.children} child processes, ${summary.kills} SIGKILLs, ${summary.concurrentRounds} round(s) of concurrent resumers` +
      (summary.concurrentRounds === 0 ? '' : ` (at most ${summary.maxConcurrentResumers} at once)`),
    'kills per boundary:',
  ]
  const width = Math.max(0, ...Object.keys(summary.killsByBoundary).map((k) => k.length))
  for (const [point, n] of Object.entries(summary.killsByBoundary)) lines.push(`  ${point.padEnd(width)}  ${n}`)
  if (summary.violations.length === 0) lines.push(style.green('violations: 0'))
  else {
    lines.push(style.red(`violations: ${summary.violations.length}`))
    for (const v of summary.violations) {
      lines.push(
        `  ${style.red('✗')} ${v.code} — iteration ${v.iteration} (${v.phase}), session ${v.sessionId}${v.runId === undefined ? '' : `, run ${v.runId}`}: ${v.message} Replay: ${replayHint(v.seed)}`,
      )
    }
  }
  if (kept !== null) lines.push(`Kept: ${kept}`)
  return lines
}

/**
 * Runs the chaos iterations and reports.
 * @category constructors
 */
export const chaos = async (flags: ChaosFlags, globals: GlobalFlags): Promise<ExitCode> => {
  if (globals.dataDir !== undefined) {
    throw new BadInputError('maka chaos works in scratch data dirs of its own and never takes --data-dir.')
  }
  const store = chaosStoreFor(chooseStore(globals.store))
  const iterations = readCount(flags.iterations)
  const seed = readSeed(flags.seed)
  const json = flags.json === true
  const tty = !json && process.stdout.isTTY === true
  const style = json ? makeStyle(false) : styleForStdout()
  const keep = flags.keep === true
  const root = await mkdtemp(join(tmpdir(), 'maka-chaos-'))
  const reports: Array<Pick<IterationReport, 'iteration' | 'seed' | 'schedule' | 'kills'>> = []
  let violationsSoFar = 0

  const drawBar = (done: number) => {
    const filled = Math.round((done / iterations) * BAR_WIDTH)
    const bar = `${'█'.repeat(filled)}${'░'.repeat(BAR_WIDTH - filled)}`
    const found = violationsSoFar === 0 ? style.green('0 violations') : style.red(`${violationsSoFar} violations`)
    process.stdout.write(`\r${bar} ${done}/${iterations} ${found}`)
  }
  if (tty) drawBar(0)
  const onIteration = (report: IterationReport) => {
    reports.push({ iteration: report.iteration, seed: report.seed, schedule: report.schedule, kills: report.kills })
    violationsSoFar += report.violations.length
    if (json) return
    if (tty) {
      for (const v of report.violations) {
        process.stdout.write(`\r\u001b[2K${style.red('✗')} ${v.code} (iteration ${v.iteration}): ${v.message}\n`)
      }
      drawBar(report.iteration)
      if (report.iteration === iterations) process.stdout.write('\n')
      return
    }
    say(
      `iteration ${report.iteration}/${iterations} seed ${report.seed}: ${report.children} children, ${killList(report.kills)} — ` +
        (report.violations.length === 0 ? 'ok' : `${report.violations.length} violation(s)`),
    )
    for (const v of report.violations) say(`  ✗ ${v.code} (${v.phase}): ${v.message}`)
  }

  let summary: ChaosSummary
  try {
    summary = await runChaos({ iterations, seed, root, keep, host: host(store), onIteration })
  } finally {
    // Iterations with violations keep their folder for inspection; otherwise nothing is left behind.
    if (!keep && (await readdir(root)).length === 0) await rm(root, { recursive: true, force: true })
  }
  const kept = keep || summary.violations.length > 0 ? root : null
  if (json) {
    sayJson({ ok: summary.violations.length === 0, ...summary, root: kept, iterationReports: reports })
  } else {
    if (!tty) say()
    for (const line of summaryLines(summary, style, kept)) say(line)
  }
  return summary.violations.length === 0 ? ExitCode.ok : ExitCode.failed
}
