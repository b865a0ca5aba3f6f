/**
 * The OpenAI-compatible provider: any chat-completions endpoint, streamed, with tool calls, on the
 * official `openai` SDK. Two promises shape it: a failing endpoint fails fast and never hangs a run
 * (no SDK retries, a request timeout and a stall watchdog), and an error never carries the prompt,
 * the response body or the key (the SDK's own messages may quote the body, so they are never used).
 * The SDK's logger is silenced, and the stream is read here (eventsource-parser) rather than by the
 * SDK's reader, which prints a malformed chunk's raw body to stderr behind the host's back. Which
 * failures the run loop tries again is the provider's `retry` policy.
 */
import { createParser } from 'eventsource-parser'
import type * as OpenAISdkModule from 'openai'
import type OpenAI from 'openai'
import type { ClientOptions } from 'openai'
import type {
  ChatCompletionChunk,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions'
import {
  type ModelProvider,
  type ProviderChunk,
  type ProviderErrorCode,
  type ProviderFailure,
  type ProviderMessage,
  type ProviderRequest,
  type RetryPolicy,
  type ToolSpec,
  providerFailure,
} from './ModelProvider.js'
import { DEFAULT_RETRY_POLICY, parseRetryAfter } from './RetryPolicy.js'

type OpenAISdk = typeof OpenAISdkModule

/**
 * Options of the OpenAI-compatible provider. `timeoutMs` bounds both the wait for the response and
 * any silence between two streamed chunks.
 * @category models
 */
export interface OpenAICompatibleProviderOptions {
  readonly baseUrl: string
  readonly apiKey?: string
  readonly model: string
  readonly timeoutMs?: number
  /** How the run loop tries a failed step again; `DEFAULT_RETRY_POLICY` when left out. */
  readonly retry?: RetryPolicy
  readonly fetch?: typeof fetch
}

// The SDK logs a chunk it cannot parse with the chunk's raw text (which may echo the prompt) and, at
// other levels, request details; nothing of it may reach the host's stderr or a log.
const silent = (): void => undefined
const silentLogger: NonNullable<ClientOptions['logger']> = { error: silent, warn: silent, info: silent, debug: silent }

/**
 * The timeout used when none is given.
 * @category models
 */
export const DEFAULT_PROVIDER_TIMEOUT_MS = 120_000

/**
 * Creates a provider for an OpenAI-compatible chat-completions endpoint.
 * @category constructors
 */
export const makeOpenAICompatibleProvider = (options: OpenAICompatibleProviderOptions): ModelProvider => {
  const timeoutMs = options.timeoutMs ?? DEFAULT_PROVIDER_TIMEOUT_MS
  // The SDK is loaded on the first call only: every host builds providers, few call this one, and
  // loading it eagerly costs each CLI start a large share of its time.
  let connection: Promise<{ readonly sdk: OpenAISdk; readonly client: OpenAI }> | undefined
  const connect = () => {
    connection ??= import('openai').then((sdk) => ({
      sdk,
      client: new sdk.OpenAI({
        baseURL: options.baseUrl,
        // Local endpoints often need no key, but the SDK refuses to start without one.
        apiKey: options.apiKey ?? 'unused',
        timeout: timeoutMs,
        // A retry would resend the whole prompt and multiply the wait; the run loop decides what to do.
        maxRetries: 0,
        // Both, so OPENAI_LOG in the environment cannot turn it back on.
        logLevel: 'off',
        logger: silentLogger,
        ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
      }),
    }))
    return connection
  }

  async function* stream(request: ProviderRequest): AsyncGenerator<ProviderChunk, void, undefined> {
    if (request.signal?.aborted === true) {
      yield { type: 'failed', failure: abortedFailure() }
      return
    }
    const controller = new AbortController()
    const onAbort = (): void => controller.abort()
    request.signal?.addEventListener('abort', onAbort, { once: true })
    // The SDK's timeout stops at the response headers; a server that then goes silent mid-stream
    // would hang the run, so a watchdog aborts after `timeoutMs` without a chunk. It is paused while
    // our consumer handles a chunk, so a slow consumer is never blamed on the server.
    let stalled = false
    let watchdog: ReturnType<typeof setTimeout> | undefined
    const armWatchdog = (): void => {
      clearTimeout(watchdog)
      watchdog = setTimeout(() => {
        stalled = true
        controller.abort()
      }, timeoutMs)
    }
    let sdk: OpenAISdk | undefined
    // Where the call was when it broke: a network failure before the response is an unreachable
    // endpoint, one after it has started to answer is a lost connection.
    let answering = false
    const fail = (cause: unknown): ProviderFailure =>
      toProviderFailure(cause, { aborted: request.signal?.aborted === true, stalled, answering }, sdk)
    try {
      const connected = await connect()
      sdk = connected.sdk
      armWatchdog()
      // The raw response: the SDK still sends the request and turns an error status into its error,
      // but the body is read here.
      const response = await connected.client.chat.completions
        .create(toRequestBody(options.model, request), { signal: controller.signal })
        .asResponse()
      answering = true
      // Some servers ignore `stream: true` and answer with one JSON chat completion. Read as SSE it
      // would yield nothing and pass for an empty, finished answer — dropping any tool call in it.
      if (isJsonResponse(response)) {
        const completion = await readJson(response)
        clearTimeout(watchdog)
        for (const part of completionChunks(completion)) yield part
        return
      }
      const toolCalls = new Map<number, PartialToolCall>()
      let usage: ProviderChunk | undefined
      let finished = false
      // Any byte, a keep-alive comment included, shows the server is still there.
      for await (const chunk of streamedChunks(response, armWatchdog)) {
        clearTimeout(watchdog)
        if (chunk.usage != null) {
          usage = { type: 'usage', input: chunk.usage.prompt_tokens, output: chunk.usage.completion_tokens }
        }
        const choice = chunk.choices[0]
        if (choice?.finish_reason != null) finished = true
        const delta = choice?.delta
        if (delta?.tool_calls != null) accumulateToolCalls(toolCalls, delta.tool_calls)
        if (typeof delta?.content === 'string' && delta.content.length > 0) {
          yield { type: 'text_delta', text: delta.content }
        }
        armWatchdog()
      }
      // An abort ends the body early; a cut-off answer is never passed off as a whole one.
      if (controller.signal.aborted) throw new StepFailed(fail(undefined))
      clearTimeout(watchdog)
      // A stream that closes without a finish reason was cut off: its text and tool calls may be
      // partial, so it is never passed off as a whole answer.
      if (!finished) {
        throw stepFailed('bad_response', 'The model stream ended before the answer was finished.')
      }
      for (const call of completeToolCalls(toolCalls)) yield call
      if (usage !== undefined) yield usage
    } catch (cause) {
      yield { type: 'failed', failure: fail(cause) }
    } finally {
      clearTimeout(watchdog)
      request.signal?.removeEventListener('abort', onAbort)
      // Also closes the connection when the consumer stops early.
      controller.abort()
    }
  }

  return {
    providerId: 'openai-compatible',
    modelId: options.model,
    baseUrl: options.baseUrl,
    retry: options.retry ?? DEFAULT_RETRY_POLICY,
    stream,
  }
}

// -------------------------------------------------------------------------------------
// request mapping
// -------------------------------------------------------------------------------------

const toRequestBody = (model: string, request: ProviderRequest): ChatCompletionCreateParamsStreaming => ({
  model,
  messages: toChatMessages(request),
  // Some compatible servers reject an empty tools array, so it is left out instead.
  ...(request.tools.length === 0 ? {} : { tools: request.tools.map(toChatTool) }),
  stream: true,
  stream_options: { include_usage: true },
})

const toChatMessages = (request: ProviderRequest): Array<ChatCompletionMessageParam> => [
  ...(request.systemPrompt === '' ? [] : [{ role: 'system' as const, content: request.systemPrompt }]),
  ...request.messages.map(toChatMessage),
]

const toChatMessage = (message: ProviderMessage): ChatCompletionMessageParam => {
  switch (message.role) {
    case 'user':
      return { role: 'user', content: message.text }
    case 'assistant':
      return message.toolCalls.length === 0
        ? { role: 'assistant', content: message.text }
        : {
            role: 'assistant',
            // Endpoints expect null, not '', for a step that only called tools.
            content: message.text === '' ? null : message.text,
            tool_calls: message.toolCalls.map((call) => ({
              id: call.id,
              type: 'function' as const,
              function: { name: call.name, arguments: toJson(call.args ?? {}) },
            })),
          }
    case 'tool':
      return {
        role: 'tool',
        tool_call_id: message.toolCallId,
        // The chat format has no error flag on tool messages, so a failure is wrapped to stay visible;
        // a result that already reads `{ error }` (a denied or cancelled call) is sent as it is.
        content: toJson(message.isError && !readsAsError(message.result) ? { error: message.result } : message.result),
      }
  }
}

const toChatTool = (tool: ToolSpec): ChatCompletionTool => ({
  type: 'function',
  function: { name: tool.name, description: tool.description, parameters: tool.parameters },
})

const readsAsError = (result: unknown): boolean =>
  typeof result === 'object' && result !== null && !Array.isArray(result) && 'error' in result

// JSON.stringify(undefined) is undefined, which is not a message body.
const toJson = (value: unknown): string => JSON.stringify(value) ?? 'null'

// -------------------------------------------------------------------------------------
// response mapping
// -------------------------------------------------------------------------------------

interface PartialToolCall {
  id: string | undefined
  name: string | undefined
  args: string
}

type ToolCallDelta = NonNullable<ChatCompletionChunk.Choice.Delta['tool_calls']>[number]

// Tool calls arrive as fragments keyed by index: id and name once, arguments in pieces.
const accumulateToolCalls = (calls: Map<number, PartialToolCall>, deltas: ReadonlyArray<ToolCallDelta>): void => {
  for (const delta of deltas) {
    const call = calls.get(delta.index) ?? { id: undefined, name: undefined, args: '' }
    if (delta.id != null && delta.id !== '') call.id = delta.id
    if (delta.function?.name != null && delta.function.name !== '') call.name = delta.function.name
    if (delta.function?.arguments != null) call.args += delta.function.arguments
    calls.set(delta.index, call)
  }
}

// Only whole calls leave the provider: a call the executor cannot identify or whose arguments are
// not JSON must never run, so the step fails as a bad response instead.
const completeToolCalls = (calls: ReadonlyMap<number, PartialToolCall>): ReadonlyArray<ProviderChunk> =>
  [...calls.entries()]
    .sort(([a], [b]) => a - b)
    .map(([, call]) => {
      if (call.id === undefined || call.name === undefined) {
        throw stepFailed('bad_response', 'The model endpoint sent a tool call without an id or a name.')
      }
      return { type: 'tool_call', id: call.id, name: call.name, args: parseArgs(call.args) }
    })

// The server-sent events of a streamed answer, each a chat completion chunk, up to `[DONE]`. A chunk
// that is not JSON is a SyntaxError (a protocol error); an `error` object in the stream is the
// endpoint's own failure. Nothing is logged: the chunk may echo the prompt. `onBytes` is called for
// every piece of the body that arrives, whole events or not.
async function* streamedChunks(
  response: Response,
  onBytes: () => void,
): AsyncGenerator<ChatCompletionChunk, void, undefined> {
  const events: Array<string> = []
  const parser = createParser({ onEvent: (event) => events.push(event.data) })
  const decoder = new TextDecoder()
  const body = response.body
  if (body === null) return
  for await (const bytes of body as AsyncIterable<Uint8Array>) {
    onBytes()
    parser.feed(decoder.decode(bytes, { stream: true }))
    for (let data = events.shift(); data !== undefined; data = events.shift()) {
      if (data.startsWith('[DONE]')) return
      const parsed: unknown = JSON.parse(data)
      if (isRecord(parsed) && parsed['error'] != null) {
        throw stepFailed('stream_error', 'The model endpoint reported an error in the stream.')
      }
      if (!isRecord(parsed) || !Array.isArray(parsed['choices'])) {
        throw stepFailed('bad_response', 'The model endpoint sent a chunk that is not a chat completion chunk.')
      }
      yield parsed as unknown as ChatCompletionChunk
    }
  }
}

const isJsonResponse = (response: Response): boolean =>
  /^application\/(?:[\w.+-]+\+)?json\b/i.test(response.headers.get('content-type') ?? '')

const readJson = async (response: Response): Promise<unknown> => {
  try {
    return await response.json()
  } catch (cause) {
    // An abort (our watchdog or the caller) is classified by the caller; only bad JSON is ours.
    if (cause instanceof SyntaxError) {
      throw stepFailed('bad_response', 'The model endpoint answered with a body that is not valid JSON.')
    }
    throw cause
  }
}

const notACompletion = (): StepFailed =>
  stepFailed('bad_response', 'The model endpoint answered with JSON that is not a chat completion.')

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

// The non-streamed chat completion, read with the same rules as the stream: whole tool calls only.
const completionChunks = (completion: unknown): ReadonlyArray<ProviderChunk> => {
  if (!isRecord(completion) || !Array.isArray(completion['choices'])) throw notACompletion()
  const choice: unknown = completion['choices'][0]
  if (!isRecord(choice) || !isRecord(choice['message'])) throw notACompletion()
  const message = choice['message']
  const content = message['content']
  if (content != null && typeof content !== 'string') throw notACompletion()
  const rawCalls = message['tool_calls'] ?? []
  if (!Array.isArray(rawCalls)) throw notACompletion()
  const calls = new Map<number, PartialToolCall>()
  rawCalls.forEach((raw: unknown, index) => {
    const fn = isRecord(raw) ? raw['function'] : undefined
    if (!isRecord(raw) || !isRecord(fn)) throw notACompletion()
    const args = fn['arguments'] ?? ''
    if (typeof args !== 'string') throw notACompletion()
    calls.set(index, {
      id: typeof raw['id'] === 'string' && raw['id'] !== '' ? raw['id'] : undefined,
      name: typeof fn['name'] === 'string' && fn['name'] !== '' ? fn['name'] : undefined,
      args,
    })
  })
  const usage = completion['usage']
  return [
    ...(typeof content === 'string' && content.length > 0 ? [{ type: 'text_delta' as const, text: content }] : []),
    ...completeToolCalls(calls),
    ...(isRecord(usage) && typeof usage['prompt_tokens'] === 'number' && typeof usage['completion_tokens'] === 'number'
      ? [{ type: 'usage' as const, input: usage['prompt_tokens'], output: usage['completion_tokens'] }]
      : []),
  ]
}

const parseArgs = (text: string): unknown => {
  // Some servers send nothing at all for a tool without parameters.
  if (text.trim() === '') return {}
  try {
    return JSON.parse(text)
  } catch {
    // The arguments themselves may hold prompt-derived text, so they are not quoted.
    throw stepFailed('bad_response', 'The model endpoint sent tool call arguments that are not valid JSON.')
  }
}

// -------------------------------------------------------------------------------------
// errors
// -------------------------------------------------------------------------------------

const abortedFailure = (): ProviderFailure => providerFailure('aborted', 'The model call was aborted.')

// Inside the client a failure unwinds the response parser as an exception; `stream` turns it into
// the `failed` chunk at its edge, so nothing outside this module sees a throw.
class StepFailed extends Error {
  constructor(readonly failure: ProviderFailure) {
    super(failure.message)
  }
}

const stepFailed = (code: ProviderErrorCode, message: string): StepFailed =>
  new StepFailed(providerFailure(code, message))

const httpErrorSentence = (status: number): string =>
  status === 401 || status === 403
    ? `The model endpoint refused the credentials (HTTP ${status}).`
    : status === 429
      ? 'The model endpoint is limiting the rate of requests (HTTP 429).'
      : `The model endpoint answered HTTP ${status}.`

const retryAfterOf = (headers: Headers | undefined): number | undefined =>
  headers === undefined
    ? undefined
    : parseRetryAfter(
        { retryAfter: headers.get('retry-after'), retryAfterMs: headers.get('retry-after-ms') },
        Date.now(),
      )

// Order matters: the caller's abort wins over everything, and our watchdog's abort looks like a
// user abort to the SDK.
const toProviderFailure = (
  cause: unknown,
  why: { readonly aborted: boolean; readonly stalled: boolean; readonly answering: boolean },
  sdk: OpenAISdk | undefined,
): ProviderFailure => {
  if (cause instanceof StepFailed) return cause.failure
  if (why.aborted) return abortedFailure()
  if (sdk === undefined) return providerFailure('stream_error', 'The model client could not be loaded.')
  const { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } = sdk
  if (why.stalled || cause instanceof APIConnectionTimeoutError) {
    return providerFailure('timeout', 'The model endpoint did not answer in time.')
  }
  if (cause instanceof APIUserAbortError) return abortedFailure()
  if (cause instanceof APIConnectionError) {
    return providerFailure('unreachable', 'The model endpoint could not be reached.')
  }
  if (cause instanceof APIError && typeof cause.status === 'number') {
    // The status alone: the body may echo the prompt.
    return providerFailure(
      'http_error',
      httpErrorSentence(cause.status),
      cause.status,
      retryAfterOf(cause.headers as Headers | undefined),
    )
  }
  if (cause instanceof APIError) {
    return providerFailure('stream_error', 'The model endpoint reported an error in the stream.')
  }
  if (cause instanceof SyntaxError) {
    return providerFailure('bad_response', 'The model endpoint sent a chunk that is not valid JSON.')
  }
  // Past the response headers, what is left is the socket breaking (undici's "terminated").
  if (why.answering) return providerFailure('connection_lost', 'The connection to the model endpoint was lost.')
  // Before them: a URL the client cannot use, or a network failure the SDK did not wrap.
  return providerFailure('unreachable', 'The model endpoint could not be reached.')
}
