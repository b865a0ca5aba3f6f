/**
 * Given/when/then support for the executor's integration tests: a world is a real temp data dir and
 * workspace, real file stores, a real host inspector, a real scripted provider wrapped so that every
 * request it receives is recorded, and counting tools that record every call. Failures are injected
 * by wrapping a store method at the port, never by faking the store.
 */
import { createHash } from 'node:crypto'
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import type * as TE from 'fp-ts/lib/TaskEither.js'
import { afterEach, expect } from 'vitest'
import { type AgentRun, type RuntimeEvent, isContinuationStartEvent, isTerminalEvent } from '@maka/events'
import { makeHostInspector, type CheckpointProvider, type HostInspector } from '@maka/host-inspector'
import { makeScriptedProvider, type ModelProvider, type ProviderRequest, type ScriptStep } from '@maka/providers'
import { type StoreError } from '@maka/stores'
import { ledgerPath, makeFileStores, runDir, runHeaderPath, type FileStores } from '@maka/store-jsonl'
import { builtinTools, type Tool } from '@maka/tools'
import {
  makeRuntime,
  sessionStatePort,
  type LifecycleEvent,
  type LifecycleSink,
  type Runtime,
  type RuntimeDeps,
} from '../../src/index.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/** One provider request as the provider received it. */
export interface RecordedRequest {
  readonly kind: 'turn' | 'continuation'
  readonly runId: string
  readonly request: ProviderRequest
}

/** One call of a counting tool. */
export interface RecordedToolRun {
  readonly name: string
  readonly args: unknown
  readonly runId: string
  readonly toolCallId: string
  /** What a protocol run's call carries (Phase 2). */
  readonly operationId?: string
  readonly attempt?: number
  readonly idempotencyKey?: string
}

/** How a world is set up. */
export interface WorldOptions {
  /** `MAKA_RUNTIME_SAFE_BOUNDARY_RESUME`; on unless told otherwise. */
  readonly flag?: boolean
  readonly permissionMode?: RuntimeDeps['permissionMode']
  readonly askPermission?: RuntimeDeps['askPermission']
  /** A sink besides the world's collecting one; `null` runs with no sink at all. */
  readonly sink?: LifecycleSink | null
  readonly checkpointProvider?: CheckpointProvider
  /** Registers the four built-in tools besides the counting ones. */
  readonly builtins?: boolean
  /**
   * Runs write the tool journal (Phase 2). Off unless a test asks for it: the tests that pin Phase
   * 1's writes run as `MAKA_RUNTIME_TOOL_JOURNAL=0` does.
   */
  readonly journal?: boolean
}

/** Everything a test needs to drive and inspect one data directory. */
export interface World {
  readonly root: string
  readonly dataDir: string
  readonly workspace: string
  readonly stores: FileStores
  readonly inspector: HostInspector
  /** The registry the runtime and the inspector both read; mutate it to change the catalog. */
  readonly tools: Array<Tool>
  readonly toolRuns: Array<RecordedToolRun>
  readonly requests: Array<RecordedRequest>
  /** Every provider the runtime asked for, in order. */
  readonly providersMade: Array<{ readonly kind: 'turn' | 'continuation'; readonly runId: string }>
  readonly lifecycle: Array<LifecycleEvent>
  /** A runtime over the world's stores with its default parts. */
  readonly runtime: Runtime
  /** Queues scripts: the next providers the runtime asks for follow them, in order. */
  script(...scripts: ReadonlyArray<ReadonlyArray<ScriptStep>>): void
  /** Another runtime over the same data dir, with parts replaced. */
  runtimeWith(overrides?: RuntimeOverrides): Runtime
  requestsOf(runId: string): ReadonlyArray<ProviderRequest>
  runsOf(name: string): number
  header(sessionId: string, runId: string): Promise<AgentRun>
  ledger(sessionId: string, runId: string): Promise<ReadonlyArray<RuntimeEvent>>
  runDirOf(sessionId: string, runId: string): string
  ledgerPathOf(sessionId: string, runId: string): string
  headerPathOf(sessionId: string, runId: string): string
  cleanup(): Promise<void>
}

/** Parts a runtime may be built with instead of the world's. */
export type RuntimeOverrides = Partial<Omit<RuntimeDeps, 'stores'>> & {
  /** Wraps the world's stores (or `stores`) at the port. */
  readonly wrapStores?: (stores: FileStores) => FileStores
  /** Stores to use instead of the world's instance (e.g. a second instance over the same dir). */
  readonly stores?: FileStores
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/** A counting tool: records each call and answers `{ count: n }` for its n-th call. */
export const makeCountingTool = (name: string, mutates: boolean, toolRuns: Array<RecordedToolRun>): Tool => ({
  name,
  description: `Counts its calls (${name}).`,
  parameters: { type: 'object', properties: { label: { type: 'string' } }, additionalProperties: false },
  mutates,
  run: (args, context) => {
    toolRuns.push({
      name,
      args,
      runId: context.runId,
      toolCallId: context.toolCallId,
      ...(context.operationId === undefined ? {} : { operationId: context.operationId }),
      ...(context.attempt === undefined ? {} : { attempt: context.attempt }),
      ...(context.idempotencyKey === undefined ? {} : { idempotencyKey: context.idempotencyKey }),
    })
    return Promise.resolve({ result: { count: toolRuns.filter((r) => r.name === name).length }, isError: false })
  },
})

/** A fixed, stepping clock: every reading is one second after the previous one. */
const steppingClock = (): (() => Date) => {
  let t = Date.parse('2026-01-01T00:00:00.000Z')
  return () => {
    t += 1000
    return new Date(t)
  }
}

/** Deterministic ids: `run-1`, `turn-2`, … counted per world (shared by all its runtimes). */
const countingIds = (): ((kind: 'session' | 'run' | 'invocation' | 'turn') => string) => {
  let n = 0
  return (kind) => {
    n += 1
    return `${kind === 'invocation' ? 'inv' : kind}-${n}`
  }
}

/**
 * Creates a world in a fresh temp dir: `<root>/data` and `<root>/workspace`.
 */
export const givenWorld = async (options: WorldOptions = {}): Promise<World> => {
  const root = await mkdtemp(join(tmpdir(), 'maka-executor-'))
  const dataDir = join(root, 'data')
  const workspace = join(root, 'workspace')
  await mkdir(workspace)
  const stores = makeFileStores(dataDir)
  const toolRuns: Array<RecordedToolRun> = []
  const tools: Array<Tool> = [
    makeCountingTool('count', false, toolRuns),
    makeCountingTool('mutate', true, toolRuns),
    ...(options.builtins === true ? builtinTools() : []),
  ]
  const inspector = makeHostInspector({
    port: sessionStatePort(stores),
    toolNames: () => tools.map((tool) => tool.name),
    ...(options.checkpointProvider === undefined ? {} : { checkpointProvider: options.checkpointProvider }),
  })
  const requests: Array<RecordedRequest> = []
  const providersMade: Array<{ kind: 'turn' | 'continuation'; runId: string }> = []
  const lifecycle: Array<LifecycleEvent> = []
  const scripts: Array<ReadonlyArray<ScriptStep>> = []
  const clock = steppingClock()
  const newId = countingIds()

  const providerFor = (run: { readonly kind: 'turn' | 'continuation'; readonly runId: string }): ModelProvider => {
    providersMade.push({ kind: run.kind, runId: run.runId })
    const inner = makeScriptedProvider({ steps: scripts.shift() ?? [], toolCallIdPrefix: run.runId })
    return {
      providerId: inner.providerId,
      modelId: inner.modelId,
      stream: (request) => {
        requests.push({ kind: run.kind, runId: run.runId, request })
        return inner.stream(request)
      },
    }
  }

  const collectingSink: LifecycleSink = {
    emit: (event) => {
      lifecycle.push(event)
      return options.sink?.emit(event)
    },
  }

  const runtimeWith = (overrides: RuntimeOverrides = {}): Runtime => {
    const { wrapStores, stores: otherStores, ...rest } = overrides
    const base = otherStores ?? stores
    const wrapped = wrapStores === undefined ? base : wrapStores(base)
    return makeRuntime({
      // The file store's appends are durable (one write, then fsync of the file and its folders).
      stores:
        options.journal === true ? Object.assign({}, wrapped, { capabilities: { durableAppend: true } }) : wrapped,
      toolJournal: options.journal === true,
      inspector,
      tools,
      providerFor,
      safeBoundaryResumeEnabled: options.flag ?? true,
      permissionMode: options.permissionMode ?? 'allow',
      ...(options.askPermission === undefined ? {} : { askPermission: options.askPermission }),
      ...(options.sink === null ? {} : { sink: collectingSink }),
      clock,
      newId,
      ...rest,
    })
  }

  const unwrap = async <A>(task: TE.TaskEither<StoreError, A>): Promise<A> => {
    const result = await task()
    if (E.isLeft(result)) throw new Error(`store: ${result.left._tag}: ${result.left.message}`)
    return result.right
  }

  return {
    root,
    dataDir: stores.dataDir,
    workspace,
    stores,
    inspector,
    tools,
    toolRuns,
    requests,
    providersMade,
    lifecycle,
    runtime: runtimeWith(),
    script: (...more) => {
      scripts.push(...more)
    },
    runtimeWith,
    requestsOf: (runId) => requests.filter((r) => r.runId === runId).map((r) => r.request),
    runsOf: (name) => toolRuns.filter((r) => r.name === name).length,
    header: (sessionId, runId) => unwrap(stores.runs.read(sessionId, runId)),
    ledger: async (sessionId, runId) => (await unwrap(stores.events.read(sessionId, runId))).events,
    runDirOf: (sessionId, runId) => runDir(stores.dataDir, sessionId, runId),
    ledgerPathOf: (sessionId, runId) => ledgerPath(stores.dataDir, sessionId, runId),
    headerPathOf: (sessionId, runId) => runHeaderPath(stores.dataDir, sessionId, runId),
    cleanup: () => rm(root, { recursive: true, force: true }),
  }
}

// -------------------------------------------------------------------------------------
// givens
// -------------------------------------------------------------------------------------

/** Thrown from `onCrashPoint` to stop a run where a real crash would. */
export class SimulatedCrash extends Error {
  override readonly name = 'SimulatedCrash'
}

/** An interrupted (then recovered) source run. */
export interface InterruptedRun {
  readonly sessionId: string
  readonly runId: string
  readonly prompt: string
}

/**
 * Runs a turn that calls the scripted tools and then "crashes" right after the last tool response
 * is committed (`onCrashPoint` throws at the matching `after_tool_response`), then runs startup
 * recovery, which closes the run as `failed` / `app_restarted`. The result is a boundary the planner
 * may continue: user → (call → response)* → recovered terminal.
 */
export const givenInterruptedRun = async (
  world: World,
  options: {
    readonly prompt?: string
    readonly toolCalls?: ReadonlyArray<{ readonly name: string; readonly args?: Record<string, unknown> }>
    readonly sessionId?: string
  } = {},
): Promise<InterruptedRun> => {
  const prompt = options.prompt ?? 'Please count once.'
  const toolCalls = options.toolCalls ?? [{ name: 'count', args: { label: 'first' } }]
  world.script(toolCalls.map((call) => ({ toolCall: { name: call.name, args: call.args ?? {} } })))
  let responses = 0
  const crashing = world.runtimeWith({
    onCrashPoint: (point) => {
      if (point !== 'after_tool_response') return
      responses += 1
      if (responses === toolCalls.length) throw new SimulatedCrash(point)
    },
  })
  const turn = await crashing.runTurn({
    cwd: world.workspace,
    prompt,
    ...(options.sessionId === undefined ? {} : { sessionId: options.sessionId }),
  })
  if (turn._tag !== 'Interrupted') throw new Error(`expected an interrupted turn, got ${JSON.stringify(turn)}`)
  const header = await world.header(turn.sessionId, turn.runId)
  expect(header.status).toBe('running')
  await world.runtime.recover({ sessionIds: [turn.sessionId] })
  const recovered = await world.header(turn.sessionId, turn.runId)
  expect(recovered).toMatchObject({ status: 'failed', failureClass: 'app_restarted' })
  return { sessionId: turn.sessionId, runId: turn.runId, prompt }
}

/** A plan for the source run that must say `continue`. */
export const givenApprovedPlan = async (world: World, source: InterruptedRun, runtime: Runtime = world.runtime) => {
  const plan = await runtime.plan({ sessionId: source.sessionId, runId: source.runId })
  expect(plan.rejectionReasons).toEqual([])
  expect(plan.disposition).toBe('continue')
  const continuation = plan.continuation
  if (continuation === undefined) throw new Error('a continue plan without a continuation')
  return { plan, continuation }
}

// -------------------------------------------------------------------------------------
// observations
// -------------------------------------------------------------------------------------

/** Every file under `dir` (relative path → sha256 of its bytes) and every folder (→ 'dir'). */
export const snapshotTree = async (dir: string): Promise<Record<string, string>> => {
  const out: Record<string, string> = {}
  const walk = async (at: string): Promise<void> => {
    const entries = await readdir(at, { withFileTypes: true })
    for (const entry of entries) {
      const path = join(at, entry.name)
      const key = relative(dir, path)
      if (entry.isDirectory()) {
        out[key] = 'dir'
        await walk(path)
      } else {
        out[key] = createHash('sha256')
          .update(await readFile(path))
          .digest('hex')
      }
    }
  }
  await walk(dir)
  return out
}

/** The raw lines of a ledger file (each without its newline). */
export const ledgerLines = async (path: string): Promise<Array<string>> => {
  const text = await readFile(path, 'utf8')
  return text.split('\n').filter((line) => line.length > 0)
}

/** An `IoFailed` store error for injected failures. */
export const ioFailure = (operation: string): StoreError => ({
  _tag: 'IoFailed',
  operation,
  path: '(injected)',
  code: 'EIO',
  subject: operation,
  detail: 'input/output error',
  message: `could not ${operation}: input/output error (EIO at ${operation})`,
})

/** A short name for a row: `terminal completed`, `permission allow`, `continuation start`, `model text`, … */
export const describeRow = (e: RuntimeEvent): string => {
  if (isTerminalEvent(e)) return `terminal ${e.status}`
  if (isContinuationStartEvent(e)) return 'continuation start'
  if (e.actions?.permissionRequest !== undefined) return 'permission request'
  if (e.actions?.permissionDecision !== undefined) return `permission ${e.actions.permissionDecision.decision}`
  return `${e.role} ${e.content?.kind ?? 'no content'}`
}

/**
 * Wraps stores so every committed header create/update, claim and ledger append is recorded, in
 * order, with `(durable)` when it was asked to be durable.
 */
export const tracingWrites =
  (trace: Array<string>) =>
  (s: FileStores): FileStores => {
    const after =
      <A>(task: TE.TaskEither<StoreError, A>, line: string): TE.TaskEither<StoreError, A> =>
      async () => {
        const result = await task()
        if (E.isRight(result)) trace.push(line)
        return result
      }
    const durable = (o: { readonly durable?: boolean | undefined } | undefined) =>
      o?.durable === true ? ' (durable)' : ''
    return {
      ...s,
      runs: {
        ...s.runs,
        create: (run) => after(s.runs.create(run), `header ${run.status}`),
        update: (run, o) => after(s.runs.update(run, o), `header ${run.status}${durable(o)}`),
      },
      events: {
        ...s.events,
        append: (sessionId, runId, event, o) =>
          after(s.events.append(sessionId, runId, event, o), `row ${describeRow(event)}${durable(o)}`),
      },
      claims: {
        ...s.claims,
        claimBoundary: (claim, header) =>
          after(s.claims.claimBoundary(claim, header), `claim + header ${header.status}`),
      },
    }
  }

/**
 * A world factory for one test file: every world it makes is cleaned up after each test.
 * Call it once at module level.
 */
export const trackWorlds = (): ((options?: WorldOptions) => Promise<World>) => {
  const worlds: Array<World> = []
  afterEach(async () => {
    await Promise.all(worlds.splice(0).map((w) => w.cleanup()))
  })
  return async (options = {}) => {
    const w = await givenWorld(options)
    worlds.push(w)
    return w
  }
}

/**
 * A completed normal run header that takes `runId` in the source's session: another run already
 * holding a continuation's target id.
 */
export const squatterHeader = async (world: World, source: InterruptedRun, runId: string): Promise<AgentRun> => {
  const { failureClass: _f, ...plain } = await world.header(source.sessionId, source.runId)
  return { ...plain, runId, invocationId: 'inv-squat', turnId: 'turn-squat', status: 'completed' } as AgentRun
}
