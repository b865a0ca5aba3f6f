/**
 * A model step that fails in a way a later try may not (429, 5xx, a stall, a dropped stream) is
 * tried again by the loop under the provider's retry policy, from the last committed row: the same
 * history is sent again, no user message twice, no tool run twice. Real stores and tools; the
 * provider is a double that fails on the requests it is told to.
 */
import { describe, expect, it } from 'vitest'
import {
  type ModelProvider,
  type ProviderFailure,
  type ProviderRequest,
  type RetryPolicy,
  providerFailure,
} from '@maka/providers'
import type { StepRetry, TurnResult } from '../src/index.js'
import { trackWorlds } from './support/world.js'

const world = trackWorlds()

type Answer =
  | { readonly fail: ProviderFailure }
  | { readonly text: string }
  | { readonly toolCall: { readonly id: string; readonly name: string } }

const fast: RetryPolicy = { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20, maxWaitMs: 1_000 }

// Answers in order (then "Done."), keeping every request; a failure may come after some text.
const flakyProvider = (
  answers: ReadonlyArray<Answer>,
  requests: Array<ProviderRequest>,
  retry: RetryPolicy | null,
): ModelProvider => ({
  providerId: 'flaky',
  modelId: 'flaky-1',
  ...(retry === null ? {} : { retry }),
  async *stream(request) {
    requests.push(request)
    const answer = answers[requests.length - 1] ?? { text: 'Done.' }
    if ('fail' in answer) {
      yield { type: 'text_delta', text: 'Half an ans' }
      yield { type: 'failed', failure: answer.fail }
    } else if ('text' in answer) {
      yield { type: 'text_delta', text: answer.text }
    } else {
      yield { type: 'tool_call', id: answer.toolCall.id, name: answer.toolCall.name, args: { label: 'x' } }
    }
  },
})

const finished = (result: TurnResult) => {
  if (result._tag !== 'Finished') throw new Error(`expected Finished, got ${JSON.stringify(result)}`)
  return result
}

const http = (status: number, retryAfterMs?: number) =>
  providerFailure('http_error', status === 429 ? 'Rate limited (HTTP 429).' : `HTTP ${status}.`, status, retryAfterMs)

const run = async (answers: ReadonlyArray<Answer>, retry: RetryPolicy | null = fast) => {
  const w = await world()
  const requests: Array<ProviderRequest> = []
  const retries: Array<StepRetry> = []
  const result = finished(
    await w
      .runtimeWith({
        providerFor: () => flakyProvider(answers, requests, retry),
        observer: { onRetry: (r) => retries.push(r) },
      })
      .runTurn({ cwd: w.workspace, prompt: 'count' }),
  )
  return { w, requests, retries, result, ledger: await w.ledger(result.sessionId, result.runId) }
}

describe('the agent loop with a failing model step', () => {
  describe('when the endpoint answers 429 with Retry-After, then answers', () => {
    it('waits as asked, sends the same history again and completes', async () => {
      const { requests, retries, result, ledger } = await run([{ fail: http(429, 30) }, { text: 'Hello.' }])
      expect(result.status).toBe('completed')
      expect(requests).toHaveLength(2)
      expect(requests[1]?.messages).toEqual(requests[0]?.messages)
      expect(requests[1]?.messages.filter((m) => m.role === 'user')).toHaveLength(1)
      expect(retries).toEqual([
        expect.objectContaining({ attempt: 2, maxAttempts: 3, delayMs: 30, code: 'http_error', status: 429 }),
      ])
      // Nothing of the failed try reached the ledger: one answer, the whole one.
      const texts = ledger.flatMap((e) => (e.role === 'model' && e.content?.kind === 'text' ? [e.content.text] : []))
      expect(texts).toEqual(['Hello.'])
    })
  })

  describe('when the endpoint answers 500 on every try', () => {
    it('gives up after maxAttempts, saying so, with the status and the tries recorded', async () => {
      const { requests, retries, result, ledger } = await run([
        { fail: http(500) },
        { fail: http(500) },
        { fail: http(500) },
      ])
      expect(requests).toHaveLength(3)
      expect(retries.map((r) => r.attempt)).toEqual([2, 3])
      expect(result).toMatchObject({
        status: 'failed',
        failureClass: 'provider_http_error',
        failureMessage: 'HTTP 500. Gave up after 3 tries.',
        retryLater: true,
      })
      expect(ledger.at(-1)?.actions?.stateDelta).toMatchObject({ httpStatus: 500, providerAttempts: 3 })
    })
  })

  describe('when a stall or a dropped stream follows a committed tool call', () => {
    it.each<[string, ProviderFailure]>([
      ['a stall', providerFailure('timeout', 'The model endpoint did not answer in time.')],
      ['a dropped stream', providerFailure('connection_lost', 'The connection to the model endpoint was lost.')],
    ])(
      'retries only the failed step after %s: the tool ran once, the history is sent unchanged',
      async (_what, failure) => {
        const { w, requests, result } = await run([
          { toolCall: { id: 'c1', name: 'count' } },
          { fail: failure },
          { text: 'Counted.' },
        ])
        expect(result.status).toBe('completed')
        expect(w.runsOf('count')).toBe(1)
        expect(requests).toHaveLength(3)
        expect(requests[2]?.messages).toEqual(requests[1]?.messages)
        expect(requests[2]?.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool'])
      },
    )
  })

  describe('when the failure would not pass on a later try', () => {
    it('fails at once (HTTP 400), without a retry', async () => {
      const { requests, retries, result } = await run([{ fail: http(400) }])
      expect(requests).toHaveLength(1)
      expect(retries).toEqual([])
      expect(result).toMatchObject({ status: 'failed', failureMessage: 'HTTP 400.' })
      expect(result).not.toHaveProperty('retryLater')
    })
  })

  describe('when Retry-After asks for more than the retries may wait', () => {
    it('gives up at once and says so', async () => {
      const { requests, result } = await run([{ fail: http(429, 60_000) }])
      expect(requests).toHaveLength(1)
      expect(result).toMatchObject({ status: 'failed', retryLater: true })
      expect(result.failureMessage).toBe(
        'Rate limited (HTTP 429). It asked to wait 60 s, longer than the retries may wait.',
      )
    })
  })

  describe('when the provider has no retry policy', () => {
    it('never tries a step again', async () => {
      const { requests, result } = await run([{ fail: http(503) }], null)
      expect(requests).toHaveLength(1)
      expect(result).toMatchObject({ status: 'failed', failureMessage: 'HTTP 503.' })
    })
  })

  describe('when the run is cancelled while it waits', () => {
    it('ends cancelled without trying again', async () => {
      const w = await world()
      const requests: Array<ProviderRequest> = []
      const runtime = w.runtimeWith({
        providerFor: () => flakyProvider([{ fail: http(429, 60_000) }], requests, { ...fast, maxWaitMs: 600_000 }),
        observer: { onRetry: () => runtime.cancel() },
      })
      const result = finished(await runtime.runTurn({ cwd: w.workspace, prompt: 'count' }))
      expect(result.status).toBe('cancelled')
      expect(requests).toHaveLength(1)
    })
  })
})
