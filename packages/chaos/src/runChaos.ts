/**
 * The chaos driver. Each iteration, in its own scratch data dir and workspace, runs a scripted turn
 * with counted side effects in a child process, then up to MAX_ROUNDS rounds of resumers (sometimes
 * 2..8 at once, sometimes beside a `recover`), and SIGKILLs children at a crash point (the executor's
 * `onCrashPoint` hook, reported by the child as a `chaos-at:` line) or at a random moment. In some
 * iterations a killed turn is followed by a contention storm: 2..16 `recover` and `resume` children
 * started at once over the dead turn's session, every one of them a would-be repairer of its stale
 * owner lock. After every phase it checks the invariants on the real files and plans the same state
 * twice. Which child is killed where comes from the iteration's seed; the moment of a random-moment
 * kill also depends on the machine's speed, so only crash-point kills replay exactly.
 */
import { spawn } from 'node:child_process'
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { checkInvariants } from './checkInvariants.js'
import { parseObject } from './committedRows.js'
import { type DataDirSnapshot, WRITE_EFFECTS_DIR, emptySnapshot, readDataDir, readEffects } from './DataDirSnapshot.js'
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
 * The line a child started with `cue: true` prints once it is ready to race (its store open, its
 * runtime built, nothing of the session touched yet); it then waits for any line on its stdin.
 * @category models
 */
export const READY_LINE = 'chaos-ready'

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
  /** The scripted model's steps (a script file of docs/contract.md §4). */
  readonly scriptPath: string
  /** Stop there, print `chaos-at:<point>` and hang; null: run to the end. */
  readonly crashAt: CrashAt | null
  /**
   * Start on the driver's cue: print READY_LINE when ready, then wait for a line on stdin. The
   * children of a cued storm all reach the lock within a few milliseconds, not spread over their
   * start-up. A host that ignores it only makes the race looser.
   */
  readonly cue: boolean
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
  /**
   * The runs and claims of an iteration's store as raw bytes, for the checker; the JSONL files of
   * `dataDir` when absent. A host whose children use another store (a SQLite file in `dataDir`)
   * reads that store's raw rows here, in the files' shape, without the product's store code.
   */
  readonly snapshot?: (dataDir: string) => Promise<DataDirSnapshot>
  /** Makes an iteration's store before its first child (a scratch database on a shared server). */
  readonly prepare?: (dataDir: string) => Promise<void>
  /** Removes what `prepare` made, when the iteration's folder is removed (no violation, no `keep`). */
  readonly dispose?: (dataDir: string) => Promise<void>
}

/**
 * Storms forced on (`maka chaos --storm-size`): every iteration's turn is killed at a crash point
 * that leaves its run for recovery to repair, and a storm of exactly `size` children follows it.
 * @category models
 */
export interface StormOptions {
  /** How many children storm at once, MIN_STORM_SIZE..MAX_STORM_SIZE. */
  readonly size: number
  /** Who storms: only `recover` children, only `resume` children, or the seeded mix of both (default). */
  readonly roles?: StormRoles
}

/**
 * Who a storm is made of.
 * @category models
 */
export type StormRoles = 'mixed' | 'recover' | 'resume'

/**
 * The smallest storm: two processes are the least that can race for one lock.
 * @category models
 */
export const MIN_STORM_SIZE = 2

/**
 * The largest storm: the 16-way race that found two repairers of one stale lock, and about as many
 * node processes as two cores start within the same few hundred milliseconds.
 * @category models
 */
export const MAX_STORM_SIZE = 16

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
  /** Force a storm of one size into every iteration; absent, storms are drawn from each seed. */
  readonly storm?: StormOptions
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
 * The storm one iteration ran.
 * @category models
 */
export interface StormReport {
  readonly size: number
  readonly recovers: number
  readonly resumers: number
  /** Whether its children started on the driver's cue (see `ChildSpec.cue`) or each as soon as it could. */
  readonly cued: boolean
  /** The cues were spread over this many milliseconds (0: one cue for all, or not cued). */
  readonly spreadMs: number
  /**
   * Whether the dead turn's owner lock was still in the store when the storm began: true is the
   * case the storm is for (every child must judge one stale lock); null when the host's snapshot
   * does not show owner locks.
   */
  readonly staleOwner: boolean | null
}

/**
 * What one iteration did and found.
 * @category models
 */
export interface IterationReport {
  readonly iteration: number
  readonly seed: number
  /**
   * The plan drawn from the seed, one line for the script, the turn and each possible round: who runs
   * and where each is to be killed. The same seed always draws the same schedule.
   */
  readonly schedule: ReadonlyArray<string>
  /** How many rounds of resumers ran (the rest of the schedule was not needed). */
  readonly roundsRun: number
  /** Rounds in which 2..8 resumers raced. */
  readonly concurrentRounds: number
  /** Kills by crash point name, or `random_moment`. */
  readonly kills: Readonly<Record<string, number>>
  readonly children: number
  readonly maxConcurrentResumers: number
  /** The storm that followed the killed turn, or null (none drawn, or the turn was not killed). */
  readonly storm: StormReport | null
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
  /** Storms run (each after a killed turn). */
  readonly storms: number
  /** The largest storm run, 0 when none ran. */
  readonly maxStormSize: number
  /** Storms run per size, keyed by the size in ascending order. */
  readonly stormsBySize: Readonly<Record<string, number>>
  /** Storms that began with the dead turn's owner lock still in the store. */
  readonly staleOwnerStorms: number
  /** Storms whose children started on the driver's cue. */
  readonly cuedStorms: number
  /** Children started by storms (also counted in `children`). */
  readonly stormChildren: number
  readonly violations: ReadonlyArray<SeededViolation>
  readonly wallMs: number
}

// -------------------------------------------------------------------------------------
// internals
// -------------------------------------------------------------------------------------

const MAX_ROUNDS = 4
const DEFAULT_CHILD_TIMEOUT_MS = 60_000
// Storms are drawn from a stream of their own, so adding them left every other part of an existing
// seed's schedule as it was.
const STORM_STREAM = 0x5bd1e995
// About one iteration in five draws a storm (it runs when the turn was killed, ~80%), and one storm
// in eight is of the full size: on two cores a storm of 16 costs seconds, and 1000 iterations (seed
// 20261203) met 22 of them among 155 storms in 16.6 min, against 13.5 min without storms.
const STORM_ODDS = 0.2
const FULL_STORM_ODDS = 0.125
const CUE_SPREADS_MS: ReadonlyArray<number> = [0, 10, 30]
// A child spends its first ~50–150 ms starting node; a random moment in this window lands in the end
// of start-up, recovery, planning, the claim or the run itself.
const RANDOM_MOMENT_MIN_MS = 40
const RANDOM_MOMENT_MAX_MS = 450

export type KillPlan =
  | { readonly kind: 'none' }
  | { readonly kind: 'moment'; readonly ms: number }
  | { readonly kind: 'point'; readonly at: CrashAt }
  /** The nth shell step of the child's script kills its own agent process right after its effect. */
  | { readonly kind: 'effect'; readonly nth: number }

interface RoundPlan {
  readonly resumers: ReadonlyArray<KillPlan>
  readonly recover: KillPlan | null
}

interface StormMember {
  readonly role: 'recover' | 'resume'
  readonly kill: KillPlan
  /** When, after all are ready, this child gets its cue (0 for a storm not on cue). */
  readonly cueAtMs: number
}

interface StormPlan {
  readonly members: ReadonlyArray<StormMember>
  readonly cued: boolean
  /** The cues are spread over [0, spreadMs]. */
  readonly spreadMs: number
}

/** Everything an iteration will do, drawn from its seed before anything runs, so outcomes never shift it. */
interface IterationPlan {
  readonly steps: ReadonlyArray<EffectStep>
  readonly turn: KillPlan
  readonly rounds: ReadonlyArray<RoundPlan>
  /** Run only if the turn was killed: without a dead owner there is nothing to storm over. */
  readonly storm: StormPlan | null
}

interface ChildOutcome {
  readonly killedAt: string | null
  readonly timedOut: boolean
}

/** Where a child was cut off when the script's own shell step killed it. */
const AFTER_TOOL_SIDE_EFFECT = 'after_tool_side_effect'

const describeKill = (plan: KillPlan): string => {
  switch (plan.kind) {
    case 'none':
      return 'no kill'
    case 'moment':
      return `kill at ${plan.ms} ms`
    case 'point':
      return `kill at ${plan.at.point}#${plan.at.nth}`
    case 'effect':
      return `kill after the effect of shell step #${plan.nth}`
  }
}

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
  odds: { readonly none: number; readonly moment: number; readonly effect: number },
): KillPlan => {
  const r = rng.next()
  if (r < odds.none) return { kind: 'none' }
  if (r < odds.none + odds.moment) return { kind: 'moment', ms: rng.int(RANDOM_MOMENT_MIN_MS, RANDOM_MOMENT_MAX_MS) }
  if (r < odds.none + odds.moment + odds.effect) return { kind: 'effect', nth: rng.int(1, calls) }
  return { kind: 'point', at: rng.pick(pointsOf(role, calls)) }
}

/** Crash points after which the turn's run is open, so recovery must append its terminal event. */
const leavesRunOpen = (at: CrashAt): boolean =>
  at.point !== 'after_terminal_event_committed' && at.point !== 'after_terminal_header_committed'

const drawStorm = (
  seed: number,
  calls: number,
  forced: StormOptions | undefined,
): { readonly storm: StormPlan | null; readonly turnAt: CrashAt } => {
  const rng = makeRng((seed ^ STORM_STREAM) >>> 0)
  const drawn = rng.chance(STORM_ODDS)
  const drawnSize = rng.chance(FULL_STORM_ODDS) ? MAX_STORM_SIZE : rng.int(MIN_STORM_SIZE, MAX_STORM_SIZE - 1)
  const turnAt = rng.pick(pointsOf('turn', calls).filter(leavesRunOpen))
  // Half the storms start on a cue, for the tightest race; the others are the real commands, each
  // starting as soon as it can, for the race a user's processes have.
  const cued = rng.chance(0.5)
  // Some races are lost only when the racers are a few milliseconds apart — one finishes its takeover
  // (an fsync or two) before the next begins its own — so cues are all at once, or spread a little.
  const spreadMs = cued ? rng.pick(CUE_SPREADS_MS) : 0
  const roles = forced?.roles ?? 'mixed'
  // Few kills: the point of a storm is many processes reaching the lock, not dying on the way.
  const members = Array.from({ length: forced?.size ?? drawnSize }, (): StormMember => {
    const role = roles === 'mixed' ? (rng.chance(0.5) ? 'recover' : 'resume') : roles
    const kill: KillPlan =
      role === 'recover'
        ? rng.chance(0.2)
          ? { kind: 'moment', ms: rng.int(0, 300) }
          : { kind: 'none' }
        : chooseKill(rng, 'resume', calls, { none: 0.5, moment: 0.15, effect: 0.1 })
    return { role, kill, cueAtMs: spreadMs === 0 ? 0 : rng.int(0, spreadMs) }
  })
  return { storm: drawn || forced !== undefined ? { members, cued, spreadMs } : null, turnAt }
}

const drawPlan = (seed: number, forcedStorm: StormOptions | undefined): IterationPlan => {
  const rng = makeRng(seed)
  const steps: ReadonlyArray<EffectStep> = Array.from({ length: rng.int(1, 3) }, (_, k) => ({
    token: effectToken(seed, k + 1),
    tool: rng.chance(0.5) ? ('shell' as const) : ('write_file' as const),
  }))
  const turn = chooseKill(rng, 'turn', steps.length, { none: 0.1, moment: 0.2, effect: 0.15 })
  // Resumers are drawn for the most calls a continuation can have; a point it never reaches kills nothing.
  const rounds = Array.from({ length: MAX_ROUNDS }, (): RoundPlan => {
    const count = rng.chance(0.2) ? rng.int(2, 8) : 1
    const resumers = Array.from({ length: count }, () =>
      chooseKill(rng, 'resume', steps.length, { none: 0.4, moment: 0.2, effect: 0.1 }),
    )
    const recover = rng.chance(0.2)
      ? rng.chance(0.5)
        ? { kind: 'moment' as const, ms: rng.int(0, 300) }
        : { kind: 'none' as const }
      : null
    return { resumers, recover }
  })
  const storm = drawStorm(seed, steps.length, forcedStorm)
  // A forced storm must meet a dead owner with a run to repair, so the turn always dies at such a point.
  const turnKill: KillPlan = forcedStorm === undefined ? turn : { kind: 'point', at: storm.turnAt }
  return { steps, turn: turnKill, rounds, storm: storm.storm }
}

const describeStart = (storm: StormPlan): string =>
  !storm.cued ? 'as each starts' : storm.spreadMs === 0 ? 'on one cue' : `on cues spread over ${storm.spreadMs} ms`

const describePlan = (plan: IterationPlan): ReadonlyArray<string> => [
  `script: ${plan.steps.map((s) => s.tool).join(', ')}`,
  `turn: ${describeKill(plan.turn)}`,
  ...plan.rounds.map(
    (round, i) =>
      `round ${i + 1}: ${round.resumers.length} resumer${round.resumers.length === 1 ? '' : 's'} [${round.resumers.map(describeKill).join('; ')}]` +
      (round.recover === null ? '' : ` + recover [${describeKill(round.recover)}]`),
  ),
  ...(plan.storm === null
    ? []
    : [
        `storm after the turn, if it is killed: ${plan.storm.members.length} at once, ${describeStart(plan.storm)} [${plan.storm.members.map((m) => `${m.role} ${plan.storm?.spreadMs === 0 ? '' : `cued at ${m.cueAtMs} ms, `}${describeKill(m.kill)}`).join('; ')}]`,
      ]),
]

/** The token of the shell step that is to kill its process, among the steps a child gets. */
const effectKillToken = (kill: KillPlan, steps: ReadonlyArray<EffectStep>): string | null =>
  kill.kind === 'effect' ? (steps.filter((s) => s.tool === 'shell')[kill.nth - 1]?.token ?? null) : null

/** A started child: its cue, and how it ended. */
export interface Started {
  /** Resolves once the child stands at its cue, or has ended; at once for a child without a cue. */
  readonly ready: Promise<void>
  /** Gives the cue (to a cued child) and starts the clock of a random-moment kill. */
  readonly go: () => void
  readonly outcome: Promise<ChildOutcome>
}

export const startChild = (host: ChaosHost, spec: ChildSpec, kill: KillPlan, timeoutMs: number): Started => {
  // stdin is a pipe so a child at its crash point notices if this process dies first, and so a cued
  // child can be given its cue.
  const child = spawn(host.command, [...host.argsFor(spec)], { stdio: ['pipe', 'pipe', 'ignore'], env: host.env })
  // A child that already ended closes its stdin: the cue is then written to nobody, which is fine.
  child.stdin.on('error', () => undefined)
  let killedAt: string | null = null
  let timedOut = false
  let moment: NodeJS.Timeout | undefined
  let markReady: () => void = () => undefined
  const ready = spec.cue ? new Promise<void>((resolve) => (markReady = resolve)) : Promise.resolve()
  const killNow = (at: string) => {
    if (killedAt !== null || child.exitCode !== null || child.signalCode !== null) return
    killedAt = at
    child.kill('SIGKILL')
  }
  // A cued child's random moment counts from its cue, so it lands in the race, not in its start-up.
  const startClock = () => {
    if (kill.kind === 'moment' && moment === undefined) moment = setTimeout(() => killNow('random_moment'), kill.ms)
  }
  if (!spec.cue) startClock()
  const ceiling = setTimeout(() => {
    timedOut = killedAt === null
    killNow('timeout')
  }, timeoutMs)
  createInterface({ input: child.stdout }).on('line', (line) => {
    if (line === READY_LINE) markReady()
    else if (kill.kind === 'point' && line.startsWith(CRASH_LINE_PREFIX)) killNow(line.slice(CRASH_LINE_PREFIX.length))
  })
  const outcome = new Promise<ChildOutcome>((resolve, reject) => {
    let failedToStart: Error | null = null
    child.on('error', (error) => {
      failedToStart = error
    })
    child.on('close', (_code, signal) => {
      markReady()
      clearTimeout(moment)
      clearTimeout(ceiling)
      // A child that never ran proves nothing: the whole run fails rather than count it as survived.
      if (failedToStart !== null) {
        reject(failedToStart)
        return
      }
      // A SIGKILL this process did not send came from the script's own shell step.
      const by = killedAt ?? (kill.kind === 'effect' && signal === 'SIGKILL' ? AFTER_TOOL_SIDE_EFFECT : null)
      resolve({ killedAt: by === 'timeout' ? null : by, timedOut })
    })
  })
  const go = () => {
    if (!spec.cue) return
    startClock()
    if (child.exitCode === null && child.signalCode === null) child.stdin.write('go\n')
  }
  return { ready, go, outcome }
}

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

export const sameSnapshot = (a: DataDirSnapshot, b: DataDirSnapshot): boolean => {
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
export const withoutFreshIds = (plan: unknown): string =>
  JSON.stringify(plan, (key, value: unknown) =>
    key === 'continuation' && typeof value === 'object' && value !== null
      ? { ...(value as Record<string, unknown>), invocationId: '<fresh>', runId: '<fresh>', turnId: '<fresh>' }
      : value,
  )

export const planSafely = async (host: ChaosHost, dataDir: string, sessionId: string): Promise<unknown> => {
  try {
    return await host.plan(dataDir, sessionId)
  } catch (error) {
    return { threw: error instanceof Error ? error.message : String(error) }
  }
}

/** The newest top-level run's status (a normal turn or a continuation; not a child run). */
export const latestStatus = (snapshot: DataDirSnapshot): string | null => {
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
  const plan = drawPlan(seed, options.storm)
  const { steps } = plan
  const dir = join(options.root, `iteration-${iteration}-${seed}`)
  const dataDir = join(dir, 'data')
  const workspace = join(dir, 'workspace')
  const sessionId = `chaos-${seed}`
  await mkdir(workspace, { recursive: true })
  await writeFile(join(workspace, 'README.md'), 'A scratch workspace of maka chaos.\n')
  await host.prepare?.(dataDir)

  const kills: Record<string, number> = {}
  const violations: Array<SeededViolation> = []
  let children = 0
  let maxConcurrentResumers = 0
  let roundsRun = 0
  let concurrentRounds = 0
  let storm: StormReport | null = null
  let before: DataDirSnapshot = emptySnapshot
  let phase = 0
  const base = { dataDir, sessionId, workspace }
  const snapshotOf = host.snapshot ?? readDataDir

  /** A child of this phase: its own script file, so a shell step can be told to kill only this child. */
  const childOf = async (
    role: 'turn' | 'resume' | 'recover',
    kill: KillPlan,
    remaining: ReadonlyArray<EffectStep>,
    name: string,
    cue = false,
  ) => {
    const scriptPath = join(dir, `${name}.json`)
    await writeFile(scriptPath, JSON.stringify(scriptOf(remaining, effectKillToken(kill, remaining))))
    const spec: ChildSpec = { ...base, role, scriptPath, crashAt: kill.kind === 'point' ? kill.at : null, cue }
    return { spec, kill }
  }

  /** Runs one phase's children at once, then checks the invariants and plans twice. */
  const runPhase = async (
    label: string,
    specs: ReadonlyArray<{ readonly spec: ChildSpec; readonly kill: KillPlan; readonly cueAtMs?: number }>,
  ) => {
    phase += 1
    const started = specs.map(({ spec, kill }) => startChild(host, spec, kill, timeoutMs))
    const ended = Promise.all(started.map((s) => s.outcome))
    // Handled when awaited below; this only keeps a child that failed to start meanwhile from being
    // an unhandled rejection while the others get ready.
    ended.catch(() => undefined)
    await Promise.all(started.map((s) => s.ready))
    // One synchronous sweep: the children cued at 0 get it within the same few microseconds.
    for (const [i, s] of started.entries()) {
      const at = specs[i]?.cueAtMs ?? 0
      if (at === 0) s.go()
      else setTimeout(s.go, at)
    }
    const outcomes = await ended
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
    const after = await snapshotOf(dataDir)
    found.push(...checkInvariants({ before, after, effects: await readEffects(workspace), tokenOf: tokenOfCall }))
    const first = withoutFreshIds(await planSafely(host, dataDir, sessionId))
    const second = withoutFreshIds(await planSafely(host, dataDir, sessionId))
    if (first !== second) {
      found.push({ code: InvariantCode.plan_not_deterministic, sessionId, message: 'two plans of one state differ.' })
    }
    if (!sameSnapshot(after, await snapshotOf(dataDir))) {
      found.push({ code: InvariantCode.planning_wrote, sessionId, message: 'planning changed a run, ledger or claim.' })
    }
    violations.push(...found.map((v) => ({ ...v, iteration, seed, phase: label })))
    const result = {
      after,
      killed: outcomes.some((o) => o.killedAt !== null),
      grew: after.runs.size > before.runs.size,
    }
    before = after
    return result
  }

  try {
    let state = await runPhase('turn', [await childOf('turn', plan.turn, steps, 'turn')])
    if (plan.storm !== null && state.killed) {
      const remaining = remainingSteps(steps, state.after, sessionId)
      const { members, cued, spreadMs } = plan.storm
      const children = await Promise.all(
        members.map(async (m, i) => ({
          ...(await childOf(m.role, m.kill, remaining, `storm-${i + 1}-${m.role}`, cued)),
          cueAtMs: m.cueAtMs,
        })),
      )
      const recovers = members.filter((m) => m.role === 'recover').length
      storm = {
        size: members.length,
        recovers,
        resumers: members.length - recovers,
        cued,
        spreadMs,
        staleOwner: state.after.owners === undefined ? null : state.after.owners.has(sessionId),
      }
      state = await runPhase('storm', children)
    }
    for (const [r, round] of plan.rounds.entries()) {
      if (latestStatus(state.after) === 'completed') break
      const remaining = remainingSteps(steps, state.after, sessionId)
      roundsRun += 1
      if (round.resumers.length > 1) concurrentRounds += 1
      maxConcurrentResumers = Math.max(maxConcurrentResumers, round.resumers.length)
      const resumers = await Promise.all(
        round.resumers.map((kill, i) => childOf('resume', kill, remaining, `round-${r + 1}-resumer-${i + 1}`)),
      )
      const recover =
        round.recover === null ? [] : [await childOf('recover', round.recover, remaining, `round-${r + 1}-recover`)]
      state = await runPhase(`round ${r + 1}`, [...resumers, ...recover])
      // Nobody was killed and nothing new was created: the session parked or is done.
      if (!state.killed && !state.grew) break
    }
  } finally {
    if (!options.keep && violations.length === 0) {
      await rm(dir, { recursive: true, force: true })
      await host.dispose?.(dataDir)
    }
  }
  return {
    iteration,
    seed,
    schedule: describePlan(plan),
    roundsRun,
    concurrentRounds,
    kills,
    children,
    maxConcurrentResumers,
    storm,
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
  const stormsBySize: Record<string, number> = {}
  let staleOwnerStorms = 0
  let cuedStorms = 0
  let stormChildren = 0
  const forced = options.storm
  if (
    forced !== undefined &&
    (!Number.isInteger(forced.size) || forced.size < MIN_STORM_SIZE || forced.size > MAX_STORM_SIZE)
  ) {
    throw new RangeError(`storm.size must be a whole number from ${MIN_STORM_SIZE} to ${MAX_STORM_SIZE}.`)
  }
  const seeds = iterationSeeds(options.seed, options.iterations)
  for (const [i, seed] of seeds.entries()) {
    const report = await runIteration(options, i + 1, seed)
    for (const [point, n] of Object.entries(report.kills)) killsByBoundary[point] = (killsByBoundary[point] ?? 0) + n
    violations.push(...report.violations)
    children += report.children
    concurrentRounds += report.concurrentRounds
    maxConcurrentResumers = Math.max(maxConcurrentResumers, report.maxConcurrentResumers)
    if (report.storm !== null) {
      stormsBySize[report.storm.size] = (stormsBySize[report.storm.size] ?? 0) + 1
      if (report.storm.staleOwner === true) staleOwnerStorms += 1
      if (report.storm.cued) cuedStorms += 1
      stormChildren += report.storm.size
    }
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
    storms: Object.values(stormsBySize).reduce((a, b) => a + b, 0),
    maxStormSize: Math.max(0, ...Object.keys(stormsBySize).map(Number)),
    // Integer keys keep ascending order in a JS object, so the sizes print smallest first.
    stormsBySize,
    staleOwnerStorms,
    cuedStorms,
    stormChildren,
    violations,
    wallMs: Number((process.hrtime.bigint() - started) / 1_000_000n),
  }
}
