/**
 * The model/tool loop shared by normal turns and continuations. A tool's implementation starts
 * only after its `function_call` row is committed, and its `function_response` row is appended when
 * it ends — so after a crash the ledger says exactly which calls may have had effects. A model step
 * that failed in a way a later try may not (a rate limit, a server error, a stall, a dropped
 * stream) is tried again under the provider's retry policy, from the last committed row: the same
 * history is sent again, so no user message is repeated and no tool runs again.
 */
import {
  NonEmptyString,
  type RuntimeEvent,
  makeNonEmptyStringUnsafe,
  makeNonNegativeIntUnsafe,
  operationIdOf,
  toolSourceDelta,
} from '@maka/events'
import { processIdentity } from '@maka/host-inspector'
import {
  type ModelProvider,
  type ProviderFailure,
  type RetryDecision,
  NO_RETRY,
  decideRetry,
  failureClassOfProviderFailure,
  materializeHistory,
  providerFailure,
} from '@maka/providers'
import { type ShellRunRecorder, type Tool, type ToolOutcome, shellRunDirOf } from '@maka/tools'
import { appendToolResponse, runJournaledCall } from './journaledCall.js'
import { authorise } from './toolPermission.js'
import type { CrashPoint, PermissionMode, PermissionQuestion, RunObserver, StepRetry } from './RuntimeDeps.js'
import { notifyObserver, type RunWriteFailure, type RunWriter } from './runWriter.js'
import type { StoreError, StorePorts } from '@maka/stores'
import * as E from 'fp-ts/lib/Either.js'
import * as TE from 'fp-ts/lib/TaskEither.js'

/**
 * How the loop ended.
 * @category models
 */
export type LoopOutcome =
  | { readonly _tag: 'Completed' }
  | {
      readonly _tag: 'Failed'
      readonly failureClass: string
      readonly message: string
      /** Secret-free facts recorded in the terminal event's `stateDelta` (e.g. `httpStatus`, `providerAttempts`). */
      readonly detail?: Readonly<Record<string, number>>
      /** The model step failed in a way a later try may not, and its retries ran out: resuming later may pass. */
      readonly retryLater?: true
    }
  /** The host cancelled the run (Ctrl+C): every committed tool call has its response. */
  | { readonly _tag: 'Cancelled' }

/**
 * Everything one loop needs.
 * @category models
 */
export interface LoopInput {
  readonly writer: RunWriter
  readonly provider: ModelProvider
  /** Provider history before this run's own rows (empty for a normal turn; the runtimeContext of a continuation). */
  readonly history: ReadonlyArray<RuntimeEvent>
  readonly tools: ReadonlyArray<Tool>
  readonly systemPrompt: string
  readonly permissionMode: PermissionMode
  readonly askPermission?: (question: PermissionQuestion) => Promise<'allow' | 'deny'>
  readonly observer?: RunObserver
  readonly stores: StorePorts
  readonly cwd: string
  readonly maxModelSteps: number
  readonly crashPoint: (point: CrashPoint) => Promise<void>
  /** Aborted when the host cancels the run: the model stream stops, a running shell is killed. */
  readonly signal?: AbortSignal
  /**
   * The run writes the tool journal (Phase 2): calls carry their operation id, and each call goes
   * through preflight, a durable dispatch row and a durable outcome ({@link runJournaledCall}).
   */
  readonly protocol?: boolean
  /** Where a supervised foreground shell keeps its files (see `RuntimeDeps.dataDir`). */
  readonly dataDir?: string
}

interface ToolCall {
  readonly id: NonEmptyString
  readonly name: NonEmptyString
  readonly args: unknown
}

interface StepResult {
  readonly text: string
  readonly toolCalls: ReadonlyArray<ToolCall>
  readonly usage: { readonly input: number; readonly output: number } | null
}

const runStep = async (input: LoopInput): Promise<E.Either<ProviderFailure, StepResult>> => {
  const messages = materializeHistory([...input.history, ...input.writer.committed()])
  let text = ''
  const toolCalls: Array<ToolCall> = []
  let usage: { input: number; output: number } | null = null
  const specs = input.tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters }))
  const request = {
    systemPrompt: input.systemPrompt,
    messages,
    tools: specs,
    ...(input.signal === undefined ? {} : { signal: input.signal }),
  }
  for await (const chunk of input.provider.stream(request)) {
    switch (chunk.type) {
      case 'text_delta':
        text += chunk.text
        notifyObserver(() => input.observer?.onTextDelta?.(input.writer.header().runId, chunk.text))
        break
      case 'tool_call': {
        const { id, name, args } = chunk
        // Parsed here, where the provider port's answer enters the run: a call without an id or a
        // name could never be answered by a row, so it never runs (the OpenAI-compatible provider
        // already refuses such a call the same way).
        if (!NonEmptyString.is(id) || !NonEmptyString.is(name)) {
          return E.left(providerFailure('bad_response', 'The model sent a tool call without an id or a name.'))
        }
        toolCalls.push({ id, name, args })
        break
      }
      case 'usage':
        usage = { input: chunk.input, output: chunk.output }
        break
      case 'failed':
        return E.left(chunk.failure)
    }
  }
  return E.right({ text, toolCalls, usage })
}

// Resolves true after `ms`, or false as soon as the run is cancelled.
const pause = (ms: number, signal: AbortSignal | undefined): Promise<boolean> =>
  new Promise((resolve) => {
    if (signal?.aborted === true) return resolve(false)
    const onAbort = (): void => {
      clearTimeout(timer)
      resolve(false)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve(true)
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })

interface SteppedWithRetries {
  readonly stepped: E.Either<ProviderFailure, StepResult> | 'threw'
  readonly attempts: number
  readonly gaveUp?: Extract<RetryDecision, { _tag: 'GiveUp' }>['reason']
}

// Tries a model step until it succeeds, fails for good, or the policy gives up. A step is tried
// again only when nothing of it was committed: every try then sends the same history, materialized
// from the same committed rows (today a step commits nothing until it has succeeded; the check keeps
// it so if a step ever commits as it streams).
const runStepWithRetries = async (input: LoopInput): Promise<SteppedWithRetries> => {
  const policy = input.provider.retry ?? NO_RETRY
  let attempts = 0
  let waitedMs = 0
  for (;;) {
    const committedBefore = input.writer.nextRow()
    attempts += 1
    const stepped = await runStep(input).catch(() => 'threw' as const)
    if (stepped === 'threw' || E.isRight(stepped) || input.signal?.aborted === true) return { stepped, attempts }
    if (input.writer.nextRow() !== committedBefore) return { stepped, attempts }
    const decision = decideRetry(policy, stepped.left, { attempts, waitedMs }, Math.random())
    if (decision._tag === 'GiveUp') return { stepped, attempts, gaveUp: decision.reason }
    const failure = stepped.left
    const retry: StepRetry = {
      runId: input.writer.header().runId,
      attempt: attempts + 1,
      maxAttempts: policy.maxAttempts,
      delayMs: decision.delayMs,
      code: failure.code,
      ...(failure.status === undefined ? {} : { status: failure.status }),
      message: failure.message,
    }
    notifyObserver(() => input.observer?.onRetry?.(retry))
    // A cancel during the wait is seen by the caller as a cancelled run.
    if (!(await pause(decision.delayMs, input.signal))) return { stepped, attempts }
    waitedMs += decision.delayMs
  }
}

// The failure's sentence, and how many tries it took when there was more than one.
const failedStep = (failure: ProviderFailure, attempts: number, gaveUp: SteppedWithRetries['gaveUp']): LoopOutcome => {
  // A remote provider's sentence is written to be secret-free (no prompt, body or key); a
  // scripted error's text is the script's own and stays out of the ledger.
  const sentence = failure.code === 'scripted_error' ? 'The model call failed (scripted_error).' : failure.message
  const retried = gaveUp !== undefined && gaveUp !== 'not_transient'
  const waitAsked = Math.ceil((failure.retryAfterMs ?? 0) / 1_000)
  const tries =
    gaveUp === 'retry_after_too_long'
      ? ` It asked to wait ${waitAsked} s, longer than the retries may wait${attempts > 1 ? ` after ${attempts} tries` : ''}.`
      : retried && attempts > 1
        ? ` Gave up after ${attempts} tries.`
        : ''
  const detail = {
    ...(failure.status === undefined ? {} : { httpStatus: failure.status }),
    ...(attempts > 1 ? { providerAttempts: attempts } : {}),
  }
  return {
    _tag: 'Failed',
    failureClass: failureClassOfProviderFailure(failure),
    message: `${sentence}${tries}`,
    ...(Object.keys(detail).length === 0 ? {} : { detail }),
    ...(retried ? { retryLater: true as const } : {}),
  }
}

// A provider's count, rounded and never negative. An infinite one is refused by the store's row
// check on append, as it always was.
const tokenCount = (n: number) => makeNonNegativeIntUnsafe(Math.max(0, Math.round(n)))

const shellRecorder = (stores: StorePorts): ShellRunRecorder => ({
  record: (run) =>
    TE.mapLeft((error: StoreError) => ({ message: `recording a shell run failed: ${error._tag}` }))(
      stores.shellRuns.write(run),
    ),
})

/**
 * Runs a tool's implementation; a throw becomes an error result the model sees. `journal` names the
 * operation and attempt of a protocol run's call (and its idempotency key).
 * @category constructors
 */
export const runTool = async (
  input: LoopInput,
  tool: Tool,
  call: { readonly id: NonEmptyString; readonly args: unknown },
  journal?: { readonly operationId: string; readonly attempt: number },
): Promise<ToolOutcome> => {
  const header = input.writer.header()
  const dataDir = input.dataDir
  try {
    return await tool.run(call.args, {
      ...(journal === undefined
        ? {}
        : {
            operationId: journal.operationId,
            attempt: journal.attempt,
            idempotencyKey: `maka:${journal.operationId}`,
          }),
      ...(dataDir === undefined
        ? {}
        : { shellRunDir: (shellRunId: string) => shellRunDirOf(dataDir, header.sessionId, shellRunId) }),
      sessionId: header.sessionId,
      runId: header.runId,
      cwd: input.cwd,
      toolCallId: call.id,
      shellRuns: shellRecorder(input.stores),
      ...(input.signal === undefined ? {} : { signal: input.signal }),
      processIdentity: { identify: processIdentity },
    })
  } catch {
    return { result: { error: `The tool ${tool.name} failed unexpectedly.` }, isError: true }
  }
}

/**
 * Runs model steps and tool calls until the model answers without calling a tool; a row the store
 * refused stops the loop with that failure.
 * @category constructors
 */
export const runAgentLoop =
  (input: LoopInput): TE.TaskEither<RunWriteFailure, LoopOutcome> =>
  () =>
    loop(input)

const loop = async (input: LoopInput): Promise<E.Either<RunWriteFailure, LoopOutcome>> => {
  const { writer } = input
  const cancelled = () => input.signal?.aborted === true
  for (let step = 0; step < input.maxModelSteps; step += 1) {
    if (cancelled()) return E.right({ _tag: 'Cancelled' })
    // A provider reports its failures as a `failed` chunk; a throw out of its stream is a bug in it
    // (or in a host's own provider), which still ends the run as a failed model call.
    const { stepped, attempts, gaveUp } = await runStepWithRetries(input)
    // Whatever the provider reported once we aborted it, the cause is the cancel.
    if ((stepped === 'threw' || E.isLeft(stepped)) && cancelled()) return E.right({ _tag: 'Cancelled' })
    if (stepped === 'threw') {
      return E.right({ _tag: 'Failed', failureClass: 'provider_error', message: 'The model call failed.' })
    }
    if (E.isLeft(stepped)) return E.right(failedStep(stepped.left, attempts, gaveUp))
    const result = stepped.right
    const usage = result.usage
    if (result.text.length > 0 || result.toolCalls.length === 0) {
      const answered = await writer.append({
        role: 'model',
        author: 'agent',
        status: 'completed',
        content: { kind: 'text', text: result.text },
        ...(usage === null
          ? {}
          : {
              actions: {
                tokenUsage: {
                  input: tokenCount(usage.input),
                  output: tokenCount(usage.output),
                },
              },
            }),
      })()
      if (E.isLeft(answered)) return answered
    }
    if (result.toolCalls.length === 0) return E.right({ _tag: 'Completed' })
    const operationIds: Array<string> = []
    for (const call of result.toolCalls) {
      // A protocol call's operation id is its own row's place in the run.
      const operationId = operationIdOf(writer.header().runId, writer.nextRow())
      operationIds.push(operationId)
      // A server tool's call records which declaration it was made under (the catalog gate compares).
      const source = input.tools.find((t) => t.name === call.name)?.source
      const called = await writer.append({
        role: 'model',
        author: 'agent',
        content: {
          kind: 'function_call',
          id: call.id,
          name: call.name,
          args: call.args,
        },
        ...(source === undefined ? {} : { actions: { stateDelta: toolSourceDelta(source) } }),
        refs: {
          toolCallId: call.id,
          ...(input.protocol === true ? { operationId: makeNonEmptyStringUnsafe(operationId) } : {}),
        },
      })()
      if (E.isLeft(called)) return called
    }
    await input.crashPoint('after_function_call')
    for (const [index, call] of result.toolCalls.entries()) {
      const tool = input.tools.find((t) => t.name === call.name)
      if (input.protocol === true) {
        const operationId = operationIds[index] ?? ''
        const settled = await runJournaledCall(
          input,
          tool,
          call,
          {
            operationId,
            attempt: 1,
            origin: 'normal_t2',
            requestId: `perm-${call.id}`,
            afterResponse: 'after_tool_response',
          },
          (found, journal) => runTool(input, found, call, journal),
        )
        if (E.isLeft(settled)) return settled
        continue
      }
      let outcome: ToolOutcome
      if (tool === undefined) {
        outcome = { result: { error: `There is no tool named ${call.name}.` }, isError: true }
      } else if (cancelled()) {
        // The call row is committed, so it gets a response: the tool never ran.
        outcome = { result: { error: 'The run was cancelled before this tool ran.' }, isError: true }
      } else {
        const decision = await authorise(input, tool, call)()
        if (E.isLeft(decision)) return decision
        outcome =
          decision.right === 'deny'
            ? { result: { error: 'Permission denied.' }, isError: true }
            : await runTool(input, tool, call)
      }
      const responded = await appendToolResponse(writer, call, outcome)
      if (E.isLeft(responded)) return responded
      await input.crashPoint('after_tool_response')
    }
    if (cancelled()) return E.right({ _tag: 'Cancelled' })
  }
  return E.right({
    _tag: 'Failed',
    failureClass: 'runtime_error',
    message: `The model did not finish within ${input.maxModelSteps} steps.`,
  })
}
