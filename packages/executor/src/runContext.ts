/**
 * What a turn and a continuation share: the runtime's settings with their defaults, the guard,
 * ownership, the performer, and the model/tool loop with this runtime's tools and observers.
 */
import { randomUUID } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import type * as TE from 'fp-ts/lib/TaskEither.js'
import {
  type AgentRun,
  type IsoTimestamp,
  type NonEmptyString,
  type RunId,
  type RuntimeEvent,
  type TerminalRunStatus,
  makeIsoTimestampUnsafe,
  makeNonEmptyStringUnsafe,
  makeRunIdUnsafe,
} from '@maka/events'
import type { ModelProvider } from '@maka/providers'
import type { StorePorts, StoreError } from '@maka/stores'
import { type LoopInput, type LoopOutcome, runAgentLoop } from './agentLoop.js'
import { decideTerminal } from './decideTerminal.js'
import { type Ownership, makeOwnership } from './ownership.js'
import { type PerformWrites, type WriteFailure, makePerformWrites, terminalWrites } from './performWrites.js'
import type { CrashPoint, RuntimeDeps } from './RuntimeDeps.js'
import { type RunGuard, makeRunGuard } from './runGuard.js'
import { type RunStop, type RunWriteFailure, makeRunWriter, type RunWriter } from './runWriter.js'

/**
 * The runtime's shared parts.
 * @category models
 */
export interface RunContext {
  readonly deps: RuntimeDeps
  readonly stores: StorePorts
  readonly clock: () => Date
  readonly nowIso: () => IsoTimestamp
  readonly newId: (kind: 'session' | 'run' | 'invocation' | 'turn') => string
  /** The id port's answers, branded once here so the plan, the deciders and the rows carry brands. */
  readonly newRunId: () => RunId
  readonly newTurnId: () => NonEmptyString
  readonly newInvocationId: () => NonEmptyString
  /**
   * Runs started here write the tool journal (Phase 2): the resume flag is on, the journal is not
   * switched off, and the store's appends are durable.
   */
  readonly protocol: boolean
  readonly guard: RunGuard
  readonly ownership: Ownership
  readonly perform: PerformWrites
  readonly newRunWriter: (header: AgentRun) => RunWriter
  /** What the loop (and a continuation's settlements) run with, for one run. */
  readonly loopInput: (input: {
    readonly writer: RunWriter
    readonly provider: ModelProvider
    readonly history: ReadonlyArray<RuntimeEvent>
    readonly cwd: string
    readonly signal: AbortSignal
  }) => LoopInput
  /** The model/tool loop for one run: how it ended, or the write that stopped it. */
  readonly runLoop: (input: {
    readonly writer: RunWriter
    readonly provider: ModelProvider
    readonly history: ReadonlyArray<RuntimeEvent>
    readonly cwd: string
    readonly signal: AbortSignal
  }) => TE.TaskEither<RunWriteFailure, LoopOutcome>
  /** Decides and performs the run's terminal writes. */
  readonly finishRun: (writer: RunWriter, outcome: LoopOutcome) => Promise<E.Either<WriteFailure, TerminalRunStatus>>
}

const DEFAULT_SYSTEM_PROMPT =
  'You are a careful coding agent. Use the tools to inspect and change files in the workspace, then answer briefly.'

const defaultNewId = (kind: 'session' | 'run' | 'invocation' | 'turn'): string =>
  `${kind === 'invocation' ? 'inv' : kind}-${randomUUID().replace(/-/g, '').slice(0, 20)}`

/**
 * The error class a stopped run reports: the store failure's tag, a probe that changed its verdict, or a
 * runtime error.
 * @category constructors
 */
export const errorClassOf = (stop: RunStop): string =>
  stop._tag === 'RunWriteFailed'
    ? `store_${stop.error._tag}`
    : stop._tag === 'ReconcileVerdictChanged'
      ? 'reconcile_verdict_changed'
      : 'runtime_error'

/**
 * The typed store failure behind a stopped run, when there is one.
 * @category constructors
 */
export const storeErrorOf = (stop: RunStop): { readonly error?: StoreError } =>
  stop._tag === 'RunWriteFailed' ? { error: stop.error } : {}

/**
 * Builds the shared parts from the runtime's dependencies.
 * @category constructors
 */
export const makeRunContext = (deps: RuntimeDeps): RunContext => {
  const stores = deps.stores
  const clock = deps.clock ?? (() => new Date())
  const nowIso = () => makeIsoTimestampUnsafe(clock().toISOString())
  const newId = deps.newId ?? defaultNewId
  const crashPoint = (runId: string) => async (point: CrashPoint) => {
    if (deps.onCrashPoint !== undefined) await deps.onCrashPoint(point, { runId })
  }
  const newRunWriter = (header: AgentRun): RunWriter =>
    makeRunWriter({ stores, header, rowsBefore: 0, clock, ...(deps.observer ? { observer: deps.observer } : {}) })
  const perform = makePerformWrites({ stores, newRunWriter, crashPoint })
  const loopInput = ({
    writer,
    provider,
    history,
    cwd,
    signal,
  }: {
    readonly writer: RunWriter
    readonly provider: ModelProvider
    readonly history: ReadonlyArray<RuntimeEvent>
    readonly cwd: string
    readonly signal: AbortSignal
  }): LoopInput => ({
    signal,
    writer,
    provider,
    history,
    tools: deps.tools,
    systemPrompt: deps.systemPrompt ?? DEFAULT_SYSTEM_PROMPT,
    permissionMode: deps.permissionMode ?? 'allow',
    ...(deps.askPermission ? { askPermission: deps.askPermission } : {}),
    ...(deps.observer ? { observer: deps.observer } : {}),
    stores,
    cwd,
    maxModelSteps: deps.maxModelSteps ?? 24,
    crashPoint: crashPoint(writer.header().runId),
    protocol,
    ...(deps.dataDir === undefined ? {} : { dataDir: deps.dataDir }),
  })
  const protocol = deps.safeBoundaryResumeEnabled && deps.toolJournal === true && stores.capabilities.durableAppend

  return {
    deps,
    stores,
    clock,
    nowIso,
    newId,
    newRunId: () => makeRunIdUnsafe(newId('run')),
    newTurnId: () => makeNonEmptyStringUnsafe(newId('turn')),
    newInvocationId: () => makeNonEmptyStringUnsafe(newId('invocation')),
    protocol,
    guard: makeRunGuard(),
    ownership: makeOwnership(stores, deps.inspector),
    perform,
    newRunWriter,
    loopInput,
    runLoop: (input) => runAgentLoop(loopInput(input)),
    finishRun: async (writer, outcome) => {
      // The stamp is taken before the completion time, as the rows and header record them.
      const stamp = writer.stamp()
      const terminal = decideTerminal(writer.header(), outcome, stamp, nowIso())
      const performed = await perform(terminalWrites(terminal), writer)
      return E.map(() => terminal.status)(performed)
    },
  }
}
