/**
 * The chaos driver. Each iteration, in its own scratch data dir and workspace, runs a scripted turn
 * with counted side effects in a child process, then up to MAX_ROUNDS rounds of resumers (sometimes
 * 2..8 at once, sometimes beside a `recover`), and SIGKILLs children at a crash point (the executor's
 * `onCrashPoint` hook, reported by the child as a `chaos-at:` line) or at a random moment. After every
 * phase it checks the invariants on the real files and plans the same state twice. Which child is
 * killed where comes from the iteration's seed; the moment of a random-moment kill also depends on
 * the machine's speed, so only crash-point kills replay exactly.
 */
import { spawn } from 'node:child_process'
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { checkInvariants } from './checkInvariants.js'
import { parseObject } from './committedRows.js'
import {
  type DataDirSnapshot,
  WRITE_EFFECTS_DIR,
  emptySnapshot,
  readDataDir,
  readEffects,
} from './DataDirSnapshot.js'
import { type EffectStep, effectToken, remainingSteps, scriptOf, tokenOfCall } from './effectScript.js'
import { type Rng, iterationSeeds, makeRng } from './Rng.js'
import { InvariantCode, type Violation } from './Violation.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * The line prefix a child prints when it stands at its crash point, followed by the point's name;
 * it then hangs until killed.
 * @category models
 */
export const CRASH_LINE_PREFIX = 'chaos-at:'

/**
 * Where a child is to stop: the nth time the executor reaches `point` in that process.
 * @category models
 */
export interface CrashAt {
  readonly point: string
  readonly nth: number
}

/**
 * One child the driver starts.
 * @category models
 */
export interface ChildSpec {
  /** `turn`: one normal turn; `resume`: startup recovery, plan, execute; `recover`: the recovery pass. */
  readonly role: 'turn' | 'resume' | 'recover'
  readonly dataDir: string
  readonly sessionId: string
  readonly workspace: string
  /** The scripted model's steps (a script file of hosts.md). */
  readonly scriptPath: string
  /** Stop there, print `chaos-at:<point>` and hang; null: run to the end. */
  readonly crashAt: CrashAt | null
}

/**
 * What the driver needs from the host: how to start a child, and how to plan a session.
 * @category models
 */
export interface ChaosHost {
  /** The executable of every child (e.g. `process.execPath`). */
  readonly command: string
  /** The arguments of a child, after `command`. */
  readonly argsFor: (spec: ChildSpec) => ReadonlyArray<string>
  /** The environment of every child. */
  readonly env: NodeJS.ProcessEnv
  /** The plan of the session's latest boundary, without a recovery pass, from a freshly built runtime. */
  readonly plan: (dataDir: string, sessionId: string) => Promise<unknown>
}

/**
 * Options of a chaos run.
 * @category models
 */
export interface ChaosOptions {
  readonly iterations: number
  /** The seed of the first iteration. */
  readonly seed: number
  /** An existing folder; each iteration works in its own subfolder. */
  readonly root: string
  /** Keep every iteration's folder (else only those with violations are kept). */
  readonly keep: boolean
  readonly host: ChaosHost
  /** How long a child may run before it counts as hung. */
  readonly childTimeoutMs?: number
  readonly onIteration?: (report: IterationReport) => void
}

/**
 * A violation with the seed that replays its iteration.
 * @category models
 */
export interface SeededViolation extends Violation {
  readonly iteration: number
  readonly seed: number
  readonly phase: string
}

/**
 * What one iteration did and found.
 * @category models
 */
export interface IterationReport {
  readonly iteration: number
  readonly seed: number
  /** One line per phase: who ran and where each was to be killed (deterministic from the seed). */
  readonly schedule: ReadonlyArray<string>
  /** Kills by crash point name, or `random_moment`. */
  readonly kills: Readonly<Record<string, number>>
  readonly children: number
  readonly maxConcurrentResumers: number
  readonly violations: ReadonlyArray<SeededViolation>
  /** The iteration's folder when it was kept, else null. */
  readonly keptAt: string | null
}

/**
 * The whole run.
 * @category models
 */
export interface ChaosSummary {
  readonly seed: number
  readonly iterations: number
  readonly killsByBoundary: Readonly<Record<string, number>>
  readonly kills: number
  readonly children: number
  readonly concurrentRounds: number
  readonly maxConcurrentResumers: number
  readonly violations: ReadonlyArray<SeededViolation>
  readonly wallMs: number
}

// -------------------------------------------------------------------------------------
// internals
// -------------------------------------------------------------------------------------

const MAX_ROUNDS = 4
const DEFAULT_CHILD_TIMEOUT_MS = 60_000
// A child spends its first ~100–200 ms starting node; a random moment anywhere in this window lands in
// start-up, recovery, planning or the run itself.
const RANDOM_MOMENT_MAX_MS = 450

type KillPlan = { readonly kind: 'none' } | { readonly kind: 'moment'; readonly ms: number } | { readonly kind: 'point'; readonly at: CrashAt }

interface ChildOutcome {
  readonly killedAt: string | null
  readonly code: number | null
  readonly timedOut: boolean
}

const describeKill = (plan: KillPlan): string =>
  plan.kind === 'none' ? 'no kill' : plan.kind === 'moment' ? `kill at ${plan.ms} ms` : `kill at ${plan.at.point}#${plan.at.nth}`

const pointsOf = (role: 'turn' | 'resume', calls: number): ReadonlyArray<CrashAt> => [
  { point: 'after_run_created', nth: 1 },
  role === 'turn'
    ? { point: 'after_initial_user_committed', nth: 1 }
    : { point: 'after_continuation_start_committed', nth: 1 },
  ...Array.from({ length: calls }, (_, k) => [
    { point: 'after_function_call', nth: k + 1 },
    { point: 'after_tool_response', nth: k + 1 },
  ]).flat(),
  { point: 'after_terminal_event_committed', nth: 1 },
  { point: 'after_terminal_header_committed', nth: 1 },
]

const chooseKill = (
  rng: Rng,
  role: 'turn' | 'resume',
  calls: number,
  odds: { readonly none: number; readonly moment: number },
): KillPlan => {
  const r = rng.next()
  if (r < odds.none) return { kind: 'none' }
  if (r < odds.none + odds.moment) return { kind: 'moment', ms: rng.int(0, RANDOM_MOMENT_MAX_MS) }
  return { kind: 'point', at: rng.pick(pointsOf(role, calls)) }
}

const runChild = (host: ChaosHost, spec: ChildSpec, kill: KillPlan, timeoutMs: number): Promise<ChildOutcome> =>
  new Promise((resolve) => {
    // stdin is a pipe so a child at its crash point notices if this process dies first.
    const child = spawn(host.command, [...host.argsFor(spec)], { stdio: ['pipe', 'pipe', 'ignore'], env: host.env })
    let killedAt: string | null = null
    let timedOut = false
    const killNow = (at: string) => {
      if (killedAt !== null || child.exitCode !== null || child.signalCode !== null) return
      killedAt = at
      child.kill('SIGKILL')
    }
    const moment = kill.kind === 'moment' ? setTimeout(() => killNow('random_moment'), kill.ms) : undefined
    const ceiling = setTimeout(() => {
      timedOut = killedAt === null
      killNow('timeout')
    }, timeoutMs)
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (kill.kind === 'point' && line.startsWith(CRASH_LINE_PREFIX)) killNow(line.slice(CRASH_LINE_PREFIX.length))
    })
    child.on('error', () => undefined)
    child.on('close', (code) => {
      clearTimeout(moment)
      clearTimeout(ceiling)
      resolve({ killedAt: killedAt === 'timeout' ? null : killedAt, code, timedOut })
    })
  })

/** Renames each fresh `w/<token>` so that a later execution of the same call creates it again. */
const stampWriteEffects = async (workspace: string, phase: number): Promise<void> => {
  const dir = join(workspace, WRITE_EFFECTS_DIR)
  let names: ReadonlyArray<string>
  try {
    names = await readdir(dir)
  } catch {
    return
  }
  for (const name of names) {
    if (!/\.seen-\d+$/.test(name)) await rename(join(dir, name), join(dir, `${name}.seen-${phase}`))
  }
}

const sameSnapshot = (a: DataDirSnapshot, b: DataDirSnapshot): boolean => {
  const same = (x: Buffer | null | undefined, y: Buffer | null | undefined) =>
    (x ?? null) === null ? (y ?? null) === null : y != null && x != null && x.equals(y)
  if (a.runs.size !== b.runs.size || a.claims.size !== b.claims.size) return false
  for (const [key, run] of a.runs) {
    const other = b.runs.get(key)
    if (other === undefined || !same(run.header, other.header) || !same(run.ledger, other.ledger)) return false
  }
  for (const [key, claim] of a.claims) if (!same(claim.bytes, b.claims.get(key)?.bytes)) return false
  return true
}

/** A plan with its freshly generated continuation ids removed: all that may differ between two plans of one state. */
const withoutFreshIds = (plan: unknown): string =>
  JSON.stringify(plan, (key, value: unknown) =>
    key === 'continuation' && typeof value === 'object' && value !== null
      ? { ...(value as Record<string, unknown>), invocationId: '<fresh>', runId: '<fresh>', turnId: '<fresh>' }
      : value,
  )

const planSafely = async (host: ChaosHost, dataDir: string, sessionId: string): Promise<unknown> => {
  try {
    return await host.plan(dataDir, sessionId)
  } catch (error) {
    return { threw: error instanceof Error ? error.message : String(error) }
  }
}

/** The newest top-level run's status (a normal turn or a continuation; not a child run). */
const latestStatus = (snapshot: DataDirSnapshot): string | null => {
  let latest: { readonly createdAt: string; readonly runId: string; readonly status: string } | null = null
  for (const run of snapshot.runs.values()) {
    const header = parseObject(run.header)
    if (header === null) continue
    if (header['parentRunId'] !== undefined && header['continuationSource'] === undefined) continue
    const createdAt = String(header['createdAt'])
    const candidate = { createdAt, runId: run.runId, status: String(header['status']) }
    if (
      latest === null ||
      createdAt > latest.createdAt ||
      (createdAt === latest.createdAt && run.runId > latest.runId)
    ) {
      latest = candidate
    }
  }
  return latest?.status ?? null
}

const runIteration = async (options: ChaosOptions, iteration: number, seed: number): Promise<IterationReport> => {
  const { host } = options
  const timeoutMs = options.childTimeoutMs ?? DEFAULT_CHILD_TIMEOUT_MS
  const rng = makeRng(seed)
  const dir = join(options.root, `iteration-${iteration}-${seed}`)
  const dataDir = join(dir, 'data')
  const workspace = join(dir, 'workspace')
  const sessionId = `chaos-${seed}`
  await mkdir(workspace, { recursive: true })
  await writeFile(join(workspace, 'README.md'), 'A scratch workspace of maka chaos.\n')

  const steps: ReadonlyArray<EffectStep> = Array.from({ length: rng.int(1, 3) }, (_, k) => ({
    token: effectToken(seed, k + 1),
    tool: rng.chance(0.5) ? ('shell' as const) : ('write_file' as const),
  }))
  const schedule: Array<string> = [`script: ${steps.map((s) => s.tool).join(', ')}`]
  const kills: Record<string, number> = {}
  const violations: Array<SeededViolation> = []
  let children = 0
  let maxConcurrentResumers = 0
  let before: DataDirSnapshot = emptySnapshot
  let phase = 0

  /** Runs one phase's children at once, then checks the invariants and plans twice. */
  const runPhase = async (label: string, specs: ReadonlyArray<{ readonly spec: ChildSpec; readonly kill: KillPlan }>) => {
    phase += 1
    const outcomes = await Promise.all(specs.map(({ spec, kill }) => runChild(host, spec, kill, timeoutMs)))
    children += specs.length
    const found: Array<Violation> = []
    outcomes.forEach((outcome, i) => {
      if (outcome.killedAt !== null) kills[outcome.killedAt] = (kills[outcome.killedAt] ?? 0) + 1
      if (outcome.timedOut) {
        found.push({
          code: InvariantCode.child_timeout,
          sessionId,
          message: `the ${specs[i]?.spec.role ?? '?'} child ran longer than ${timeoutMs} ms and was killed.`,
        })
      }
    })
    await stampWriteEffects(workspace, phase)
    const after = await readDataDir(dataDir)
    found.push(...checkInvariants({ before, after, effects: await readEffects(workspace), tokenOf: tokenOfCall }))
    const first = withoutFreshIds(await planSafely(host, dataDir, sessionId))
    const second = withoutFreshIds(await planSafely(host, dataDir, sessionId))
    if (first !== second) {
      found.push({ code: InvariantCode.plan_not_deterministic, sessionId, message: 'two plans of one state differ.' })
    }
    if (!sameSnapshot(after, await readDataDir(dataDir))) {
      found.push({ code: InvariantCode.planning_wrote, sessionId, message: 'planning changed a run, ledger or claim.' })
    }
    violations.push(...found.map((v) => ({ ...v, iteration, seed, phase: label })))
    const result = { after, killed: outcomes.some((o) => o.killedAt !== null), grew: after.runs.size > before.runs.size }
    before = after
    return result
  }

  const scriptFor = async (name: string, remaining: ReadonlyArray<EffectStep>) => {
    const path = join(dir, `${name}.json`)
    await writeFile(path, JSON.stringify(scriptOf(remaining)))
    return path
  }
  const base = { dataDir, sessionId, workspace }

  try {
    const turnKill = chooseKill(rng, 'turn', steps.length, { none: 0.1, moment: 0.25 })
    schedule.push(`turn: ${describeKill(turnKill)}`)
    const turnScript = await scriptFor('turn', steps)
    let state = await runPhase('turn', [
      {
        spec: { ...base, role: 'turn', scriptPath: turnScript, crashAt: turnKill.kind === 'point' ? turnKill.at : null },
        kill: turnKill,
      },
    ])
    for (let round = 1; round <= MAX_ROUNDS; round += 1) {
      if (latestStatus(state.after) === 'completed') break
      const remaining = remainingSteps(steps, state.after, sessionId)
      const scriptPath = await scriptFor(`round-${round}`, remaining)
      const resumers = rng.chance(0.25) ? rng.int(2, 8) : 1
      const withRecover = rng.chance(0.2)
      const planned = Array.from({ length: resumers }, () =>
        chooseKill(rng, 'resume', remaining.length, { none: 0.4, moment: 0.2 }),
      )
      const recoverKill: KillPlan = withRecover && rng.chance(0.5) ? { kind: 'moment', ms: rng.int(0, 300) } : { kind: 'none' }
      schedule.push(
        `round ${round}: ${resumers} resumer${resumers === 1 ? '' : 's'} [${planned.map(describeKill).join('; ')}]` +
          (withRecover ? ` + recover [${describeKill(recoverKill)}]` : ''),
      )
      maxConcurrentResumers = Math.max(maxConcurrentResumers, resumers)
      state = await runPhase(`round ${round}`, [
        ...planned.map((kill) => ({
          spec: { ...base, role: 'resume' as const, scriptPath, crashAt: kill.kind === 'point' ? kill.at : null },
          kill,
        })),
        ...(withRecover
          ? [{ spec: { ...base, role: 'recover' as const, scriptPath, crashAt: null }, kill: recoverKill }]
          : []),
      ])
      // Nobody was killed and nothing new was created: the session parked or is done.
      if (!state.killed && !state.grew) break
    }
  } finally {
    const keep = options.keep || violations.length > 0
    if (!keep) await rm(dir, { recursive: true, force: true })
  }
  return {
    iteration,
    seed,
    schedule,
    kills,
    children,
    maxConcurrentResumers,
    violations,
    keptAt: options.keep || violations.length > 0 ? dir : null,
  }
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Runs every iteration in turn and sums them up.
 * @category constructors
 */
export const runChaos = async (options: ChaosOptions): Promise<ChaosSummary> => {
  const started = process.hrtime.bigint()
  const killsByBoundary: Record<string, number> = {}
  const violations: Array<SeededViolation> = []
  let children = 0
  let concurrentRounds = 0
  let maxConcurrentResumers = 0
  const seeds = iterationSeeds(options.seed, options.iterations)
  for (const [i, seed] of seeds.entries()) {
    const report = await runIteration(options, i + 1, seed)
    for (const [point, n] of Object.entries(report.kills)) killsByBoundary[point] = (killsByBoundary[point] ?? 0) + n
    violations.push(...report.violations)
    children += report.children
    concurrentRounds += report.schedule.filter((line) => /^round \d+: [2-8] resumers/.test(line)).length
    maxConcurrentResumers = Math.max(maxConcurrentResumers, report.maxConcurrentResumers)
    options.onIteration?.(report)
  }
  const sorted = Object.fromEntries(Object.entries(killsByBoundary).sort(([a], [b]) => a.localeCompare(b)))
  return {
    seed: options.seed,
    iterations: options.iterations,
    killsByBoundary: sorted,
    kills: Object.values(sorted).reduce((a, b) => a + b, 0),
    children,
    concurrentRounds,
    maxConcurrentResumers,
    violations,
    wallMs: Number((process.hrtime.bigint() - started) / 1_000_000n),
  }
}
