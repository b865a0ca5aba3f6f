/**
 * The demo's scenario: the main job end to end, in a scratch data dir and workspace. A child process
 * runs a scripted turn and is killed with SIGKILL at a crash point; then this process runs startup
 * recovery, plans the latest safe boundary, executes the continuation (its scripted model gets the
 * steps the crashed turn never reached) and reads the lineage. With `after_function_call` a run that
 * keeps the tool journal continues by running the call again (its tool never started, which the
 * journal proves); a run without it parks with `dangling_tool_state` and nothing is executed. Each step says what the contract
 * expects and whether it happened. The host starts the child, builds the runtime and renders what
 * the steps report; it decides nothing here.
 */
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { access, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import * as E from 'fp-ts/lib/Either.js'
import { type AgentRun, type RuntimeEvent, isProtocolMarked } from '@maka/events'
import {
  type ContinuationResult,
  type FileRuntime,
  type PermissionMode,
  type RecoveryAction,
  type RunObserver,
} from '@maka/executor'
import type { ContinuationPlan } from '@maka/planner'
import { projectResumePlan } from '@maka/projection'
import { type ModelProvider, type ScriptStep, makeScriptedProvider } from '@maka/providers'
import { type RunKind, continuationsOf, listSessionRuns, runKindOf } from '@maka/sessions'
import type { StorePorts } from '@maka/stores'
import { claimPath } from '@maka/store-jsonl'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * The user prompt of the demo turn.
 * @category models
 */
export const DEMO_PROMPT = 'List the workspace, then write notes.txt with a short summary.'

/**
 * The crash points the demo is run at: after a tool result was committed (the plan continues), or
 * between a tool call and its result (the plan parks).
 * @category models
 */
export type DemoCrashPoint = 'after_tool_response' | 'after_function_call'

/**
 * One message of the child's stdout protocol, one JSON object a line; `S` is the host's summary
 * of an event (never tool args or results).
 * @category models
 */
export type DemoChildMessage<S> =
  | { readonly type: 'event'; readonly runId: string; readonly line: S }
  | { readonly type: 'ready'; readonly point: string; readonly runId: string; readonly pid: number }
  | { readonly type: 'finished'; readonly outcome: string }

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

/**
 * Something a step reports, for the host to render: a sentence, an event (from the child's
 * protocol, or committed by this process's runtime), a recovery action, the plan, the
 * continuation's result, a park reason, the lineage, or one check of the lineage.
 * @category models
 */
export type DemoDetail<S> =
  | { readonly kind: 'note'; readonly text: string }
  | { readonly kind: 'childEvent'; readonly summary: S }
  | { readonly kind: 'event'; readonly event: RuntimeEvent }
  | { readonly kind: 'recovery'; readonly action: RecoveryAction }
  | { readonly kind: 'plan'; readonly plan: ContinuationPlan }
  | { readonly kind: 'result'; readonly result: ContinuationResult }
  | { readonly kind: 'parkReason'; readonly code: string }
  | { readonly kind: 'lineage'; readonly lineage: Lineage }
  | { readonly kind: 'check'; readonly ok: boolean; readonly what: string }

/**
 * One numbered step and whether it behaved as the contract says.
 * @category models
 */
export interface DemoStepOutcome {
  readonly n: number
  readonly title: string
  readonly expected: string
  readonly ok: boolean
}

/**
 * What the host chose (its flags, already checked).
 * @category models
 */
export interface DemoOptions {
  readonly at: DemoCrashPoint
  /** The turn's script: the continuation's scripted model gets the steps the crash cut off. */
  readonly script: ReadonlyArray<ScriptStep>
  /** The built-in script, whose one `write_file` of notes.txt the lineage check counts. */
  readonly builtin: boolean
  /** An existing data dir to use (and keep), or null for one in the scratch folder. */
  readonly dataDir: string | null
  /** Keep the scratch folder (always kept with an explicit data dir). */
  readonly keep: boolean
}

/**
 * What the child is told: where, which session, where to stop.
 * @category models
 */
export interface DemoChildSpec {
  readonly dataDir: string
  readonly sessionId: string
  readonly cwd: string
  readonly at: DemoCrashPoint
}

/**
 * What the runtime of the recovering process is built from; the scenario forces safe-boundary
 * resume on and allows every tool call.
 * @category models
 */
export interface DemoRuntimeChoice {
  readonly dataDir: string
  readonly providerFor: (run: { readonly kind: 'turn' | 'continuation'; readonly runId: string }) => ModelProvider
  readonly safeBoundaryResumeEnabled: true
  readonly permissionMode: PermissionMode
  readonly observer: RunObserver
}

/**
 * The host: how to start the child that runs the turn (it speaks `DemoChildMessage<S>` on stdout,
 * says `ready` at the crash point and waits to be killed), how to build a runtime, and where each
 * step and detail goes as it happens.
 * @category models
 */
export interface DemoHost<S> {
  readonly child: (spec: DemoChildSpec) => { readonly command: string; readonly args: ReadonlyArray<string> }
  readonly compose: (choice: DemoRuntimeChoice) => FileRuntime
  /** The scratch places, before the first step. */
  readonly onStart?: (where: {
    readonly dataDir: string
    readonly workspace: string
    readonly sessionId: string
  }) => void
  readonly onStepStart?: (step: { readonly n: number; readonly title: string }) => void
  readonly onDetail?: (detail: DemoDetail<S>) => void
  readonly onStepEnd?: (step: DemoStepOutcome) => void
}

/**
 * The demo's outcome: `ok` iff every step behaved.
 * @category models
 */
export interface DemoReport {
  readonly ok: boolean
  readonly dataDir: string
  readonly workspace: string
  readonly kept: boolean
  readonly sessionId: string
  readonly sourceRunId: string | null
  readonly steps: ReadonlyArray<DemoStepOutcome>
  readonly plan: ContinuationPlan | null
  readonly result: ContinuationResult | null
  readonly lineage: Lineage | null
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

interface ChildOutcome {
  readonly ready: { readonly runId: string; readonly point: string } | null
  readonly signal: NodeJS.Signals | null
  readonly code: number | null
  readonly pid: number | null
  readonly stderr: string
  readonly finished: string | null
}

const runChild = <S>(
  command: { readonly command: string; readonly args: ReadonlyArray<string> },
  onEvent: (summary: S) => void,
): Promise<ChildOutcome> =>
  new Promise((resolvePromise) => {
    // stdin is a pipe only so the child notices if this process dies before it can kill the child.
    const child = spawn(command.command, [...command.args], { stdio: ['pipe', 'pipe', 'pipe'] })
    let ready: ChildOutcome['ready'] = null
    let finished: string | null = null
    let stderr = ''
    const timer = setTimeout(() => child.kill('SIGKILL'), CHILD_TIMEOUT_MS)
    child.stderr.setEncoding('utf8')
    child.stderr.on('data', (chunk: string) => {
      stderr += chunk
    })
    createInterface({ input: child.stdout }).on('line', (line) => {
      let message: DemoChildMessage<S>
      try {
        message = JSON.parse(line) as DemoChildMessage<S>
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

// -------------------------------------------------------------------------------------
// the demo
// -------------------------------------------------------------------------------------

/**
 * Runs the demo; the scratch folder is removed unless kept, whatever happens.
 * @category constructors
 */
export const runDemo = async <S>(options: DemoOptions, host: DemoHost<S>): Promise<DemoReport> => {
  const root = await mkdtemp(join(tmpdir(), 'maka-demo-'))
  const dataDir = options.dataDir ?? join(root, 'data')
  const workspace = join(root, 'workspace')
  const keep = options.keep || options.dataDir !== null
  const sessionId = `demo-${randomUUID().slice(0, 8)}`
  const { at, script } = options
  await mkdir(workspace, { recursive: true })
  await writeFile(join(workspace, 'README.md'), 'A scratch workspace for the maka demo.\n')

  const steps: Array<DemoStepOutcome> = []
  let current: { n: number; title: string } | null = null
  const begin = (title: string) => {
    current = { n: steps.length + 1, title }
    host.onStepStart?.(current)
  }
  const detail = (value: DemoDetail<S>) => host.onDetail?.(value)
  const note = (text: string) => detail({ kind: 'note', text })
  const end = (ok: boolean, expected: string) => {
    if (current === null) return
    const step = { n: current.n, title: current.title, expected, ok }
    steps.push(step)
    host.onStepEnd?.(step)
    current = null
  }

  host.onStart?.({ dataDir, workspace, sessionId })

  let plan: ContinuationPlan | null = null
  // The crashed run kept the tool journal (its row 1 carries the marker).
  let journaled = false
  let result: ContinuationResult | null = null
  let sourceRunId: string | null = null
  let lineage: Lineage | null = null
  try {
    // 1–2. The child runs the turn and is killed at the crash point.
    begin(`Start a scripted agent turn in a child process (crash point ${at})`)
    note(`prompt: ${DEMO_PROMPT}`)
    const child = await runChild<S>(host.child({ dataDir, sessionId, cwd: workspace, at }), (summary) =>
      detail({ kind: 'childEvent', summary }),
    )
    sourceRunId = child.ready?.runId ?? null
    if (child.ready !== null)
      note(`child pid ${child.pid ?? '?'} reached ${child.ready.point} in run ${child.ready.runId}`)
    else if (child.finished !== null) note(`the child's turn ended (${child.finished}) without reaching ${at}`)
    const childError = child.stderr.trim().split('\n')[0] ?? ''
    if (childError !== '') note(`child stderr: ${childError}`)
    end(child.ready !== null, `the child reaches ${at}, says so, and waits to be killed`)

    begin(`Kill the child with SIGKILL at ${at}`)
    let remaining: ReadonlyArray<ScriptStep> = []
    const { runtime, stores } = host.compose({
      dataDir,
      providerFor: (run) =>
        run.kind === 'continuation'
          ? makeScriptedProvider({ steps: remaining, toolCallIdPrefix: run.runId })
          : makeScriptedProvider({ toolCallIdPrefix: run.runId }),
      safeBoundaryResumeEnabled: true,
      permissionMode: 'allow',
      observer: { onEvent: (event) => detail({ kind: 'event', event }) },
    })
    const killedHeader = sourceRunId === null ? null : await readHeader(stores, sessionId, sourceRunId)
    const killedLedger = sourceRunId === null ? null : await readEvents(stores, sessionId, sourceRunId)
    journaled = killedLedger !== null && isProtocolMarked(killedLedger.events[0])
    if (killedLedger !== null) {
      remaining = remainingSteps(script, killedLedger.events)
      note(
        `the ledger holds ${killedLedger.highWater} committed rows; the run header still says ${killedHeader?.status ?? '?'}`,
      )
      note(
        `${remaining.length} script step${remaining.length === 1 ? '' : 's'} never reached; the continuation's scripted model gets them`,
      )
      // Phase 0 on the prefix as reopened by a new store instance: what a resume may rely on.
      const phase0 = projectResumePlan(killedLedger.events)
      const operations = phase0.operations.map((op) => `${op.toolName} ${op.status}`).join(', ')
      note(
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
    for (const action of report.actions) detail({ kind: 'recovery', action })
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
    detail({ kind: 'plan', plan })
    const expectContinue = at === 'after_tool_response'
    const reissues = (plan.continuation?.settlementPlan ?? []).filter((entry) => entry.action === 'reissue')
    end(
      expectContinue
        ? plan.disposition === 'continue'
        : journaled
          ? plan.disposition === 'continue' && reissues.length === 1
          : plan.disposition === 'park' && plan.rejectionReasons.includes('dangling_tool_state'),
      expectContinue
        ? 'continue: every tool call of the interrupted turn has a committed result'
        : journaled
          ? 'continue: the tool journal proves the interrupted call never started, so it is run again first'
          : 'park with dangling_tool_state: the interrupted tool call may or may not have taken effect',
    )

    if (plan.disposition === 'continue') {
      // 5. Execute.
      begin('Execute the continuation (no user message is added; completed tool calls are not re-run)')
      result = await runtime.execute(plan)
      detail({ kind: 'result', result })
      end(result._tag === 'Finished' && result.status === 'completed', 'the continuation run completes')
    } else {
      // 5. Park.
      begin('Park: nothing is executed')
      for (const code of plan.rejectionReasons) detail({ kind: 'parkReason', code })
      lineage = await readLineage(stores, sessionId, sourceRunId, workspace, dataDir)
      end(lineage.continuation === null && lineage.claim === null, 'no continuation run and no claim were created')
    }

    // 6. Lineage.
    begin('Lineage')
    lineage = await readLineage(stores, sessionId, sourceRunId, workspace, dataDir)
    detail({ kind: 'lineage', lineage })
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
        ...(options.builtin
          ? ([[lineage.notesFile && lineage.notesWrites === 1, 'notes.txt written exactly once']] as const)
          : []),
      ]
      for (const [ok, what] of checks) detail({ kind: 'check', ok, what })
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

  return {
    ok: steps.every((s) => s.ok),
    dataDir,
    workspace,
    kept: keep,
    sessionId,
    sourceRunId,
    steps,
    plan,
    result,
    lineage,
  }
}
