/**
 * `maka demo`: the main job end to end, in a scratch data dir and workspace. A child process runs a
 * scripted turn and is killed with SIGKILL at `--at`; then this process runs startup recovery,
 * plans the latest safe boundary, executes the continuation (its scripted model gets the steps the
 * crashed turn never reached) and prints the lineage. With `--at after_function_call` the plan parks
 * with `dangling_tool_state` and nothing is executed. Each step says what the contract expects and
 * whether it happened; exit 0 iff every step behaved.
 */
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { access, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import * as E from 'fp-ts/lib/Either.js'
import { type AgentRun, type RuntimeEvent, describeCode } from '@maka/events'
import type { ContinuationResult } from '@maka/executor'
import type { ContinuationPlan } from '@maka/planner'
import { type RunKind, continuationsOf, listSessionRuns, runKindOf } from '@maka/sessions'
import { projectResumePlan } from '@maka/projection'
import { DEMO_SCRIPT, type ScriptStep, makeScriptedProvider } from '@maka/providers'
import { type StorePorts } from '@maka/stores'
import { claimPath } from '@maka/store-jsonl'
import { composeRuntime } from '../composeRuntime.js'
import { type EventSummary, formatSummary, summarizeEvent } from '../eventSummary.js'
import { BadInputError, ExitCode } from '../ExitCode.js'
import { checkDataDir, resolveDataDir } from '../hostInput.js'
import type { DemoFlags, GlobalFlags } from '../CommandFlags.js'
import { readProviderChoice } from '../providerChoice.js'
import { continuationResultLines, planLines, recoveryLine } from '../reportLines.js'
import { type Style, makeStyle, styleForStdout } from '../Style.js'
import { DEMO_PROMPT, type DemoChildMessage } from './demoChild.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * One numbered step of the demo and whether it behaved as the contract says.
 * @category models
 */
export interface DemoStep {
  readonly n: number
  readonly title: string
  readonly expected: string
  readonly ok: boolean
  readonly lines: ReadonlyArray<string>
}

/**
 * A run of the lineage.
 * @category models
 */
export interface LineageRun {
  readonly runId: string
  readonly kind: RunKind
  readonly status: string
  readonly failureClass?: string
  readonly rows: number
  readonly continuationSource?: AgentRun['continuationSource']
}

/**
 * Source run → continuation run, with the claim that binds them.
 * @category models
 */
export interface Lineage {
  readonly sessionId: string
  readonly source: LineageRun | null
  readonly continuation: LineageRun | null
  readonly claim: { readonly path: string; readonly targetRunId: string } | null
  readonly userRowsInContinuation: number
  readonly notesWrites: number
  readonly notesFile: boolean
}

const CHILD_TIMEOUT_MS = 30_000

// -------------------------------------------------------------------------------------
// internals
// -------------------------------------------------------------------------------------

/** The steps of a script the crashed turn never reached: one model row per consumed text or tool step. */
const remainingSteps = (
  script: ReadonlyArray<ScriptStep>,
  sourceEvents: ReadonlyArray<RuntimeEvent>,
): ReadonlyArray<ScriptStep> => {
  let consumed = sourceEvents.filter(
    (e) => !e.partial && e.role === 'model' && (e.content?.kind === 'function_call' || e.content?.kind === 'text'),
  ).length
  let i = 0
  while (consumed > 0 && i < script.length) {
    const step = script[i]
    if (step !== undefined && ('text' in step || 'toolCall' in step)) consumed -= 1
    i += 1
  }
  return script.slice(i)
}

const childEntry = (): string => fileURLToPath(new URL('../bin.cjs', import.meta.url))

interface ChildOutcome {
  readonly ready: { readonly runId: string; readonly point: string } | null
  readonly signal: NodeJS.Signals | null
  readonly code: number | null
  readonly pid: number | null
  readonly stderr: string
  readonly finished: string | null
}

const runChild = (args: ReadonlyArray<string>, onEvent: (summary: EventSummary) => void): Promise<ChildOutcome> =>
  new Promise((resolvePromise) => {
    // stdin is a pipe only so the child notices if this process dies before it can kill the child.
    const child = spawn(process.execPath, [childEntry(), ...args], { stdio: ['pipe', 'pipe', 'pipe'] })
    let ready: ChildOutcome['ready'] = null
    let finished: string | null = null
    let stderr = ''
    const timer = setTimeout(() => child.kill('SIGKILL'), CHILD_TIMEOUT_MS)
    child.stderr.setEncoding('utf8')
    child.stderr.on('data', (chunk: string) => {
      stderr += chunk
    })
    createInterface({ input: child.stdout }).on('line', (line) => {
      let message: DemoChildMessage
      try {
        message = JSON.parse(line) as DemoChildMessage
      } catch {
        return
      }
      if (message.type === 'event') onEvent(message.line)
      else if (message.type === 'finished') finished = message.outcome
      else if (message.type === 'ready' && ready === null) {
        ready = { runId: message.runId, point: message.point }
        // The crash: no cleanup, no finally blocks, no flush in the child.
        child.kill('SIGKILL')
      }
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolvePromise({ ready, signal, code, pid: child.pid ?? null, stderr, finished })
    })
  })

const readEvents = async (stores: StorePorts, sessionId: string, runId: string) => {
  const read = await stores.events.read(sessionId, runId)()
  return E.isRight(read) ? read.right : null
}

const readHeader = async (stores: StorePorts, sessionId: string, runId: string) => {
  const read = await stores.runs.read(sessionId, runId)()
  return E.isRight(read) ? read.right : null
}

const exists = async (path: string): Promise<boolean> => {
  try {
    await access(path)
    return true
  } catch {
    return false
  }
}

const lineageRun = (header: AgentRun, rows: number): LineageRun => ({
  runId: header.runId,
  kind: runKindOf(header),
  status: header.status,
  ...(header.failureClass === undefined ? {} : { failureClass: header.failureClass }),
  rows,
  ...(header.continuationSource === undefined ? {} : { continuationSource: header.continuationSource }),
})

const successfulWrites = (events: ReadonlyArray<RuntimeEvent>): number =>
  events.filter(
    (e) => e.content?.kind === 'function_response' && e.content.name === 'write_file' && e.content.isError !== true,
  ).length

const readLineage = async (
  stores: StorePorts,
  sessionId: string,
  sourceRunId: string | null,
  workspace: string,
  dataDir: string,
): Promise<Lineage> => {
  const listed = await listSessionRuns(stores, sessionId)
  const headers = E.isRight(listed) ? listed.right.flatMap((entry) => ('header' in entry ? [entry.header] : [])) : []
  const sourceHeader = headers.find((h) => h.runId === sourceRunId) ?? null
  const continuationHeader = sourceRunId === null ? null : (continuationsOf(headers, sourceRunId)[0] ?? null)
  const sourceEvents = sourceHeader === null ? null : await readEvents(stores, sessionId, sourceHeader.runId)
  const continuationEvents =
    continuationHeader === null ? null : await readEvents(stores, sessionId, continuationHeader.runId)
  let claim: Lineage['claim'] = null
  const pin = continuationHeader?.continuationSource
  if (pin !== undefined) {
    const read = await stores.claims.read(sessionId, pin.sourceRunId, pin.sourceRuntimeEventHighWater)()
    if (E.isRight(read) && read.right !== null) {
      claim = {
        path: claimPath(dataDir, sessionId, pin.sourceRunId, pin.sourceRuntimeEventHighWater),
        targetRunId: read.right.targetRunId,
      }
    }
  }
  return {
    sessionId,
    source: sourceHeader === null ? null : lineageRun(sourceHeader, sourceEvents?.highWater ?? 0),
    continuation:
      continuationHeader === null ? null : lineageRun(continuationHeader, continuationEvents?.highWater ?? 0),
    claim,
    userRowsInContinuation: (continuationEvents?.events ?? []).filter(
      (e) => e.role === 'user' && e.content?.kind === 'text',
    ).length,
    notesWrites: successfulWrites(sourceEvents?.events ?? []) + successfulWrites(continuationEvents?.events ?? []),
    notesFile: await exists(join(workspace, 'notes.txt')),
  }
}

const lineageLines = (lineage: Lineage, style: Style): ReadonlyArray<string> => {
  const describe = (run: LineageRun) =>
    `${style.bold(run.runId)} ${run.kind} ${run.status}${run.failureClass === undefined ? '' : ` (${run.failureClass})`}, ${run.rows} rows`
  const lines = [`session ${lineage.sessionId}`]
  if (lineage.source !== null) lines.push(`● ${describe(lineage.source)}`)
  if (lineage.continuation !== null) {
    const pin = lineage.continuation.continuationSource
    lines.push(
      `└─ ${describe(lineage.continuation)}, continues ${pin?.sourceRunId ?? '?'} @ ${pin?.sourceRuntimeEventHighWater ?? '?'}`,
    )
  } else {
    lines.push('(no continuation run)')
  }
  lines.push(lineage.claim === null ? 'no claim file' : `claim ${lineage.claim.path} → ${lineage.claim.targetRunId}`)
  return lines
}

// -------------------------------------------------------------------------------------
// the demo
// -------------------------------------------------------------------------------------

/**
 * Runs the demo.
 * @category constructors
 */
export const demo = async (flags: DemoFlags, globals: GlobalFlags): Promise<ExitCode> => {
  const json = flags.json === true
  const style = json ? makeStyle(false) : styleForStdout()
  const verbose = globals.verbose === true
  // Every check of the input before anything is created.
  if (globals.store !== undefined) {
    throw new BadInputError('maka demo shows the JSONL files of its own data dir and never takes --store.')
  }
  const choice = await readProviderChoice(flags.script === undefined ? {} : { script: flags.script })
  const script = choice.kind === 'scripted' && choice.steps !== null ? choice.steps : DEMO_SCRIPT
  const builtin = choice.kind === 'scripted' && choice.steps === null
  const explicitDataDir = globals.dataDir === undefined ? null : resolveDataDir(globals.dataDir)
  if (explicitDataDir !== null) await checkDataDir(explicitDataDir, 'write')

  const root = await mkdtemp(join(tmpdir(), 'maka-demo-'))
  const dataDir = explicitDataDir ?? join(root, 'data')
  const workspace = join(root, 'workspace')
  const keep = flags.keep === true || explicitDataDir !== null
  const sessionId = `demo-${randomUUID().slice(0, 8)}`
  await mkdir(workspace, { recursive: true })
  await writeFile(join(workspace, 'README.md'), 'A scratch workspace for the maka demo.\n')

  const steps: Array<DemoStep> = []
  const out = (line: string) => {
    if (!json) process.stdout.write(`${line}\n`)
  }
  let current: { n: number; title: string; lines: Array<string> } | null = null
  const begin = (title: string) => {
    current = { n: steps.length + 1, title, lines: [] }
    out(`\n${style.bold(`${current.n}. ${title}`)}`)
  }
  const detail = (line: string) => {
    current?.lines.push(line)
    out(`   ${line}`)
  }
  const end = (ok: boolean, expected: string) => {
    if (current === null) return
    steps.push({ n: current.n, title: current.title, expected, ok, lines: current.lines })
    out(`   ${ok ? style.green('✓') : style.red('✗')} ${ok ? expected : `expected: ${expected}`}`)
    current = null
  }

  out(style.bold('maka demo: crash an agent turn, recover, and continue it from a safe boundary'))
  out(style.dim('Safe-boundary resume is forced on for this demo’s own runtime (MAKA_RUNTIME_SAFE_BOUNDARY_RESUME=1).'))
  out(`data dir   ${dataDir}`)
  out(`workspace  ${workspace}`)
  out(`session    ${sessionId}`)

  let plan: ContinuationPlan | null = null
  let result: ContinuationResult | null = null
  let sourceRunId: string | null = null
  let lineage: Lineage | null = null
  try {
    // 1–2. The child runs the turn and is killed at the crash point.
    begin(`Start a scripted agent turn in a child process (crash point ${flags.at})`)
    detail(`prompt: ${DEMO_PROMPT}`)
    const child = await runChild(
      [
        '--data-dir',
        dataDir,
        ...(verbose ? ['--verbose'] : []),
        '__demo-child',
        '--session',
        sessionId,
        '--cwd',
        workspace,
        '--at',
        flags.at,
        ...(flags.script === undefined ? [] : ['--script', resolve(flags.script)]),
      ],
      (summary) => detail(`│ ${formatSummary(summary)}`),
    )
    sourceRunId = child.ready?.runId ?? null
    if (child.ready !== null)
      detail(`child pid ${child.pid ?? '?'} reached ${child.ready.point} in run ${child.ready.runId}`)
    else if (child.finished !== null) detail(`the child's turn ended (${child.finished}) without reaching ${flags.at}`)
    const childError = child.stderr.trim().split('\n')[0] ?? ''
    if (childError !== '') detail(`child stderr: ${childError}`)
    end(child.ready !== null, `the child reaches ${flags.at}, says so, and waits to be killed`)

    begin(`Kill the child with SIGKILL at ${flags.at}`)
    let remaining: ReadonlyArray<ScriptStep> = []
    const { runtime, stores } = composeRuntime({
      dataDir,
      providerFor: (run) =>
        run.kind === 'continuation'
          ? makeScriptedProvider({ steps: remaining, toolCallIdPrefix: run.runId })
          : makeScriptedProvider({ toolCallIdPrefix: run.runId }),
      safeBoundaryResumeEnabled: true,
      permissionMode: 'allow',
      verbose,
      observer: { onEvent: (event) => detail(`│ ${formatSummary(summarizeEvent(event))}`) },
    })
    const killedHeader = sourceRunId === null ? null : await readHeader(stores, sessionId, sourceRunId)
    const killedLedger = sourceRunId === null ? null : await readEvents(stores, sessionId, sourceRunId)
    if (killedLedger !== null) {
      remaining = remainingSteps(script, killedLedger.events)
      detail(
        `the ledger holds ${killedLedger.highWater} committed rows; the run header still says ${killedHeader?.status ?? '?'}`,
      )
      detail(
        `${remaining.length} script step${remaining.length === 1 ? '' : 's'} never reached; the continuation's scripted model gets them`,
      )
      // Phase 0 on the prefix as reopened by a new store instance: what a resume may rely on.
      const phase0 = projectResumePlan(killedLedger.events)
      const operations = phase0.operations.map((op) => `${op.toolName} ${op.status}`).join(', ')
      detail(
        `Phase 0 on the reopened prefix: ${phase0.disposition}` +
          (phase0.rejectionReasons.length > 0 ? ` (${phase0.rejectionReasons.join(', ')})` : '') +
          ` — tool operations: ${operations === '' ? 'none' : operations}`,
      )
    }
    end(
      child.signal === 'SIGKILL' && killedHeader !== null && killedHeader.status !== 'completed',
      'the child died by SIGKILL mid-turn',
    )

    // 3. Recovery.
    begin('Startup recovery (as every host runs before any model call)')
    const report = await runtime.recover()
    for (const action of report.actions) detail(recoveryLine(action))
    const recoveredHeader = sourceRunId === null ? null : await readHeader(stores, sessionId, sourceRunId)
    end(
      report.actions.some((a) => a.runId === sourceRunId && a.action === 'recovered_terminal') &&
        recoveredHeader?.status === 'failed' &&
        recoveredHeader.failureClass === 'app_restarted',
      'the interrupted run is closed as failed (app_restarted) by a recovered terminal event',
    )

    // 4. Plan.
    begin('Plan the latest safe boundary')
    plan = await runtime.plan({ sessionId })
    for (const line of planLines(plan, style)) detail(line)
    const expectContinue = flags.at === 'after_tool_response'
    end(
      expectContinue
        ? plan.disposition === 'continue'
        : plan.disposition === 'park' && plan.rejectionReasons.includes('dangling_tool_state'),
      expectContinue
        ? 'continue: every tool call of the interrupted turn has a committed result'
        : 'park with dangling_tool_state: the interrupted tool call may or may not have taken effect',
    )

    if (plan.disposition === 'continue') {
      // 5. Execute.
      begin('Execute the continuation (no user message is added; completed tool calls are not re-run)')
      result = await runtime.execute(plan)
      for (const line of continuationResultLines(result, style)) detail(line)
      end(result._tag === 'Finished' && result.status === 'completed', 'the continuation run completes')
    } else {
      // 5. Park.
      begin('Park: nothing is executed')
      for (const code of plan.rejectionReasons) detail(`- ${describeCode(code)} ${style.dim(`(${code})`)}`)
      lineage = await readLineage(stores, sessionId, sourceRunId, workspace, dataDir)
      end(lineage.continuation === null && lineage.claim === null, 'no continuation run and no claim were created')
    }

    // 6. Lineage.
    begin('Lineage')
    lineage = await readLineage(stores, sessionId, sourceRunId, workspace, dataDir)
    for (const line of lineageLines(lineage, style)) detail(line)
    if (plan.disposition === 'continue') {
      const pin = lineage.continuation?.continuationSource
      const checks: ReadonlyArray<readonly [boolean, string]> = [
        [
          lineage.source?.status === 'failed' && lineage.source.failureClass === 'app_restarted',
          'source run failed (app_restarted)',
        ],
        [lineage.continuation?.status === 'completed', 'continuation run completed'],
        [
          pin?.sourceRunId === sourceRunId && pin?.sourceRuntimeEventHighWater === lineage.source?.rows,
          'continuationSource pinned to the source high-water',
        ],
        [
          lineage.claim !== null && lineage.claim.targetRunId === lineage.continuation?.runId,
          'claim file names the continuation',
        ],
        [lineage.userRowsInContinuation === 0, 'no user message in the continuation'],
        ...(builtin
          ? ([[lineage.notesFile && lineage.notesWrites === 1, 'notes.txt written exactly once']] as const)
          : []),
      ]
      for (const [ok, what] of checks) detail(`${ok ? style.green('✓') : style.red('✗')} ${what}`)
      end(
        checks.every(([ok]) => ok),
        'source → continuation, pinned to the source high-water, claimed once',
      )
    } else {
      end(
        lineage.source?.status === 'failed' && lineage.continuation === null,
        'the source run stays failed (app_restarted), alone',
      )
    }
  } finally {
    if (!keep) await rm(root, { recursive: true, force: true })
  }

  const ok = steps.every((s) => s.ok)
  if (json) {
    process.stdout.write(
      `${JSON.stringify(
        {
          ok,
          at: flags.at,
          safeBoundaryResumeForced: true,
          dataDir,
          workspace,
          kept: keep,
          sessionId,
          sourceRunId,
          steps,
          plan,
          result,
          lineage,
        },
        null,
        2,
      )}\n`,
    )
  } else {
    const failed = steps.find((s) => !s.ok)
    out('')
    out(
      failed === undefined
        ? style.green(
            flags.at === 'after_function_call'
              ? 'Every step behaved as the contract says: the unsafe boundary was parked, not resumed.'
              : 'Every step behaved as the contract says.',
          )
        : style.red(`Step ${failed.n} did not behave as the contract says.`),
    )
    out(
      keep
        ? `Kept: ${dataDir} and ${workspace}`
        : style.dim('Scratch directories removed (use --keep to inspect them).'),
    )
  }
  return ok ? ExitCode.ok : ExitCode.failed
}
