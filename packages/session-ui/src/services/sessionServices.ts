/**
 * What the desktop main process (and `maka ui`) does for the renderer, over the same packages the
 * CLI composes: file stores and a runtime from `@maka/executor`, the built-in tools, the provider
 * choice of `@maka/providers` (a continuation keeps the model its source run recorded), the
 * session read model of `@maka/sessions`. No domain rule lives here: a resume is one `runtime.resume`
 * (the planner decides whether a session may continue, the executor resolves the source run's model
 * and claims the boundary); this module starts runs, answers with
 * `started` as soon as the run's first event is committed, and pushes every event to the renderer.
 */
import * as E from 'fp-ts/lib/Either.js'
import {
  OPERATOR_VERDICTS,
  OperatorVerdictMeanings,
  type RuntimeEvent,
  describeCode,
  describeParkReason,
  isContinuationStartEvent,
  isOperatorVerdict,
  isParkReason,
  isResolvableParkReason,
  isSafeId,
  nextStepForPark,
} from '@maka/events'
import {
  type ContinuationProviderResolver,
  type ContinuationResult,
  type FileRuntime,
  type PermissionMode,
  type TurnResult,
  awaitsExplicitResume,
  makeFileRuntime,
} from '@maka/executor'
import {
  type OwnerLockLiveness,
  type SessionSummary,
  listSessionSummaries,
  loadSessionOutline,
  summarizeStoredSession,
} from '@maka/sessions'
import {
  type ProviderChoice,
  type ProviderFlags,
  type ScriptDefaults,
  continuationProviderResolver,
  providerForRuns,
} from '@maka/providers'
import { builtinTools } from '@maka/tools'
import type {
  HostMessage,
  OpenOperation,
  Parked,
  ResolveCallResult,
  ResumeLatestResult,
  ResumeOutcome,
  ResumePlanResult,
  SendResult,
  SessionListItem,
  SessionView,
  Started,
  StartFailed,
  TranscriptItem,
  Verdict,
  WaitingOperation,
} from '../hostContract/api.js'
import { HostInputError } from './HostInputError.js'
import { resolveCallResultOf, resolveThrough } from './resolveThrough.js'
import { transcriptItemOf } from './transcript.js'

// A plan's parts these services read (a whole plan or an outline).
type PlanOf = Pick<
  Extract<ContinuationResult, { readonly _tag: 'Parked' }>['plan'],
  'disposition' | 'rejectionReasons' | 'openToolOperations'
>
type PlannedOperation = NonNullable<PlanOf['openToolOperations']>[number]

/**
 * How the services are built.
 * @category models
 */
export interface SessionServicesOptions {
  readonly dataDir: string
  /** `MAKA_RUNTIME_SAFE_BOUNDARY_RESUME=1`; without it there is no resume and no auto-continuation. */
  readonly safeResume: boolean
  /** The model of new turns (the scripted model by default). */
  readonly choice?: ProviderChoice
  /** Provider flags that override what a resumed run recorded (`maka ui --provider …`). */
  readonly providerFlags?: ProviderFlags
  /** `ask` (default) puts each mutating tool call to the renderer. */
  readonly permissionMode?: PermissionMode
  /**
   * The model and permission mode of a new turn in a session — a host keeps what the session's
   * latest run recorded — or the sentence the page shows when they cannot be built; `choice` and
   * `permissionMode` when absent.
   */
  readonly turnSetupFor?: (
    sessionId: string,
  ) => Promise<E.Either<string, { readonly choice: ProviderChoice; readonly permissionMode: PermissionMode }>>
  /** Which model and mode a continuation runs with; `providerFlags` over the recorded model when absent. */
  readonly resolveContinuationProvider?: ContinuationProviderResolver
  readonly env?: NodeJS.ProcessEnv
  /**
   * Whether runs write the tool journal (a run does only with the resume flag and a durable store):
   * on unless `MAKA_RUNTIME_TOOL_JOURNAL=0` in `env`, as in the CLI. The journal is what lets a
   * resume wait for a command still running and a person record a verdict (`resolveCall`).
   */
  readonly toolJournal?: boolean
  /** Where host messages go (the window's webContents, the SSE clients). */
  readonly emit: (message: HostMessage) => void
}

/**
 * What startup did.
 * @category models
 */
export interface StartupReport {
  readonly recoveryActions: number
  readonly continued: ReadonlyArray<{ readonly sessionId: string; readonly runId: string }>
  readonly notContinued: ReadonlyArray<{ readonly sessionId: string; readonly result: Parked | StartFailed }>
  /**
   * The sessions whose continuation waits in the background for a command still running; each
   * joins `autoContinued()` (and is announced) if it starts once the command ends.
   */
  readonly waiting: ReadonlyArray<string>
}

/**
 * The main process's operations.
 * @category models
 */
export interface SessionServices {
  readonly safeResume: boolean
  list(): Promise<ReadonlyArray<SessionListItem>>
  get(sessionId: string): Promise<SessionView>
  send(sessionId: string, prompt: string): Promise<SendResult>
  /** What `resumeLatest` would do now (`maka resume plan`): recovers a run a dead process left open, starts nothing. */
  resumePlan(sessionId: string): Promise<ResumePlanResult>
  /**
   * Never waits: while the only reason to park is a command still running it answers `waiting`,
   * waits in the background (no lock, nothing written), emits `resumeProgress` messages, and the
   * last one carries how the resume ended.
   */
  resumeLatest(sessionId: string): Promise<ResumeLatestResult>
  /**
   * Records a person's verdict on an open tool call through the runtime's `resolve`; `actor` is the
   * host's own name (`desktop`, `browser`), never the renderer's word.
   */
  resolveCall(
    sessionId: string,
    operationId: string,
    verdict: Verdict,
    output: string | undefined,
    actor: 'desktop' | 'browser',
  ): Promise<ResolveCallResult>
  /** Stops every wait a window asked for (its last page closed): nothing is written. How many stopped. */
  stopWaiting(): number
  answerPermission(requestId: string, decision: 'allow' | 'deny'): boolean
  /** The recovery pass over the whole data dir, then (with the flag) every eligible continuation. */
  startup(): Promise<StartupReport>
  /** What the start-up pass continued so far (empty before it ran, and without the flag). */
  autoContinued(): ReadonlyArray<{ readonly sessionId: string; readonly runId: string }>
  /** Resolves when every run started so far has ended. */
  idle(): Promise<void>
  /** Stops every wait and cancels the runs still going (the window closed): each ends `cancelled` durably. */
  cancelAll(): Promise<void>
}

// A long session shows its newest rows; the rest stays on disk.
const TRANSCRIPT_ROWS = 500
const MAX_PROMPT_CHARS = 100_000

// How long start-up waits, in all, for sessions other processes held; a session owned for longer is
// being run by that process.
const OWNER_WAIT_MS = 10_000
const OWNER_POLL_MS = 50

// A jittered poll, so two instances that keep meeting at one session fall out of step.
const pause = () => new Promise((resolve) => setTimeout(resolve, OWNER_POLL_MS * (1 + Math.random())))

// What another process's recovery or run does to a plan made while it held the session.
const RACE_CODES: ReadonlySet<string> = new Set([
  'session_owner_alive',
  'source_terminal_changed',
  'source_high_water_changed',
])

const leftForARace = (result: ResumeLatestResult): boolean =>
  result.disposition === 'park' &&
  result.rejectionReasons.length > 0 &&
  result.rejectionReasons.every((code) => RACE_CODES.has(code))

// Without a script file, a scripted run answers from its history alone.
const NO_DEFAULT_SCRIPTS: ScriptDefaults = { turn: [], continuation: [] }

// The first reason's next step is the one that matters (decision 172); an execution rejection has
// none of its own: the session changed after planning, and a new plan names the way on.
const parked = (codes: ReadonlyArray<string>, open: ReadonlyArray<OpenOperation> = []): Parked => {
  const first = codes[0]
  return {
    disposition: 'park',
    rejectionReasons: codes,
    messages: codes.map(describeCode),
    ...(first !== undefined && isParkReason(first) ? { nextStep: nextStepForPark(first) } : {}),
    ...(open.length === 0 ? {} : { openToolOperations: open }),
  }
}

// A plan that parks only on commands still running: a resume would wait for them.
const onlyStillRunning = (plan: PlanOf): boolean =>
  plan.disposition === 'park' && plan.rejectionReasons.length === 1 && plan.rejectionReasons[0] === 'tool_still_running'

const stillRunning = (plan: PlanOf): ReadonlyArray<WaitingOperation> =>
  (plan.openToolOperations ?? [])
    .filter((op) => op.reason === 'tool_still_running')
    .map((op) => ({ operationId: op.operationId, toolCallId: op.toolCallId, toolName: op.toolName, elapsedMs: null }))

const MAX_OUTPUT_BYTES = 64 * 1024
const MAX_OPERATION_ID_CHARS = 512

const listItemOf = (s: SessionSummary): SessionListItem => ({
  sessionId: s.sessionId,
  title: s.title ?? null,
  cwd: s.cwd,
  createdAt: s.createdAt,
  interrupted: s.interrupted,
  ownerAlive: s.ownerAlive,
  latestRun:
    s.latestRun === null
      ? null
      : {
          runId: s.latestRun.runId,
          kind: s.latestRun.kind,
          status: s.latestRun.status,
          ...(s.latestRun.failureClass === undefined ? {} : { failureClass: s.latestRun.failureClass }),
        },
  ...(s.error === undefined ? {} : { error: s.error }),
})

const requireSessionId = (value: unknown): string => {
  if (!isSafeId(value)) {
    throw new HostInputError('bad_input', 'A session id is 1 to 128 letters, digits, "_" or "-".')
  }
  return value
}

type Outcome = { readonly status: string; readonly message?: string }

const outcomeOfTurn = (result: TurnResult): Outcome =>
  result._tag === 'Finished'
    ? { status: result.status, ...(result.failureMessage === undefined ? {} : { message: result.failureMessage }) }
    : { status: 'failed', message: result.message }

const outcomeOfContinuation = (result: ContinuationResult): Outcome => {
  switch (result._tag) {
    case 'Finished':
      return {
        status: result.status,
        ...(result.failureMessage === undefined ? {} : { message: result.failureMessage }),
      }
    case 'Failed':
    case 'ProviderUnavailable':
      return { status: 'failed', message: result.message }
    case 'Parked':
    case 'Rejected':
      return { status: 'parked' }
  }
}

/**
 * Builds the services over one data directory.
 * @category constructors
 */
export const makeSessionServices = (options: SessionServicesOptions): SessionServices => {
  const { emit } = options
  const turnChoice: ProviderChoice = options.choice ?? { kind: 'scripted', steps: null }
  const permissionMode = options.permissionMode ?? 'ask'
  const running = new Set<Promise<unknown>>()
  const toolJournal = options.toolJournal ?? (options.env ?? process.env)['MAKA_RUNTIME_TOOL_JOURNAL'] !== '0'
  // The waits of resumes a window asked for, and those of the start-up pass (stopped only at exit).
  const windowWaits = new Set<AbortController>()
  const startupWaits = new Set<AbortController>()
  const active = new Set<FileRuntime>()
  const questions = new Map<string, (decision: 'allow' | 'deny') => void>()
  let startupContinued: ReadonlyArray<{ readonly sessionId: string; readonly runId: string }> = []
  const sessionOfRun = new Map<string, string>()

  // One runtime per run, so runs of different sessions go side by side (the executor's owner
  // lock keeps one per session); each forwards its events tagged with its session.
  const runtimeFor = (
    onEvent: (event: RuntimeEvent) => void,
    setup: { readonly choice: ProviderChoice; readonly permissionMode: PermissionMode } = {
      choice: turnChoice,
      permissionMode,
    },
  ): FileRuntime =>
    makeFileRuntime({
      dataDir: options.dataDir,
      toolJournal,
      tools: builtinTools(),
      providerFor: providerForRuns(setup.choice, NO_DEFAULT_SCRIPTS),
      // A continuation keeps the model its source run recorded; one that cannot be built here is
      // refused before the claim (`ProviderUnavailable`), so it never spends the boundary.
      resolveContinuationProvider:
        options.resolveContinuationProvider ??
        continuationProviderResolver(options.providerFlags ?? {}, NO_DEFAULT_SCRIPTS, options.env ?? process.env),
      safeBoundaryResumeEnabled: options.safeResume,
      permissionMode: setup.permissionMode,
      observer: {
        onEvent: (event) => {
          onEvent(event)
          if (!event.partial) emit({ type: 'item', sessionId: event.sessionId, item: transcriptItemOf(event) })
        },
        onTextDelta: (runId, text) => {
          const sessionId = sessionOfRun.get(runId)
          if (sessionId !== undefined) emit({ type: 'text', sessionId, runId, text })
        },
      },
      askPermission: (question) =>
        new Promise((answer) => {
          questions.set(question.requestId, answer)
          emit({
            type: 'permission',
            prompt: {
              sessionId: question.sessionId,
              runId: question.runId,
              requestId: question.requestId,
              toolName: question.toolName,
              summary: question.preview ?? '',
            },
          })
        }),
    })
  const reader = makeFileRuntime({
    dataDir: options.dataDir,
    toolJournal,
    tools: builtinTools(),
    providerFor: () => {
      throw new Error('the reader runtime runs no model')
    },
    safeBoundaryResumeEnabled: options.safeResume,
    permissionMode: 'deny',
  })
  const ownerLiveness: OwnerLockLiveness = (lock) => reader.inspector.ownerLiveness(lock)

  /**
   * Starts `go` and answers once `isStart` accepts a committed event of the new run, or with
   * `early` when the operation ends before one (refused, parked, failed to start).
   */
  const start = <R>(
    sessionId: string,
    kind: 'turn' | 'continuation',
    isStart: (event: RuntimeEvent) => boolean,
    go: (runtime: FileRuntime['runtime']) => Promise<R>,
    outcome: (result: R) => Outcome,
    early: (result: R) => Parked | StartFailed | Promise<Parked | StartFailed>,
    setup?: { readonly choice: ProviderChoice; readonly permissionMode: PermissionMode },
  ): Promise<Started | Parked | StartFailed> =>
    new Promise((answer, fail) => {
      let started: Started | null = null
      const composed = runtimeFor((event) => {
        if (event.sessionId !== sessionId) return
        sessionOfRun.set(event.runId, sessionId)
        if (started === null && !event.partial && isStart(event)) {
          started = { disposition: 'started', runId: event.runId, turnId: event.turnId }
          answer(started)
        }
      }, setup)
      active.add(composed)
      const run = go(composed.runtime).then(
        (result) => {
          active.delete(composed)
          if (started === null) {
            Promise.resolve(early(result)).then(answer, fail)
            return
          }
          const ended = outcome(result)
          emit({
            type: 'runEnded',
            sessionId,
            runId: started.runId,
            kind,
            status: ended.status,
            ...(ended.message === undefined ? {} : { message: ended.message }),
          })
        },
        (error: unknown) => {
          active.delete(composed)
          if (started === null) fail(error instanceof Error ? error : new Error(String(error)))
          else
            emit({ type: 'runEnded', sessionId, runId: started.runId, kind, status: 'failed', message: String(error) })
        },
      )
      running.add(run)
      void run.finally(() => running.delete(run))
    })

  const readSession = async (sessionId: string) => {
    const record = await reader.stores.sessions.read(sessionId)()
    if (E.isLeft(record)) {
      throw new HostInputError(
        'unknown_session',
        record.left._tag === 'NotFound'
          ? `There is no session ${sessionId}.`
          : `The session ${sessionId} cannot be read (${record.left._tag}).`,
      )
    }
    return record.right
  }

  // A run whose process died while this host runs is closed first, as every host does before a
  // plan (the pass touches nothing when nothing needs repair): unrepaired, its plan would park on
  // the open run's missing ending.
  const recovered = async (sessionId: string): Promise<void> => {
    await readSession(sessionId)
    await reader.runtime.recover({ sessionIds: [sessionId] })
  }

  // The args of the open calls, read from their call rows, for the person's preview only: the tool
  // describes the call in one line, and neither the args nor the line is ever logged.
  const previewsOf = async (
    sessionId: string,
    ops: ReadonlyArray<PlannedOperation>,
  ): Promise<ReadonlyMap<string, string>> => {
    const wanted = new Map<string, Set<string>>()
    for (const op of ops) wanted.set(op.runId, (wanted.get(op.runId) ?? new Set()).add(op.toolCallId))
    const argsOf = new Map<string, unknown>()
    for (const [runId, ids] of wanted) {
      await reader.stores.events.fold(sessionId, runId, (event) => {
        const content = event.content
        if (content?.kind === 'function_call' && ids.has(content.id)) argsOf.set(`${runId}/${content.id}`, content.args)
      })()
    }
    const tools = builtinTools()
    const previews = new Map<string, string>()
    for (const op of ops) {
      const key = `${op.runId}/${op.toolCallId}`
      const tool = tools.find((t) => t.name === op.toolName)
      if (tool?.describeCall === undefined || !argsOf.has(key)) continue
      try {
        const line = tool.describeCall(argsOf.get(key))
        if (line !== undefined) previews.set(op.operationId, line)
      } catch {
        // A tool that cannot describe the call shows none.
      }
    }
    return previews
  }

  const openOperationsOf = async (sessionId: string, plan: PlanOf): Promise<ReadonlyArray<OpenOperation>> => {
    const ops = plan.openToolOperations ?? []
    if (ops.length === 0) return []
    const previews = await previewsOf(sessionId, ops)
    return ops.map((op): OpenOperation => {
      const preview = previews.get(op.operationId)
      return {
        operationId: op.operationId,
        toolCallId: op.toolCallId,
        toolName: op.toolName,
        status: op.status,
        recoveryMode: op.recoveryMode,
        reason: op.reason,
        reasonText: op.reason === null ? null : describeParkReason(op.reason),
        ...(preview === undefined ? {} : { preview }),
        ...(isResolvableParkReason(op.reason)
          ? { verdicts: OPERATOR_VERDICTS.map((verdict) => ({ verdict, meaning: OperatorVerdictMeanings[verdict] })) }
          : {}),
      }
    })
  }

  const parkedPlan = async (sessionId: string, plan: PlanOf): Promise<Parked> =>
    parked(plan.rejectionReasons, await openOperationsOf(sessionId, plan))

  const resumePlan = async (sessionId: string): Promise<ResumePlanResult> => {
    await recovered(sessionId)
    const { plan } = await reader.runtime.planOutline({ sessionId })
    if (plan.disposition === 'continue' && plan.continuation !== undefined) {
      return { disposition: 'continue', sourceRunId: plan.continuation.sourceRunId }
    }
    if (onlyStillRunning(plan)) return { disposition: 'waiting', operations: stillRunning(plan) }
    return parkedPlan(sessionId, plan)
  }

  /**
   * A resume that answers at once: started, parked, failed, or `waiting` while it waits for
   * commands still running (then `settled` hears how it ended, after the last progress message).
   */
  const resumeLatest = async (
    sessionId: string,
    waits: Set<AbortController>,
    settled?: (outcome: ResumeOutcome) => void,
  ): Promise<ResumeLatestResult> => {
    await recovered(sessionId)
    const wait = new AbortController()
    waits.add(wait)
    return new Promise<ResumeLatestResult>((answer, fail) => {
      let waiting = false
      const ended = (outcome: ResumeOutcome) => {
        waits.delete(wait)
        if (waiting) emit({ type: 'resumeProgress', sessionId, operations: [], result: outcome })
        else answer(outcome)
        settled?.(outcome)
      }
      start(
        sessionId,
        'continuation',
        isContinuationStartEvent,
        (runtime) =>
          runtime.resume(
            { sessionId, wait: { signal: wait.signal } },
            {
              onWaiting: (operations) => {
                // Identities and times only: never a command or its args.
                const shown = operations.map((op) => ({
                  operationId: op.operationId,
                  toolCallId: op.toolCallId,
                  toolName: op.toolName,
                  elapsedMs: op.elapsedMs,
                }))
                if (!waiting) {
                  waiting = true
                  answer({ disposition: 'waiting', operations: shown })
                } else emit({ type: 'resumeProgress', sessionId, operations: shown })
              },
            },
          ),
        outcomeOfContinuation,
        async (result): Promise<Parked | StartFailed> =>
          result._tag === 'Parked'
            ? parkedPlan(sessionId, result.plan)
            : result._tag === 'Rejected'
              ? parked(result.codes)
              : {
                  disposition: 'failed',
                  message: outcomeOfContinuation(result).message ?? 'The continuation did not start.',
                },
      ).then(ended, (error: unknown) => {
        waits.delete(wait)
        if (!waiting) fail(error instanceof Error ? error : new Error(String(error)))
        else ended({ disposition: 'failed', message: error instanceof Error ? error.message : String(error) })
      })
    })
  }

  const resolveCall = async (
    id: string,
    operationId: string,
    verdict: Verdict,
    output: string | undefined,
    actor: 'desktop' | 'browser',
  ): Promise<ResolveCallResult> => {
    const sessionId = requireSessionId(id)
    if (typeof operationId !== 'string' || operationId === '' || operationId.length > MAX_OPERATION_ID_CHARS) {
      throw new HostInputError('bad_input', 'An operation id is text of 1 to 512 characters.')
    }
    if (!isOperatorVerdict(verdict))
      throw new HostInputError('bad_input', 'The verdict is applied, not_applied or failed.')
    if (output !== undefined && (typeof output !== 'string' || Buffer.byteLength(output, 'utf8') > MAX_OUTPUT_BYTES)) {
      throw new HostInputError('bad_input', 'The output is text of at most 64 KiB.')
    }
    await readSession(sessionId)
    const composed = runtimeFor(() => undefined)
    const result = await resolveThrough(composed.runtime, {
      sessionId,
      target: { operationId },
      verdict,
      ...(output === undefined || output === '' ? {} : { output }),
      actor,
    })
    return resolveCallResultOf(result)
  }

  return {
    safeResume: options.safeResume,
    list: async () => {
      const summaries = await listSessionSummaries(reader.stores, ownerLiveness)
      if (E.isLeft(summaries)) throw new Error(`The sessions cannot be listed (${summaries.left}).`)
      return summaries.right.map(listItemOf)
    },
    get: async (id) => {
      const sessionId = requireSessionId(id)
      const record = await readSession(sessionId)
      const outline = await loadSessionOutline(reader.stores, record, () => transcriptItemOf)
      if (E.isLeft(outline)) throw new Error(`The session ${sessionId} cannot be read (${outline.left}).`)
      // Every row streams through; only the newest TRANSCRIPT_ROWS are kept (a ring), so a long
      // session costs one read batch, not its ledgers.
      const kept: Array<TranscriptItem> = []
      let seen = 0
      for (const run of outline.right.runs) {
        const streamed = await outline.right.timeline(run.runId, (entries) => {
          for (const { index: _index, operationStatus, ...item } of entries) {
            kept[seen % TRANSCRIPT_ROWS] = {
              ...item,
              ...(operationStatus === undefined ? {} : { status: operationStatus }),
            }
            seen += 1
          }
        })
        if (E.isLeft(streamed)) throw new Error(`The session ${sessionId} cannot be read (${streamed.left}).`)
      }
      const start = seen % TRANSCRIPT_ROWS
      return {
        session: listItemOf(await summarizeStoredSession(reader.stores, sessionId, ownerLiveness)),
        items: seen <= TRANSCRIPT_ROWS ? kept : [...kept.slice(start), ...kept.slice(0, start)],
        omitted: Math.max(0, seen - TRANSCRIPT_ROWS),
      }
    },
    send: async (id, prompt) => {
      const sessionId = requireSessionId(id)
      if (typeof prompt !== 'string' || prompt.trim() === '' || prompt.length > MAX_PROMPT_CHARS) {
        throw new HostInputError('bad_input', `A prompt is text of 1 to ${MAX_PROMPT_CHARS} characters.`)
      }
      const record = await readSession(sessionId)
      const setup = options.turnSetupFor === undefined ? undefined : await options.turnSetupFor(sessionId)
      if (setup !== undefined && E.isLeft(setup)) return { disposition: 'failed', message: setup.left }
      const result = await start(
        sessionId,
        'turn',
        () => true,
        (runtime) => runtime.runTurn({ sessionId, cwd: record.cwd, prompt }),
        outcomeOfTurn,
        (turn): StartFailed => ({
          disposition: 'failed',
          message: outcomeOfTurn(turn).message ?? 'The turn did not start.',
        }),
        setup?.right,
      )
      return result.disposition === 'park' ? { disposition: 'failed', message: result.messages.join(' ') } : result
    },
    resumePlan: (id) => {
      if (!options.safeResume) return Promise.resolve(parked(['resume_feature_disabled']))
      return resumePlan(requireSessionId(id))
    },
    resumeLatest: (id) => {
      if (!options.safeResume) return Promise.resolve(parked(['resume_feature_disabled']))
      return resumeLatest(requireSessionId(id), windowWaits)
    },
    resolveCall: (id, operationId, verdict, output, actor) => {
      if (!options.safeResume) {
        return Promise.resolve({
          disposition: 'refused',
          codes: ['resume_feature_disabled'],
          messages: [describeCode('resume_feature_disabled')],
        })
      }
      return resolveCall(id, operationId, verdict, output, actor)
    },
    stopWaiting: () => {
      const stopped = [...windowWaits].filter((wait) => !wait.signal.aborted)
      for (const wait of stopped) wait.abort()
      return stopped.length
    },
    answerPermission: (requestId, decision) => {
      const answer = questions.get(requestId)
      if (answer === undefined || (decision !== 'allow' && decision !== 'deny')) return false
      questions.delete(requestId)
      answer(decision)
      return true
    },
    startup: async () => {
      const { actions } = await reader.runtime.recover()
      const continued: Array<{ sessionId: string; runId: string }> = []
      startupContinued = continued
      const notContinued: Array<{ sessionId: string; result: Parked | StartFailed }> = []
      const waiting: Array<string> = []
      if (options.safeResume) {
        const summaries = await listSessionSummaries(reader.stores, ownerLiveness)
        // A session a live process owns is never `interrupted` (its run may simply be running), so it is
        // a candidate too, judged again once that owner lets go.
        const listed = E.isRight(summaries) ? summaries.right.filter((s) => s.interrupted || s.ownerAlive) : []
        // A session whose latest run records a person's verdict (`resolve`) is resumed by a person only.
        const candidates: typeof listed = []
        for (const s of listed) if (!(await awaitsExplicitResume(reader.stores, s.sessionId))) candidates.push(s)
        // Two instances starting together each hold sessions briefly (their own recovery, a plan that
        // the other's recovery made stale, an execution that lost the claim). A session left for such
        // a reason is judged again from fresh state once its owner lets go, until the wait ends:
        // neither instance may leave a session both saw held (liveness; the claim keeps a boundary
        // from being continued twice whoever tries).
        const again: Array<string> = []
        const told = (sessionId: string, result: ResumeOutcome) => {
          if (result.disposition === 'started') {
            continued.push({ sessionId, runId: result.runId })
            emit({ type: 'autoContinued', sessionId, runId: result.runId })
          } else notContinued.push({ sessionId, result })
        }
        const attempt = async (sessionId: string, last: boolean) => {
          // A session whose command still runs waits in the background, each on its own: start-up
          // goes on, and the window is never held by it.
          const result = await resumeLatest(sessionId, startupWaits, (outcome) => {
            if (waiting.includes(sessionId)) told(sessionId, outcome)
          })
          if (result.disposition === 'waiting') waiting.push(sessionId)
          else if (result.disposition !== 'started' && !last && leftForARace(result)) again.push(sessionId)
          else told(sessionId, result)
        }
        for (const summary of candidates) {
          if (summary.ownerAlive) again.push(summary.sessionId)
          else await attempt(summary.sessionId, false)
        }
        const deadline = Date.now() + OWNER_WAIT_MS
        while (again.length > 0) {
          const sessionId = again.shift() as string
          await pause()
          let summary = await summarizeStoredSession(reader.stores, sessionId, ownerLiveness)
          while (summary.ownerAlive && Date.now() < deadline) {
            await pause()
            summary = await summarizeStoredSession(reader.stores, sessionId, ownerLiveness)
          }
          // Still owned when the wait ends: that process is running the session, and it is left to it.
          // Not interrupted: the other instance continued it, or it ended.
          if (!summary.ownerAlive && summary.interrupted && !(await awaitsExplicitResume(reader.stores, sessionId))) {
            await attempt(sessionId, Date.now() >= deadline)
          }
        }
      }
      return { recoveryActions: actions.length, continued, notContinued, waiting }
    },
    autoContinued: () => [...startupContinued],
    idle: async () => {
      while (running.size > 0) await Promise.allSettled([...running])
    },
    cancelAll: async () => {
      for (const wait of [...windowWaits, ...startupWaits]) wait.abort()
      for (const composed of active) composed.runtime.cancel()
      while (running.size > 0) await Promise.allSettled([...running])
    },
  }
}
