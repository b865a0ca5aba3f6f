/**
 * `maka chaos [--iterations N] [--seed S] [--json] [--keep] [--storm-size N [--storm-roles R] | --journal on|off]`: the
 * proof of "fail closed, lose nothing" at volume, against this build. `@maka/chaos` drives real child
 * processes of this very CLI (`maka run`, `maka resume`, `maka recover`, and the hidden
 * `maka __chaos-child` for kills at a crash point) and checks the invariants on the files they leave;
 * this command only composes the host (how to start a child, how to plan) and prints progress, the
 * kills per boundary, the storms and every violation with the command that replays it. Exit 0 no
 * violation, 1 any violation, 2 bad input.
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
  type JournalChaosSummary,
  type JournalIterationReport,
  type StormOptions,
  MAX_STORM_SIZE,
  MIN_STORM_SIZE,
  parseSeed,
  runChaos,
  runJournalChaos,
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
    // The real commands cannot stop at a crash point or wait for a cue; the hidden child can.
    if (spec.crashAt !== null || spec.cue) {
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
        ...(spec.crashAt === null ? [] : ['--crash-at', spec.crashAt.point, '--crash-nth', String(spec.crashAt.nth)]),
        ...(spec.cue ? ['--cue'] : []),
      ]
    }
    if (spec.role === 'recover') return [bin(), 'recover', ...data]
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

const host = (store: ChaosStore, journal: 'on' | 'off'): ChaosHost => {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...store.env,
    MAKA_RUNTIME_SAFE_BOUNDARY_RESUME: '1',
    NO_COLOR: '1',
    // `--journal` decides for every child. Without it the journal is off whatever this shell says: the
    // default mode's scripts count `write_file` effects by renaming them and kill `$PPID` (decision 160).
    MAKA_RUNTIME_TOOL_JOURNAL: journal === 'on' ? '1' : '0',
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
        // A host that writes no journal plans an open operation as Phase 1 does: as its children do.
        toolJournal: journal === 'on',
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

const readStorm = (flags: ChaosFlags): StormOptions | undefined => {
  const text = flags.stormSize
  if (text === undefined) {
    if (flags.stormRoles !== undefined) throw new BadInputError('--storm-roles needs --storm-size.')
    return undefined
  }
  if (!/^[0-9]+$/.test(text.trim()) || Number(text) < MIN_STORM_SIZE || Number(text) > MAX_STORM_SIZE) {
    throw new BadInputError(`--storm-size must be a whole number from ${MIN_STORM_SIZE} to ${MAX_STORM_SIZE}.`)
  }
  return { size: Number(text), ...(flags.stormRoles === undefined ? {} : { roles: flags.stormRoles }) }
}

const killList = (kills: Readonly<Record<string, number>>): string => {
  const entries = Object.entries(kills)
  return entries.length === 0 ? 'no kill' : entries.map(([point, n]) => (n === 1 ? point : `${point}×${n}`)).join(', ')
}

// A forced storm changes the schedule (the turn's kill, the storm's size), so the replay forces it too.
const replayHint = (seed: number, storm: StormOptions | undefined): string =>
  `maka chaos --seed ${seed} --iterations 1` +
  (storm === undefined
    ? ''
    : ` --storm-size ${storm.size}${storm.roles === undefined ? '' : ` --storm-roles ${storm.roles}`}`)

const stormLine = (summary: ChaosSummary): string => {
  if (summary.storms === 0) return 'storms: 0'
  const sizes = Object.entries(summary.stormsBySize)
    .map(([size, n]) => (n === 1 ? size : `${size}×${n}`))
    .join(', ')
  return (
    `storms: ${summary.storms} (${summary.stormChildren} children, at most ${summary.maxStormSize} at once; sizes ${sizes}; ${summary.cuedStorms} on cue), ` +
    `${summary.staleOwnerStorms} over the dead turn's owner lock`
  )
}

const summaryLines = (
  summary: ChaosSummary,
  style: Style,
  kept: string | null,
  storm: StormOptions | undefined,
): ReadonlyArray<string> => {
  const lines = [
    style.bold(
      `maka chaos: ${summary.iterations} iteration${summary.iterations === 1 ? '' : 's'} from seed ${summary.seed} in ${(summary.wallMs / 1000).toFixed(1)} s`,
    ),
    `${summary.children} child processes, ${summary.kills} SIGKILLs, ${summary.concurrentRounds} round(s) of concurrent resumers` +
      (summary.concurrentRounds === 0 ? '' : ` (at most ${summary.maxConcurrentResumers} at once)`),
    stormLine(summary),
    'kills per boundary:',
  ]
  const width = Math.max(0, ...Object.keys(summary.killsByBoundary).map((k) => k.length))
  for (const [point, n] of Object.entries(summary.killsByBoundary)) lines.push(`  ${point.padEnd(width)}  ${n}`)
  if (summary.violations.length === 0) lines.push(style.green('violations: 0'))
  else {
    lines.push(style.red(`violations: ${summary.violations.length}`))
    for (const v of summary.violations) {
      lines.push(
        `  ${style.red('✗')} ${v.code} — iteration ${v.iteration} (${v.phase}), session ${v.sessionId}${v.runId === undefined ? '' : `, run ${v.runId}`}: ${v.message} Replay: ${replayHint(v.seed, storm)}`,
      )
    }
  }
  if (kept !== null) lines.push(`Kept: ${kept}`)
  return lines
}

const percent = (share: number): string => `${(share * 100).toFixed(1)} %`

const countList = (counts: Readonly<Record<string, number>>): ReadonlyArray<string> => {
  const width = Math.max(0, ...Object.keys(counts).map((k) => k.length))
  return Object.entries(counts).map(([key, n]) => `  ${key.padEnd(width)}  ${n}`)
}

const journalSummaryLines = (
  summary: JournalChaosSummary,
  journal: 'on' | 'off',
  style: Style,
  kept: string | null,
): ReadonlyArray<string> => {
  const lines = [
    style.bold(
      `maka chaos --journal ${journal}: ${summary.iterations} iteration${summary.iterations === 1 ? '' : 's'} from seed ${summary.seed} in ${(summary.wallMs / 1000).toFixed(1)} s`,
    ),
    `${summary.children} child processes; ${summary.killed} turns killed (${Object.entries(summary.killsBy)
      .map(([by, n]) => `${by} ${n}`)
      .join(', ')}), ${summary.notKilled} ended before their moment`,
    `continued without a person: ${summary.continued} of ${summary.killed} (${percent(summary.continuedShare)}); ` +
      `of the ${summary.killedAfterRun} killed once the run existed: ${percent(summary.continuedShareAfterRun)}`,
    `waited for a command still running: ${summary.waited} (at most ${(summary.maxWaitMs / 1000).toFixed(1)} s)`,
    'kills per boundary:',
    ...countList(summary.killsByBoundary),
    Object.keys(summary.parkCodes).length === 0 ? 'parked: none' : 'parked, by code:',
    ...countList(summary.parkCodes),
    ...(Object.keys(summary.parkedByBoundary).length === 0
      ? []
      : ['parked, by boundary:', ...countList(summary.parkedByBoundary)]),
  ]
  if (summary.violations.length === 0) lines.push(style.green('violations: 0'))
  else {
    lines.push(style.red(`violations: ${summary.violations.length}`))
    for (const v of summary.violations) {
      lines.push(
        `  ${style.red('✗')} ${v.code} — iteration ${v.iteration} (${v.phase}), session ${v.sessionId}${v.runId === undefined ? '' : `, run ${v.runId}`}: ${v.message} Replay: maka chaos --journal ${journal} --seed ${v.seed} --iterations 1`,
      )
    }
  }
  if (kept !== null) lines.push(`Kept: ${kept}`)
  return lines
}

const outcomeText = (report: JournalIterationReport): string =>
  report.outcome.kind === 'not_killed'
    ? 'not killed'
    : `killed ${report.boundary ?? '?'} — ` +
      (report.outcome.kind === 'continued'
        ? `continued${report.outcome.waitedMs > 0 ? ` after waiting ${(report.outcome.waitedMs / 1000).toFixed(1)} s` : ''}`
        : `parked ${report.outcome.codes.join(', ')}`)

/** `maka chaos --journal on|off`: the journal's turns (docs/decisions.md #160). */
const journalChaos = async (
  flags: ChaosFlags,
  journal: 'on' | 'off',
  store: ChaosStore,
  iterations: number,
  seed: number,
): Promise<ExitCode> => {
  const json = flags.json === true
  const style = json ? makeStyle(false) : styleForStdout()
  const keep = flags.keep === true
  const root = await mkdtemp(join(tmpdir(), 'maka-chaos-'))
  const reports: Array<
    Pick<JournalIterationReport, 'iteration' | 'seed' | 'schedule' | 'boundary' | 'killedBy' | 'outcome'>
  > = []
  const onIteration = (report: JournalIterationReport) => {
    reports.push({
      iteration: report.iteration,
      seed: report.seed,
      schedule: report.schedule,
      boundary: report.boundary,
      killedBy: report.killedBy,
      outcome: report.outcome,
    })
    if (json) return
    say(
      `iteration ${report.iteration}/${iterations} seed ${report.seed}: ${outcomeText(report)} — ` +
        (report.violations.length === 0 ? 'ok' : `${report.violations.length} violation(s)`),
    )
    for (const v of report.violations) say(`  ✗ ${v.code} (${v.phase}): ${v.message}`)
  }
  let summary: JournalChaosSummary
  try {
    summary = await runJournalChaos({ iterations, seed, root, keep, host: host(store, journal), onIteration })
  } finally {
    if (!keep && (await readdir(root)).length === 0) await rm(root, { recursive: true, force: true })
  }
  const kept = keep || summary.violations.length > 0 ? root : null
  if (json) sayJson({ ok: summary.violations.length === 0, journal, ...summary, root: kept, iterationReports: reports })
  else {
    say()
    for (const line of journalSummaryLines(summary, journal, style, kept)) say(line)
  }
  return summary.violations.length === 0 ? ExitCode.ok : ExitCode.failed
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
  const storm = readStorm(flags)
  if (flags.journal !== undefined) {
    if (storm !== undefined) throw new BadInputError('--journal runs no storms: leave out --storm-size.')
    return journalChaos(flags, flags.journal, store, iterations, seed)
  }
  const json = flags.json === true
  const tty = !json && process.stdout.isTTY === true
  const style = json ? makeStyle(false) : styleForStdout()
  const keep = flags.keep === true
  const root = await mkdtemp(join(tmpdir(), 'maka-chaos-'))
  const reports: Array<Pick<IterationReport, 'iteration' | 'seed' | 'schedule' | 'kills' | 'storm'>> = []
  let violationsSoFar = 0

  const drawBar = (done: number) => {
    const filled = Math.round((done / iterations) * BAR_WIDTH)
    const bar = `${'█'.repeat(filled)}${'░'.repeat(BAR_WIDTH - filled)}`
    const found = violationsSoFar === 0 ? style.green('0 violations') : style.red(`${violationsSoFar} violations`)
    process.stdout.write(`\r${bar} ${done}/${iterations} ${found}`)
  }
  if (tty) drawBar(0)
  const onIteration = (report: IterationReport) => {
    reports.push({
      iteration: report.iteration,
      seed: report.seed,
      schedule: report.schedule,
      kills: report.kills,
      storm: report.storm,
    })
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
    const stormed = report.storm === null ? '' : `; a storm of ${report.storm.size}`
    say(
      `iteration ${report.iteration}/${iterations} seed ${report.seed}: ${report.children} children, ${killList(report.kills)}${stormed} — ` +
        (report.violations.length === 0 ? 'ok' : `${report.violations.length} violation(s)`),
    )
    for (const v of report.violations) say(`  ✗ ${v.code} (${v.phase}): ${v.message}`)
  }

  let summary: ChaosSummary
  try {
    summary = await runChaos({
      iterations,
      seed,
      root,
      keep,
      host: host(store, 'off'),
      onIteration,
      ...(storm === undefined ? {} : { storm }),
    })
  } finally {
    // Iterations with violations keep their folder for inspection; otherwise nothing is left behind.
    if (!keep && (await readdir(root)).length === 0) await rm(root, { recursive: true, force: true })
  }
  const kept = keep || summary.violations.length > 0 ? root : null
  if (json) {
    sayJson({ ok: summary.violations.length === 0, ...summary, root: kept, iterationReports: reports })
  } else {
    if (!tty) say()
    for (const line of summaryLines(summary, style, kept, storm)) say(line)
  }
  return summary.violations.length === 0 ? ExitCode.ok : ExitCode.failed
}
