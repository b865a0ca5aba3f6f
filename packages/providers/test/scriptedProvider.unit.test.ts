import { describe, expect, it } from 'vitest'
import {
  DEMO_SCRIPT,
  makeScriptedProvider,
  type ProviderFailure,
  type ModelProvider,
  type ProviderChunk,
  type ProviderMessage,
  type ProviderRequest,
  type ScriptStep,
} from '../src/index.js'

const requestWith = (messages: ReadonlyArray<ProviderMessage> = [], signal?: AbortSignal): ProviderRequest => ({
  systemPrompt: 'You are a test.',
  messages,
  tools: [],
  ...(signal === undefined ? {} : { signal }),
})

const collect = async (provider: ModelProvider, request: ProviderRequest = requestWith()) => {
  const chunks: Array<ProviderChunk> = []
  for await (const chunk of provider.stream(request)) chunks.push(chunk)
  return chunks
}

const textOf = (chunks: ReadonlyArray<ProviderChunk>): string =>
  chunks.flatMap((c) => (c.type === 'text_delta' ? [c.text] : [])).join('')
const toolCallsOf = (chunks: ReadonlyArray<ProviderChunk>) => chunks.filter((c) => c.type === 'tool_call')

// A failed step ends its stream with one `failed` chunk (it never throws): that chunk's failure.
const rejectionOf = async (chunks: Promise<ReadonlyArray<ProviderChunk>>): Promise<ProviderFailure> => {
  const last = (await chunks).at(-1)
  if (last?.type === 'failed') return last.failure
  throw new Error('expected the stream to end with a failed chunk')
}

const noSleep = () => Promise.resolve()

describe('scriptedProvider', () => {
  describe('when the script has tool calls and a text', () => {
    const steps: ReadonlyArray<ScriptStep> = [
      { toolCall: { name: 'list_dir', args: { path: '.' } } },
      { toolCall: { name: 'write_file', args: { path: 'a.txt', content: 'x' } } },
      { text: 'All written to the file now.' },
    ]

    it('consumes one step per call, with tool call ids counted from 1', async () => {
      const provider = makeScriptedProvider({ steps, toolCallIdPrefix: 'run-7' })
      const first = await collect(provider)
      const second = await collect(provider)
      const third = await collect(provider)
      expect(toolCallsOf(first)).toEqual([{ type: 'tool_call', id: 'run-7-1', name: 'list_dir', args: { path: '.' } }])
      expect(toolCallsOf(second)).toEqual([
        { type: 'tool_call', id: 'run-7-2', name: 'write_file', args: { path: 'a.txt', content: 'x' } },
      ])
      expect(toolCallsOf(third)).toEqual([])
      expect(textOf(third)).toBe('All written to the file now.')
    })

    it('streams the text as several deltas', async () => {
      const provider = makeScriptedProvider({ steps: [{ text: 'one two three four' }], toolCallIdPrefix: 'p' })
      const deltas = (await collect(provider)).filter((c) => c.type === 'text_delta')
      expect(deltas.length).toBeGreaterThan(1)
      expect(deltas.map((d) => d.text).join('')).toBe('one two three four')
    })

    it('reports deterministic usage once per step', async () => {
      const provider = makeScriptedProvider({ steps, toolCallIdPrefix: 'p' })
      const chunks = await collect(provider, requestWith([{ role: 'user', text: 'go' }]))
      expect(chunks.filter((c) => c.type === 'usage')).toEqual([{ type: 'usage', input: 2, output: 1 }])
    })

    it('streams the same chunks when the same script runs twice', async () => {
      const run = async () => {
        const provider = makeScriptedProvider({ steps: DEMO_SCRIPT, toolCallIdPrefix: 'demo' })
        return [await collect(provider), await collect(provider), await collect(provider), await collect(provider)]
      }
      expect(await run()).toEqual(await run())
    })

    it('leaves out args as {}', async () => {
      const provider = makeScriptedProvider({ steps: [{ toolCall: { name: 'list_dir' } }], toolCallIdPrefix: 'p' })
      expect(toolCallsOf(await collect(provider))).toEqual([
        { type: 'tool_call', id: 'p-1', name: 'list_dir', args: {} },
      ])
    })
  })

  describe('when the script has a delay', () => {
    it('waits through the injected sleep, then goes on within the same call', async () => {
      const slept: Array<number> = []
      const provider = makeScriptedProvider({
        steps: [{ delayMs: 250 }, { text: 'late' }],
        toolCallIdPrefix: 'p',
        sleep: (ms) => {
          slept.push(ms)
          return Promise.resolve()
        },
      })
      expect(textOf(await collect(provider))).toBe('late')
      expect(slept).toEqual([250])
    })

    it('really waits with the default sleep', async () => {
      const provider = makeScriptedProvider({ steps: [{ delayMs: 120 }, { text: 'late' }], toolCallIdPrefix: 'p' })
      const started = performance.now()
      await collect(provider)
      expect(performance.now() - started).toBeGreaterThanOrEqual(100)
    })

    it('fails with aborted when the signal aborts during the wait', async () => {
      const controller = new AbortController()
      // An hour: only the abort can end this wait before the test's own timeout.
      const provider = makeScriptedProvider({
        steps: [{ delayMs: 3_600_000 }, { text: 'never' }],
        toolCallIdPrefix: 'p',
      })
      const pending = collect(provider, requestWith([], controller.signal))
      setTimeout(() => controller.abort(), 20)
      const error = await rejectionOf(pending)
      expect(error.code).toBe('aborted')
    })

    it('fails with aborted against an injected sleep that ignores the signal', async () => {
      const controller = new AbortController()
      const provider = makeScriptedProvider({
        steps: [{ delayMs: 10 }],
        toolCallIdPrefix: 'p',
        sleep: () => new Promise<void>(() => undefined),
      })
      const pending = collect(provider, requestWith([], controller.signal))
      setTimeout(() => controller.abort(), 20)
      expect((await rejectionOf(pending)).code).toBe('aborted')
    })

    it('fails with aborted at once when the signal is already aborted', async () => {
      const provider = makeScriptedProvider({ steps: [{ text: 'x' }], toolCallIdPrefix: 'p' })
      expect((await rejectionOf(collect(provider, requestWith([], AbortSignal.abort())))).code).toBe('aborted')
    })
  })

  describe('when the script has an error step', () => {
    it('fails with a scripted_error and the next call goes on after it', async () => {
      const provider = makeScriptedProvider({
        steps: [{ error: 'rate limited' }, { text: 'recovered' }],
        toolCallIdPrefix: 'p',
        sleep: noSleep,
      })
      const error = await rejectionOf(collect(provider))
      expect(error._tag).toBe('ProviderFailure')
      expect(error.code).toBe('scripted_error')
      expect(error.message).toBe('rate limited')
      expect(textOf(await collect(provider))).toBe('recovered')
    })
  })

  describe('when the script is exhausted or absent', () => {
    it('answers "Done." with no tool call when there is no script', async () => {
      const provider = makeScriptedProvider({ toolCallIdPrefix: 'p' })
      const chunks = await collect(provider, requestWith([{ role: 'user', text: 'please do a lot' }]))
      expect(textOf(chunks)).toBe('Done.')
      expect(toolCallsOf(chunks)).toEqual([])
    })

    it('names the last tool when continuing after a tool result', async () => {
      const provider = makeScriptedProvider({ steps: [], toolCallIdPrefix: 'p' })
      const history: ReadonlyArray<ProviderMessage> = [
        { role: 'user', text: 'go' },
        { role: 'assistant', text: '', toolCalls: [{ id: 'run-0-1', name: 'write_file', args: {} }] },
        { role: 'tool', toolCallId: 'run-0-1', name: 'write_file', result: { secret: 'tool output' }, isError: false },
      ]
      const chunks = await collect(provider, requestWith(history))
      expect(textOf(chunks)).toBe('Continuing after write_file: done.')
      expect(toolCallsOf(chunks)).toEqual([])
    })

    it('answers the same line on every call after the last step', async () => {
      const provider = makeScriptedProvider({ steps: [{ text: 'first' }], toolCallIdPrefix: 'p' })
      expect(textOf(await collect(provider))).toBe('first')
      expect(textOf(await collect(provider))).toBe('Done.')
      expect(textOf(await collect(provider))).toBe('Done.')
    })

    it('answers the line when only delays were left', async () => {
      const provider = makeScriptedProvider({ steps: [{ delayMs: 5 }], toolCallIdPrefix: 'p', sleep: noSleep })
      expect(textOf(await collect(provider))).toBe('Done.')
    })
  })

  describe('when asked who it is', () => {
    it('is the scripted provider with a default model id', () => {
      const provider = makeScriptedProvider({ toolCallIdPrefix: 'p' })
      expect([provider.providerId, provider.modelId]).toEqual(['scripted', 'scripted'])
      expect(makeScriptedProvider({ toolCallIdPrefix: 'p', modelId: 'demo' }).modelId).toBe('demo')
    })
  })
})
