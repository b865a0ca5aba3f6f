/**
 * The scripted model: a deterministic ModelProvider that follows a script, so demos, crash tests and
 * CI run the real agent loop with no network. Its only state is a cursor into the script and a tool
 * call counter; the same script with the same requests always streams the same chunks.
 */
import type { ModelProvider, ProviderChunk, ProviderMessage, ProviderRequest } from './ModelProvider.js'
import { providerFailure } from './ModelProvider.js'
import type { ScriptStep } from './ScriptStep.js'

/**
 * Options of the scripted provider. `toolCallIdPrefix` should be unique per run (e.g. the run id),
 * because tool call ids of a continuation's history come from earlier provider instances.
 * @category models
 */
export interface ScriptedProviderOptions {
  readonly steps?: ReadonlyArray<ScriptStep>
  readonly toolCallIdPrefix: string
  readonly modelId?: string
  readonly sleep?: (ms: number) => Promise<void>
}

/**
 * Creates a scripted provider. Steps are consumed in order across its `stream` calls; when they run
 * out (or none were given) every call answers with one deterministic line and no tool call.
 * @category constructors
 */
export const makeScriptedProvider = (options: ScriptedProviderOptions): ModelProvider => {
  const steps = options.steps ?? []
  let cursor = 0
  let toolCalls = 0

  async function* stream(request: ProviderRequest): AsyncGenerator<ProviderChunk, void, undefined> {
    const { signal } = request
    if (signal?.aborted === true) {
      yield abortedChunk()
      return
    }
    for (;;) {
      const step = steps[cursor]
      if (step === undefined) {
        yield* answer(fallbackAnswer(request.messages), request)
        return
      }
      // The cursor moves before the step acts, so a failed or aborted step is not replayed on the
      // next call: a retrying loop makes progress through the script instead of failing forever.
      cursor += 1
      if ('delayMs' in step) {
        if ((await abortableSleep(options.sleep, step.delayMs, signal)) === 'aborted') {
          yield abortedChunk()
          return
        }
      } else if ('error' in step) {
        yield { type: 'failed', failure: providerFailure('scripted_error', step.error) }
        return
      } else if ('text' in step) {
        yield* answer(step.text, request)
        return
      } else {
        toolCalls += 1
        yield {
          type: 'tool_call',
          id: `${options.toolCallIdPrefix}-${toolCalls}`,
          name: step.toolCall.name,
          args: step.toolCall.args ?? {},
        }
        yield usageOf(request, 1)
        return
      }
    }
  }

  function* answer(text: string, request: ProviderRequest): Generator<ProviderChunk, void, undefined> {
    const deltas = splitIntoDeltas(text)
    for (const delta of deltas) {
      if (request.signal?.aborted === true) {
        yield abortedChunk()
        return
      }
      yield { type: 'text_delta', text: delta }
    }
    yield usageOf(request, deltas.length)
  }

  return { providerId: 'scripted', modelId: options.modelId ?? 'scripted', stream }
}

// -------------------------------------------------------------------------------------
// internals
// -------------------------------------------------------------------------------------

// Short and derived only from names, never from tool results or user text: this line lands in the
// ledger and in demo output.
const fallbackAnswer = (messages: ReadonlyArray<ProviderMessage>): string => {
  const last = messages[messages.length - 1]
  return last?.role === 'tool' ? `Continuing after ${last.name}: done.` : 'Done.'
}

const MAX_DELTAS = 8

// Word-sized deltas (at most MAX_DELTAS) so hosts visibly stream, yet a long text stays cheap.
const splitIntoDeltas = (text: string): ReadonlyArray<string> => {
  // Whitespace-only text passes as one delta; empty text yields none.
  const words = text.match(/\s*\S+\s*/g) ?? (text === '' ? [] : [text])
  const size = Math.ceil(words.length / MAX_DELTAS)
  const deltas: Array<string> = []
  for (let i = 0; i < words.length; i += size) deltas.push(words.slice(i, i + size).join(''))
  return deltas
}

// Token counts are invented but stable, so ledgers written by the scripted model are reproducible.
const usageOf = (request: ProviderRequest, output: number): ProviderChunk => ({
  type: 'usage',
  input: request.messages.length + 1,
  output,
})

const abortedChunk = (): ProviderChunk => ({
  type: 'failed',
  failure: providerFailure('aborted', 'The model call was aborted.'),
})

// Without an injected sleep the timer itself is cleared on abort, so an aborted long delay does not
// keep the process alive; an injected sleep (tests, fake clocks) is raced against the signal instead,
// so one that knows nothing about signals still cannot hold an aborted run open.
const abortableSleep = async (
  sleep: ((ms: number) => Promise<void>) | undefined,
  ms: number,
  signal: AbortSignal | undefined,
): Promise<'slept' | 'aborted'> => {
  if (signal?.aborted === true) return 'aborted'
  let timer: ReturnType<typeof setTimeout> | undefined
  let onAbort: (() => void) | undefined
  const slept =
    sleep?.(ms) ??
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms)
    })
  const aborted = new Promise<'aborted'>((resolve) => {
    onAbort = () => resolve('aborted')
    signal?.addEventListener('abort', onAbort, { once: true })
  })
  try {
    return await Promise.race([slept.then(() => 'slept' as const), aborted])
  } finally {
    clearTimeout(timer)
    if (onAbort !== undefined) signal?.removeEventListener('abort', onAbort)
  }
}
