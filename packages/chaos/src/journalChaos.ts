/**
 * `maka chaos --journal`: protocol turns whose tools take real time, killed at a uniformly random
 * moment, then recovered, planned and resumed as a restarted host would — with the share of killed
 * turns that continued without a person. Each iteration runs one scripted turn shaped like a real
 * one (a `list_dir`, a 1.5 s foreground `shell` build, a `read_file`, a 1 s `shell` test run, a
 * `write_file`, 300 ms model steps) in a child process, SIGKILLs it at a random moment of its life
 * (or lets one shell step kill its own agent right after its effect), runs `recover`, plans — waiting
 * while the plan parks only with `tool_still_running` — and, when the plan continues, resumes with a
 * script holding only the calls the source never made (the plan settles every call it made). After
 * each phase it checks `checkInvariants`, and after the resume the journal's own invariants
 * (`checkJournal`). The same driver with the journal off gives the Phase 1 figure of the same turn.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { checkInvariants } from './checkInvariants.js'
import { checkJournal } from './checkJournal.js'
import { type JsonObject, asObject, committedRows } from './committedRows.js'
import {
  type DataDirSnapshot,
  SHELL_EFFECTS_FILE,
  WRITE_EFFECTS_DIR,
  emptySnapshot,
  readDataDir,
  readEffects,
} from './DataDirSnapshot.js'
import { effectToken, tokenOfCall } from './effectScript.js'
import { type Rng, iterationSeeds, makeRng } from './Rng.js'
import {
  type ChaosHost,
  type ChildSpec,
  type KillPlan,
  type SeededViolation,
  latestStatus,
  planSafely,
  sameSnapshot,
  startChild,
  withoutFreshIds,
} from './runChaos.js'
import { InvariantCode, type Violation } from './Violation.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * One tool call of the journal turn.
 * @category models
 */
export interface JournalStep {
  readonly tool: 'list_dir' | 'shell' | 'read_file' | 'write_file'
  /** The side-effect token of a `shell` or `write_file` step (null for the read-only tools). */
  readonly token: string | null
  /** How long a `shell` step's command sleeps after its effect. */
  readonly seconds: number
}

/**
 * Options of a journal chaos run. The host's environment decides whether its children write the
 * journal; the driver is the same either way, so both figures come from the same turn.
 * @category models
 */
export interface JournalChaosOptions {
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
  /** How long to wait, at most, while the plan parks only with `tool_still_running`. */
  readonly waitCeilingMs?: number
  readonly onIteration?: (report: JournalIterationReport) => void
}

/**
 * What became of one iteration's turn.
 * @category models
 */
export type JournalOutcome =
  /** The random moment fell after the turn ended. */
  | { readonly kind: 'not_killed' }
  /** Killed, and the resume finished the turn (the latest run is completed). */
  | { readonly kind: 'continued'; readonly waitedMs: number }
  /** Killed, and the plan parked with these codes (what a person must decide), or the resume did not complete. */
  | { readonly kind: 'parked'; readonly codes: ReadonlyArray<string> }

/**
 * One iteration.
 * @category models
 */
export interface JournalIterationReport {
  readonly iteration: number
  readonly seed: number
  /** What the seed drew: the kill, and which shell step kills its own agent, if any. */
  readonly schedule: ReadonlyArray<string>
  /**
   * Where the kill landed, read from the source ledger: `before_run`, `after_user_text`,
   * `after_function_call:<tool>`, `after_tool_dispatch:<tool>`, `after_tool_response:<tool>`,
   * `after_terminal_event`; null when the turn was not killed.
   */
  readonly boundary: string | null
  /** `random_moment` or `after_tool_side_effect` (a shell step killed its agent); null when not killed. */
  readonly killedBy: string | null
  readonly outcome: JournalOutcome
  readonly children: number
  readonly violations: ReadonlyArray<SeededViolation>
  readonly keptAt: string | null
}

/**
 * The whole run.
 * @category models
 */
export interface JournalChaosSummary {
  readonly seed: number
  readonly iterations: number
  /** Killed turns by where the kill landed (see `JournalIterationReport.boundary`). */
  readonly killsByBoundary: Readonly<Record<string, number>>
  /** Killed turns by who killed them: `random_moment` or `after_tool_side_effect`. */
  readonly killsBy: Readonly<Record<string, number>>
  readonly killed: number
  readonly notKilled: number
  /** Killed turns that a resume finished with no person. */
  readonly continued: number
  /** `continued / killed` (0 when nothing was killed). */
  readonly continuedShare: number
  /** Killed turns whose run existed (a kill before it left nothing to continue). */
  readonly killedAfterRun: number
  readonly continuedShareAfterRun: number
  /** Turns that waited for a command still running before they continued. */
  readonly waited: number
  readonly maxWaitMs: number
  /** Park codes of the killed turns that did not continue (a turn parked with two codes counts for both). */
  readonly parkCodes: Readonly<Record<string, number>>
  /** Parked turns by the boundary their kill landed at. */
  readonly parkedByBoundary: Readonly<Record<string, number>>
  readonly children: number
  readonly violations: ReadonlyArray<SeededViolation>
  readonly wallMs: number
}

// -------------------------------------------------------------------------------------
// internals
// -------------------------------------------------------------------------------------

const DEFAULT_CHILD_TIMEOUT_MS = 60_000
// The turn (with node's start-up) lasts about 5 s on an idle machine: the random moment is drawn over
// that window, so it lands anywhere in the turn's life, its first instant included.
const KILL_WINDOW_MS = 5_200
// One iteration in ten, a shell step kills its own agent right after its command's effect instead.
const SELF_KILL_ODDS = 0.1
const MODEL_STEP_MS = 300
const DEFAULT_WAIT_CEILING_MS = 60_000
const WAIT_POLL_MS = 100
const SELF_KILL = ' && kill -9 ${MAKA_AGENT_PID:-$PPID}'

/** The turn of the issue: a listing, a build, a read, a test run, a write. */
const stepsOf = (seed: number): ReadonlyArray<JournalStep> => [
  { tool: 'list_dir', token: null, seconds: 0 },
  { tool: 'shell', token: effectToken(seed, 2), seconds: 1.5 },
  { tool: 'read_file', token: null, seconds: 0 },
  { tool: 'shell', token: effectToken(seed, 4), seconds: 1 },
  { tool: 'write_file', token: effectToken(seed, 5), seconds: 0 },
]

const writeContent = (token: string): string => `${token}\n`

/**
 * The script of the journal turn's steps: each model step thinks 300 ms, then calls its tool; a
 * `shell` step appends its token to `effects.log` first (a second start shows), then sleeps; with
 * `selfKillToken`, that step kills its own agent once its command is done (`$MAKA_AGENT_PID` under the
 * journal's supervisor, `$PPID` without it).
 * @category constructors
 */
export const journalScriptOf = (
  steps: ReadonlyArray<JournalStep>,
  selfKillToken: string | null = null,
): ReadonlyArray<unknown> => [
  ...steps.flatMap((step) => [
    { delayMs: MODEL_STEP_MS },
    {
      toolCall:
        step.tool === 'list_dir'
          ? { name: 'list_dir', args: { path: '.' } }
          : step.tool === 'read_file'
            ? { name: 'read_file', args: { path: 'README.md' } }
            : step.tool === 'write_file'
              ? {
                  name: 'write_file',
                  args: { path: `${WRITE_EFFECTS_DIR}/${step.token}`, content: writeContent(step.token ?? '') },
                }
              : {
                  name: 'shell',
                  args: {
                    command:
                      `printf '%s\\n' ${step.token} >> ${SHELL_EFFECTS_FILE} && sleep ${step.seconds} && echo done` +
                      (step.token === selfKillToken ? SELF_KILL : ''),
                  },
                },
    },
  ]),
  { delayMs: MODEL_STEP_MS },
  { text: 'Chaos turn done.' },
]

const callRows = (snapshot: DataDirSnapshot, sessionId: string): ReadonlyArray<JsonObject> =>
  [...snapshot.runs.values()]
    .filter((run) => run.sessionId === sessionId)
    .flatMap((run) => committedRows(run.ledger))
    .filter((row) => row['partial'] === false && asObject(row['content'])?.['kind'] === 'function_call')

/**
 * Where a kill landed, from the killed turn's ledger: the last call without a response and whether it
 * was dispatched, else the last response, else the user's text; `before_run` with no ledger row.
 */
const boundaryOf = (snapshot: DataDirSnapshot, sessionId: string): string => {
  const rows = [...snapshot.runs.values()]
    .filter((run) => run.sessionId === sessionId)
    .flatMap((run) => committedRows(run.ledger))
  if (rows.length === 0) return 'before_run'
  if (rows.some((row) => asObject(row['actions'])?.['endInvocation'] === true)) return 'after_terminal_event'
  const answered = new Set<string>()
  const dispatched = new Set<string>()
  let lastResponse: string | null = null
  for (const row of rows) {
    const content = asObject(row['content'])
    if (content?.['kind'] === 'function_response' && typeof content['id'] === 'string') {
      answered.add(content['id'])
      lastResponse = String(content['name'])
    }
    const dispatch = asObject(asObject(row['actions'])?.['toolDispatch'])
    if (typeof dispatch?.['toolCallId'] === 'string') dispatched.add(dispatch['toolCallId'])
  }
  const open = callRows(snapshot, sessionId)
    .map((row) => asObject(row['content']) ?? {})
    .filter((content) => typeof content['id'] === 'string' && !answered.has(content['id']))
  const last = open[open.length - 1]
  if (last !== undefined) {
    return `${dispatched.has(String(last['id'])) ? 'after_tool_dispatch' : 'after_function_call'}:${String(last['name'])}`
  }
  return lastResponse === null ? 'after_user_text' : `after_tool_response:${lastResponse}`
}

const readOrNull = async (path: string): Promise<Buffer | null> => {
  try {
    return await readFile(path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw error
  }
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms))

const planFields = (
  plan: unknown,
): { readonly disposition: string | null; readonly reasons: ReadonlyArray<string> } => {
  const object = asObject(plan)
  const reasons = object?.['rejectionReasons']
  return {
    disposition: typeof object?.['disposition'] === 'string' ? object['disposition'] : null,
    reasons: Array.isArray(reasons) ? reasons.map(String) : typeof object?.['threw'] === 'string' ? ['plan_threw'] : [],
  }
}

const onlyStillRunning = (reasons: ReadonlyArray<string>): boolean =>
  reasons.length > 0 && reasons.every((reason) => reason === 'tool_still_running')

const drawSchedule = (rng: Rng, steps: ReadonlyArray<JournalStep>) => {
  const shells = steps.filter((step) => step.tool === 'shell')
  const selfKill = rng.chance(SELF_KILL_ODDS) ? (rng.pick(shells).token ?? null) : null
  const killMs = rng.int(0, KILL_WINDOW_MS)
  const kill: KillPlan =
    selfKill === null
      ? { kind: 'moment', ms: killMs }
      : { kind: 'effect', nth: shells.findIndex((s) => s.token === selfKill) + 1 }
  return { selfKill, kill }
}

const runIteration = async (
  options: JournalChaosOptions,
  iteration: number,
  seed: number,
): Promise<JournalIterationReport> => {
  const { host } = options
  const timeoutMs = options.childTimeoutMs ?? DEFAULT_CHILD_TIMEOUT_MS
  const ceilingMs = options.waitCeilingMs ?? DEFAULT_WAIT_CEILING_MS
  const steps = stepsOf(seed)
  const { selfKill, kill } = drawSchedule(makeRng(seed), steps)
  const schedule = [
    `script: ${steps.map((s) => (s.tool === 'shell' ? `shell ${s.seconds} s` : s.tool)).join(', ')}`,
    selfKill === null
      ? `turn: kill at ${kill.kind === 'moment' ? kill.ms : 0} ms`
      : `turn: shell step ${kill.kind === 'effect' ? kill.nth : 0} kills its agent after its effect`,
  ]
  const dir = join(options.root, `iteration-${iteration}-${seed}`)
  const dataDir = join(dir, 'data')
  const workspace = join(dir, 'workspace')
  const sessionId = `chaos-${seed}`
  await mkdir(workspace, { recursive: true })
  await writeFile(join(workspace, 'README.md'), 'A scratch workspace of maka chaos.\n')
  await host.prepare?.(dataDir)
  const snapshotOf = host.snapshot ?? readDataDir
  const violations: Array<SeededViolation> = []
  let children = 0
  let before: DataDirSnapshot = emptySnapshot

  const child = async (role: ChildSpec['role'], name: string, script: ReadonlyArray<unknown>, plan: KillPlan) => {
    const scriptPath = join(dir, `${name}.json`)
    await writeFile(scriptPath, JSON.stringify(script))
    const spec: ChildSpec = { dataDir, sessionId, workspace, role, scriptPath, crashAt: null, cue: false }
    const started = startChild(host, spec, plan, timeoutMs)
    started.go()
    children += 1
    return started.outcome
  }
  const effectsNow = () => readEffects(workspace)
  const check = async (label: string, extra: ReadonlyArray<Violation> = []) => {
    const after = await snapshotOf(dataDir)
    const found = [...extra, ...checkInvariants({ before, after, effects: await effectsNow(), tokenOf: tokenOfCall })]
    violations.push(...found.map((v) => ({ ...v, iteration, seed, phase: label })))
    before = after
    return after
  }
  const timedOut = (role: string): Violation => ({
    code: InvariantCode.child_timeout,
    sessionId,
    message: `the ${role} child ran longer than ${timeoutMs} ms and was killed.`,
  })

  let outcome: JournalOutcome = { kind: 'not_killed' }
  let boundary: string | null = null
  let killedBy: string | null = null
  try {
    const turn = await child('turn', 'turn', journalScriptOf(steps, selfKill), kill)
    const afterTurn = await check('turn', turn.timedOut ? [timedOut('turn')] : [])
    if (turn.killedAt !== null) {
      killedBy = turn.killedAt
      boundary = boundaryOf(afterTurn, sessionId)
      const recover = await child('recover', 'recover', [], { kind: 'none' })
      const recovered = await check('recover', recover.timedOut ? [timedOut('recover')] : [])
      // Plan as a restarted host does; while only a command still running holds it, wait and plan again.
      const waitStarted = Date.now()
      let plan = await planSafely(host, dataDir, sessionId)
      let waitedMs = 0
      while (onlyStillRunning(planFields(plan).reasons) && Date.now() - waitStarted < ceilingMs) {
        await sleep(WAIT_POLL_MS)
        plan = await planSafely(host, dataDir, sessionId)
        waitedMs = Date.now() - waitStarted
      }
      const planned = await snapshotOf(dataDir)
      const second = await planSafely(host, dataDir, sessionId)
      const planChecks: Array<Violation> = []
      if (withoutFreshIds(plan) !== withoutFreshIds(second)) {
        planChecks.push({
          code: InvariantCode.plan_not_deterministic,
          sessionId,
          message: 'two plans of one state differ.',
        })
      }
      if (!sameSnapshot(planned, await snapshotOf(dataDir))) {
        planChecks.push({
          code: InvariantCode.planning_wrote,
          sessionId,
          message: 'planning changed a run, ledger or claim.',
        })
      }
      violations.push(...planChecks.map((v) => ({ ...v, iteration, seed, phase: 'plan' })))
      const { disposition, reasons } = planFields(plan)
      if (latestStatus(recovered) === 'completed') {
        // Killed after its terminal event: the turn had already finished, there is nothing to continue.
        outcome = { kind: 'continued', waitedMs }
      } else if (disposition !== 'continue') {
        outcome = { kind: 'parked', codes: reasons.length === 0 ? ['no_plan'] : reasons }
      } else {
        // The plan settles every call the source made; the model is asked only for the calls never made.
        const made = callRows(recovered, sessionId).length
        const resume = await child('resume', 'resume', journalScriptOf(steps.slice(made)), { kind: 'none' })
        const resumed = await check('resume', resume.timedOut ? [timedOut('resume')] : [])
        const writes = await Promise.all(
          steps.flatMap((step) =>
            step.tool === 'write_file' && step.token !== null
              ? [
                  (async () => ({
                    token: step.token ?? '',
                    expected: writeContent(step.token ?? ''),
                    actual: await readOrNull(join(workspace, WRITE_EFFECTS_DIR, step.token ?? '')),
                  }))(),
                ]
              : [],
          ),
        )
        const journal = checkJournal({ beforeResume: recovered, after: resumed, writes })
        violations.push(...journal.map((v) => ({ ...v, iteration, seed, phase: 'resume' })))
        if (latestStatus(resumed) === 'completed') outcome = { kind: 'continued', waitedMs }
        else {
          const { reasons: now } = planFields(await planSafely(host, dataDir, sessionId))
          outcome = { kind: 'parked', codes: now.length === 0 ? ['resume_not_completed'] : now }
        }
      }
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
    schedule,
    boundary,
    killedBy,
    outcome,
    children,
    violations,
    keptAt: options.keep || violations.length > 0 ? dir : null,
  }
}

const bump = (counts: Record<string, number>, key: string) => {
  counts[key] = (counts[key] ?? 0) + 1
}

const sorted = (counts: Readonly<Record<string, number>>): Readonly<Record<string, number>> =>
  Object.fromEntries(Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)))

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Runs every iteration in turn and sums them up.
 * @category constructors
 */
export const runJournalChaos = async (options: JournalChaosOptions): Promise<JournalChaosSummary> => {
  const started = process.hrtime.bigint()
  const killsByBoundary: Record<string, number> = {}
  const killsBy: Record<string, number> = {}
  const parkCodes: Record<string, number> = {}
  const parkedByBoundary: Record<string, number> = {}
  const violations: Array<SeededViolation> = []
  let killed = 0
  let continued = 0
  let killedAfterRun = 0
  let continuedAfterRun = 0
  let waited = 0
  let maxWaitMs = 0
  let children = 0
  for (const [i, seed] of iterationSeeds(options.seed, options.iterations).entries()) {
    const report = await runIteration(options, i + 1, seed)
    children += report.children
    violations.push(...report.violations)
    if (report.outcome.kind !== 'not_killed') {
      killed += 1
      const boundary = report.boundary ?? '?'
      bump(killsByBoundary, boundary)
      bump(killsBy, report.killedBy ?? '?')
      if (boundary !== 'before_run') killedAfterRun += 1
      if (report.outcome.kind === 'continued') {
        continued += 1
        if (boundary !== 'before_run') continuedAfterRun += 1
        if (report.outcome.waitedMs > 0) {
          waited += 1
          maxWaitMs = Math.max(maxWaitMs, report.outcome.waitedMs)
        }
      } else {
        bump(parkedByBoundary, boundary)
        for (const code of report.outcome.codes) bump(parkCodes, code)
      }
    }
    options.onIteration?.(report)
  }
  return {
    seed: options.seed,
    iterations: options.iterations,
    killsByBoundary: sorted(killsByBoundary),
    killsBy: sorted(killsBy),
    killed,
    notKilled: options.iterations - killed,
    continued,
    continuedShare: killed === 0 ? 0 : continued / killed,
    killedAfterRun,
    continuedShareAfterRun: killedAfterRun === 0 ? 0 : continuedAfterRun / killedAfterRun,
    waited,
    maxWaitMs,
    parkCodes: sorted(parkCodes),
    parkedByBoundary: sorted(parkedByBoundary),
    children,
    violations,
    wallMs: Number((process.hrtime.bigint() - started) / 1_000_000n),
  }
}
