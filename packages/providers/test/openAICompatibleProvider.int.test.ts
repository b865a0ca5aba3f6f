import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it, vi } from 'vitest'
import {
  DEFAULT_RETRY_POLICY,
  failureClassOfProviderFailure,
  isTransientFailure,
  makeOpenAICompatibleProvider,
  type ProviderFailure,
  type ModelProvider,
  type ProviderChunk,
  type ProviderMessage,
  type ProviderRequest,
  type ToolSpec,
} from '../src/index.js'

// -------------------------------------------------------------------------------------
// a real local chat-completions endpoint
// -------------------------------------------------------------------------------------

interface ReceivedRequest {
  readonly method: string | undefined
  readonly url: string | undefined
  readonly headers: IncomingMessage['headers']
  readonly body: Record<string, unknown>
}

type Handler = (req: ReceivedRequest, res: ServerResponse) => void

interface TestServer {
  readonly baseUrl: string
  readonly received: Array<ReceivedRequest>
}

let server: Server | undefined

// Each handler answers one request in turn; the last one answers any further requests.
const startServer = async (...handlers: ReadonlyArray<Handler>): Promise<TestServer> => {
  const received: Array<ReceivedRequest> = []
  server = createServer((req, res) => {
    const parts: Array<Buffer> = []
    req.on('data', (part: Buffer) => parts.push(part))
    req.on('end', () => {
      const request = {
        method: req.method,
        url: req.url,
        headers: req.headers,
        body: JSON.parse(Buffer.concat(parts).toString('utf8')) as Record<string, unknown>,
      }
      received.push(request)
      const handler = handlers[Math.min(received.length, handlers.length) - 1]
      handler?.(request, res)
    })
  })
  const listening = server
  await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve))
  const { port } = listening.address() as AddressInfo
  return { baseUrl: `http://127.0.0.1:${port}/v1`, received }
}

afterEach(async () => {
  const closing = server
  server = undefined
  if (closing === undefined) return
  // Hanging test endpoints keep sockets open; close them so `close` can finish.
  closing.closeAllConnections()
  await new Promise<void>((resolve) => closing.close(() => resolve()))
})

const chunk = (delta: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 1_767_225_600,
  model: 'test-model',
  choices: [{ index: 0, delta, finish_reason: null }],
  ...extra,
})
const usageChunk = (input: number, output: number) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 1_767_225_600,
  model: 'test-model',
  choices: [],
  usage: { prompt_tokens: input, completion_tokens: output, total_tokens: input + output },
})

const openSse = (res: ServerResponse): void => {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
}
const sendSse = (res: ServerResponse, payload: unknown): void => {
  res.write(`data: ${JSON.stringify(payload)}\n\n`)
}
const finishChunk = (reason = 'stop') => chunk({}, { choices: [{ index: 0, delta: {}, finish_reason: reason }] })
const hasFinish = (payload: unknown): boolean => JSON.stringify(payload).includes('"finish_reason":"')
// A well-behaved server closes every answer with a finish reason; the helper adds one when a case
// does not send its own.
const sse =
  (...payloads: ReadonlyArray<unknown>): Handler =>
  (_req, res) => {
    openSse(res)
    for (const payload of payloads) sendSse(res, payload)
    if (!payloads.some(hasFinish)) sendSse(res, finishChunk())
    res.end('data: [DONE]\n\n')
  }
const silent: Handler = () => undefined

// -------------------------------------------------------------------------------------
// the provider side
// -------------------------------------------------------------------------------------

const SENTINEL = 'SENTINEL-PROMPT-7f3a9c'

const tools: ReadonlyArray<ToolSpec> = [
  {
    name: 'write_file',
    description: 'Writes a file in the workspace.',
    parameters: {
      type: 'object',
      properties: { path: { type: 'string' }, content: { type: 'string' } },
      required: ['path', 'content'],
    },
  },
]

const STALL_TIMEOUT_MS = 10_000

const requestWith = (messages: ReadonlyArray<ProviderMessage>, signal?: AbortSignal): ProviderRequest => ({
  systemPrompt: 'You are maka.',
  messages,
  tools,
  ...(signal === undefined ? {} : { signal }),
})

const collect = async (provider: ModelProvider, request: ProviderRequest) => {
  const chunks: Array<ProviderChunk> = []
  for await (const c of provider.stream(request)) chunks.push(c)
  return chunks
}

// A failed step ends its stream with one `failed` chunk (it never throws): that chunk's failure.
const rejectionOf = async (chunks: Promise<ReadonlyArray<ProviderChunk>>): Promise<ProviderFailure> => {
  const last = (await chunks).at(-1)
  if (last?.type === 'failed') return last.failure
  throw new Error('expected the stream to end with a failed chunk')
}

const providerFor = (baseUrl: string, extra: { apiKey?: string; timeoutMs?: number } = {}) =>
  makeOpenAICompatibleProvider({ baseUrl, model: 'test-model', timeoutMs: 5_000, ...extra })

describe('openAICompatibleProvider', () => {
  describe('when the endpoint streams text', () => {
    it('yields each streamed piece as a text_delta, then the usage', async () => {
      const { baseUrl } = await startServer(
        sse(
          chunk({ role: 'assistant', content: '' }),
          chunk({ content: 'Hel' }),
          chunk({ content: 'lo ' }),
          chunk({ content: 'world' }),
          usageChunk(12, 3),
        ),
      )
      const chunks = await collect(providerFor(baseUrl), requestWith([{ role: 'user', text: 'hi' }]))
      expect(chunks).toEqual([
        { type: 'text_delta', text: 'Hel' },
        { type: 'text_delta', text: 'lo ' },
        { type: 'text_delta', text: 'world' },
        { type: 'usage', input: 12, output: 3 },
      ])
    })

    it('sends the model, the system prompt first, the tools and stream: true', async () => {
      const endpoint = await startServer(sse(chunk({ content: 'ok' })))
      await collect(providerFor(endpoint.baseUrl), requestWith([{ role: 'user', text: 'hi' }]))
      const [request] = endpoint.received
      expect(request?.method).toBe('POST')
      expect(request?.url).toBe('/v1/chat/completions')
      expect(request?.body).toEqual({
        model: 'test-model',
        messages: [
          { role: 'system', content: 'You are maka.' },
          { role: 'user', content: 'hi' },
        ],
        tools: [
          {
            type: 'function',
            function: {
              name: 'write_file',
              description: 'Writes a file in the workspace.',
              parameters: tools[0]?.parameters,
            },
          },
        ],
        stream: true,
        stream_options: { include_usage: true },
      })
    })
  })

  describe('when the endpoint streams a tool call in fragments', () => {
    const toolCallStream = sse(
      chunk({
        role: 'assistant',
        content: null,
        tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'write_file', arguments: '' } }],
      }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"path":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '"a.txt","con' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: 'tent":"hi"}' } }] }),
      chunk({}, { choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] }),
      usageChunk(20, 9),
    )

    it('yields one tool_call with the parsed args, and the next request carries the call and its result', async () => {
      const endpoint = await startServer(toolCallStream, sse(chunk({ content: 'Written.' })))
      const provider = providerFor(endpoint.baseUrl)
      const first = await collect(provider, requestWith([{ role: 'user', text: 'write a.txt' }]))
      expect(first).toEqual([
        { type: 'tool_call', id: 'call_1', name: 'write_file', args: { path: 'a.txt', content: 'hi' } },
        { type: 'usage', input: 20, output: 9 },
      ])

      const history: ReadonlyArray<ProviderMessage> = [
        { role: 'user', text: 'write a.txt' },
        {
          role: 'assistant',
          text: '',
          toolCalls: [{ id: 'call_1', name: 'write_file', args: { path: 'a.txt', content: 'hi' } }],
        },
        { role: 'tool', toolCallId: 'call_1', name: 'write_file', result: { ok: true }, isError: false },
      ]
      const second = await collect(provider, requestWith(history))
      expect(second).toEqual([{ type: 'text_delta', text: 'Written.' }])

      const body = endpoint.received[1]?.body
      expect(body?.['model']).toBe('test-model')
      expect(body?.['stream']).toBe(true)
      expect(body?.['tools']).toEqual([
        {
          type: 'function',
          function: {
            name: 'write_file',
            description: 'Writes a file in the workspace.',
            parameters: tools[0]?.parameters,
          },
        },
      ])
      expect(body?.['messages']).toEqual([
        { role: 'system', content: 'You are maka.' },
        { role: 'user', content: 'write a.txt' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_1',
              type: 'function',
              function: { name: 'write_file', arguments: '{"path":"a.txt","content":"hi"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '{"ok":true}' },
      ])
    })

    it('keeps parallel tool calls apart by index, in index order', async () => {
      const { baseUrl } = await startServer(
        sse(
          chunk({
            tool_calls: [
              { index: 1, id: 'call_b', type: 'function', function: { name: 'list_dir', arguments: '{"pa' } },
            ],
          }),
          chunk({
            tool_calls: [
              { index: 0, id: 'call_a', type: 'function', function: { name: 'read_file', arguments: '{}' } },
            ],
          }),
          chunk({ tool_calls: [{ index: 1, function: { arguments: 'th":"."}' } }] }),
        ),
      )
      const chunks = await collect(providerFor(baseUrl), requestWith([{ role: 'user', text: 'go' }]))
      expect(chunks).toEqual([
        { type: 'tool_call', id: 'call_a', name: 'read_file', args: {} },
        { type: 'tool_call', id: 'call_b', name: 'list_dir', args: { path: '.' } },
      ])
    })

    it('marks a failed tool result so the model can see it failed', async () => {
      const endpoint = await startServer(sse(chunk({ content: 'ok' })))
      await collect(
        providerFor(endpoint.baseUrl),
        requestWith([
          { role: 'assistant', text: 'Trying.', toolCalls: [{ id: 'c', name: 'shell', args: { command: 'false' } }] },
          { role: 'tool', toolCallId: 'c', name: 'shell', result: 'exit 1', isError: true },
        ]),
      )
      const messages = endpoint.received[0]?.body['messages'] as ReadonlyArray<Record<string, unknown>>
      expect(messages.slice(1)).toEqual([
        {
          role: 'assistant',
          content: 'Trying.',
          tool_calls: [{ id: 'c', type: 'function', function: { name: 'shell', arguments: '{"command":"false"}' } }],
        },
        { role: 'tool', tool_call_id: 'c', content: '{"error":"exit 1"}' },
      ])
    })

    it('sends a denied call as one error object, never wrapped twice', async () => {
      const endpoint = await startServer(sse(chunk({ content: 'ok' })))
      await collect(
        providerFor(endpoint.baseUrl),
        requestWith([
          { role: 'assistant', text: '', toolCalls: [{ id: 'w', name: 'write_file', args: { path: 'a' } }] },
          { role: 'tool', toolCallId: 'w', name: 'write_file', result: { error: 'Permission denied.' }, isError: true },
        ]),
      )
      const messages = endpoint.received[0]?.body['messages'] as ReadonlyArray<Record<string, unknown>>
      expect(messages[2]).toEqual({ role: 'tool', tool_call_id: 'w', content: '{"error":"Permission denied."}' })
    })

    it('fails with bad_response when the arguments are not JSON, without quoting them', async () => {
      const { baseUrl } = await startServer(
        sse(
          chunk({
            tool_calls: [
              { index: 0, id: 'c', type: 'function', function: { name: 'x', arguments: `{"a": "${SENTINEL}` } },
            ],
          }),
        ),
      )
      const error = await rejectionOf(collect(providerFor(baseUrl), requestWith([{ role: 'user', text: SENTINEL }])))
      expect(error.code).toBe('bad_response')
      expect(error.message).not.toContain(SENTINEL)
    })
  })

  describe('when the endpoint answers HTTP 500', () => {
    it('fails with http_error 500 (not a timeout) and no body or prompt in the message', async () => {
      const endpoint = await startServer((_req, res) => {
        res.writeHead(500, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ error: { message: `upstream exploded on ${SENTINEL}` } }))
      })
      // An hour of timeout: the error below can only come from the answer, never from waiting.
      const error = await rejectionOf(
        collect(
          providerFor(endpoint.baseUrl, { timeoutMs: 3_600_000 }),
          requestWith([{ role: 'user', text: SENTINEL }]),
        ),
      )
      expect(error._tag).toBe('ProviderFailure')
      expect(error.code).toBe('http_error')
      expect(error.status).toBe(500)
      expect(error.message).toBe('The model endpoint answered HTTP 500.')
      expect(failureClassOfProviderFailure(error)).toBe('provider_http_error')
      expect(error.message).not.toContain(SENTINEL)
      // maxRetries 0: the failing request is sent exactly once.
      expect(endpoint.received).toHaveLength(1)
    })

    it('maps other statuses the same way', async () => {
      const { baseUrl } = await startServer((_req, res) => {
        res.writeHead(401, { 'content-type': 'application/json' })
        res.end('{"error":{"message":"bad key"}}')
      })
      const error = await rejectionOf(collect(providerFor(baseUrl), requestWith([{ role: 'user', text: 'hi' }])))
      expect([error.code, error.status, failureClassOfProviderFailure(error)]).toEqual([
        'http_error',
        401,
        'provider_auth_error',
      ])
      expect(error.message).not.toContain('bad key')
    })
  })

  describe('when the endpoint never answers', () => {
    it('fails with timeout after timeoutMs instead of hanging', async () => {
      const { baseUrl } = await startServer(silent)
      const error = await rejectionOf(
        collect(providerFor(baseUrl, { timeoutMs: 300 }), requestWith([{ role: 'user', text: SENTINEL }])),
      )
      expect(error.code).toBe('timeout')
      expect(failureClassOfProviderFailure(error)).toBe('provider_timeout')
      expect(error.message).not.toContain(SENTINEL)
    })

    it('fails with timeout when the stream stalls after its first chunk', async () => {
      const { baseUrl } = await startServer((_req, res) => {
        openSse(res)
        sendSse(res, chunk({ content: 'Hel' }))
      })
      const seen: Array<ProviderChunk> = []
      // The watchdog also covers the wait for the first chunk, so its timeout must outlast a round
      // trip on a loaded machine; the stall after that chunk then ends the stream at this timeout.
      const error = await rejectionOf(
        (async () => {
          for await (const c of providerFor(baseUrl, { timeoutMs: STALL_TIMEOUT_MS }).stream(requestWith([])))
            seen.push(c)
          return seen
        })(),
      )
      expect(error.code).toBe('timeout')
      // Before the failure that ends it, the stream gave only what the server sent.
      expect(seen.slice(0, -1)).toEqual([{ type: 'text_delta', text: 'Hel' }])
    })
  })

  describe('when the stream sends keep-alive comments while the model thinks', () => {
    it('counts any byte as the server being there, so it is not a stall', async () => {
      const { baseUrl } = await startServer((_req, res) => {
        openSse(res)
        let pings = 0
        const timer = setInterval(() => {
          pings += 1
          if (pings <= 20) {
            res.write(': keep-alive\n\n')
            return
          }
          clearInterval(timer)
          sendSse(res, chunk({ content: 'Thought it through.' }))
          sendSse(res, finishChunk())
          res.end('data: [DONE]\n\n')
        }, 100)
        res.on('close', () => clearInterval(timer))
      })
      // No chunk for two seconds, twice the timeout, but never a byte-less gap near the timeout.
      const chunks = await collect(
        providerFor(baseUrl, { timeoutMs: 1_000 }),
        requestWith([{ role: 'user', text: 'think' }]),
      )
      expect(chunks).toEqual([{ type: 'text_delta', text: 'Thought it through.' }])
    })
  })

  describe('when the caller aborts', () => {
    it('fails with aborted mid-stream rather than ending as if the answer were whole', async () => {
      const { baseUrl } = await startServer((_req, res) => {
        openSse(res)
        sendSse(res, chunk({ content: 'Hel' }))
      })
      const controller = new AbortController()
      const error = await rejectionOf(
        (async () => {
          const chunks: Array<ProviderChunk> = []
          for await (const c of providerFor(baseUrl).stream(requestWith([], controller.signal))) {
            chunks.push(c)
            if (c.type === 'text_delta') controller.abort()
          }
          return chunks
        })(),
      )
      expect(error.code).toBe('aborted')
    })

    it('fails with aborted before sending anything when already aborted', async () => {
      const endpoint = await startServer(sse(chunk({ content: 'x' })))
      const error = await rejectionOf(collect(providerFor(endpoint.baseUrl), requestWith([], AbortSignal.abort())))
      expect(error.code).toBe('aborted')
      expect(endpoint.received).toHaveLength(0)
    })
  })

  describe('when nothing listens at the address', () => {
    it('fails as unreachable', async () => {
      const { baseUrl } = await startServer(silent)
      const closing = server
      server = undefined
      await new Promise<void>((resolve) => closing?.close(() => resolve()))
      const error = await rejectionOf(collect(providerFor(baseUrl), requestWith([{ role: 'user', text: 'hi' }])))
      expect(error.code).toBe('unreachable')
      expect(failureClassOfProviderFailure(error)).toBe('provider_unreachable')
    })
  })

  describe('when the endpoint answers a streaming request with one JSON chat completion', () => {
    const completion = (message: Record<string, unknown>) => (_req: ReceivedRequest, res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(
        JSON.stringify({
          id: 'chatcmpl-1',
          object: 'chat.completion',
          created: 1_767_225_600,
          model: 'test-model',
          choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 },
        }),
      )
    }

    it('reads its text and its tool calls as if they had been streamed', async () => {
      const { baseUrl } = await startServer(
        completion({
          content: 'Listing.',
          tool_calls: [{ id: 'call_j', type: 'function', function: { name: 'list_dir', arguments: '{"path":"."}' } }],
        }),
      )
      const chunks = await collect(providerFor(baseUrl), requestWith([{ role: 'user', text: 'go' }]))
      expect(chunks).toEqual([
        { type: 'text_delta', text: 'Listing.' },
        { type: 'tool_call', id: 'call_j', name: 'list_dir', args: { path: '.' } },
        { type: 'usage', input: 7, output: 2 },
      ])
    })

    it('fails as a protocol error when the JSON is not a chat completion', async () => {
      const { baseUrl } = await startServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ answer: SENTINEL }))
      })
      const error = await rejectionOf(collect(providerFor(baseUrl), requestWith([{ role: 'user', text: 'go' }])))
      expect(failureClassOfProviderFailure(error)).toBe('provider_protocol_error')
      expect(error.message).not.toContain(SENTINEL)
    })
  })

  describe('when the stream is cut off', () => {
    it('fails as a protocol error when it closes cleanly without a finish reason', async () => {
      const { baseUrl } = await startServer((_req, res) => {
        openSse(res)
        sendSse(
          res,
          chunk({ tool_calls: [{ index: 0, id: 'c', type: 'function', function: { name: 'x', arguments: '{}' } }] }),
        )
        res.end()
      })
      const error = await rejectionOf(collect(providerFor(baseUrl), requestWith([{ role: 'user', text: 'go' }])))
      expect(failureClassOfProviderFailure(error)).toBe('provider_protocol_error')
    })

    it('fails as a lost connection when the socket breaks mid-answer', async () => {
      const { baseUrl } = await startServer((_req, res) => {
        openSse(res)
        sendSse(res, chunk({ content: 'Hel' }))
        setTimeout(() => res.socket?.destroy(), 50)
      })
      const error = await rejectionOf(collect(providerFor(baseUrl), requestWith([{ role: 'user', text: 'go' }])))
      expect(failureClassOfProviderFailure(error)).toBe('provider_connection_lost')
    })
  })

  describe('when the endpoint limits the rate (HTTP 429)', () => {
    const limited =
      (headers: Record<string, string>): Handler =>
      (_req, res) => {
        res.writeHead(429, { 'content-type': 'application/json', ...headers })
        res.end(JSON.stringify({ error: { message: `slow down ${SENTINEL}` } }))
      }

    it('fails with a sentence of its own, not the one of a 500, and carries Retry-After in seconds', async () => {
      const { baseUrl } = await startServer(limited({ 'retry-after': '7' }))
      const error = await rejectionOf(collect(providerFor(baseUrl), requestWith([{ role: 'user', text: SENTINEL }])))
      expect(error).toMatchObject({ code: 'http_error', status: 429, retryAfterMs: 7_000 })
      expect(error.message).toBe('The model endpoint is limiting the rate of requests (HTTP 429).')
      expect(error.message).not.toContain(SENTINEL)
      expect(isTransientFailure(error)).toBe(true)
    })

    it('reads a Retry-After given as an HTTP date', async () => {
      const at = new Date(Date.now() + 60_000).toUTCString()
      const { baseUrl } = await startServer(limited({ 'retry-after': at }))
      const error = await rejectionOf(collect(providerFor(baseUrl), requestWith([{ role: 'user', text: 'go' }])))
      // An HTTP date has whole seconds: the wait is within a second or two of the minute.
      expect(error.retryAfterMs).toBeGreaterThan(57_000)
      expect(error.retryAfterMs).toBeLessThanOrEqual(60_000)
    })

    it('has no retryAfterMs when the endpoint gives none', async () => {
      const { baseUrl } = await startServer(limited({}))
      const error = await rejectionOf(collect(providerFor(baseUrl), requestWith([{ role: 'user', text: 'go' }])))
      expect(error.status).toBe(429)
      expect(error).not.toHaveProperty('retryAfterMs')
    })
  })

  describe('when a streamed chunk is not JSON', () => {
    it('fails as a protocol error and writes nothing to stderr or the console, whatever OPENAI_LOG says', async () => {
      const { baseUrl } = await startServer((_req, res) => {
        openSse(res)
        sendSse(res, chunk({ content: 'Hel' }))
        res.write(`data: {"choices": [${SENTINEL}\n\n`)
        res.end('data: [DONE]\n\n')
      })
      const written: Array<string> = []
      const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((text) => {
        written.push(String(text))
        return true
      })
      const consoled = (['error', 'warn', 'info', 'debug', 'log'] as const).map((level) =>
        vi.spyOn(console, level).mockImplementation((...args: Array<unknown>) => {
          written.push(args.map(String).join(' '))
        }),
      )
      vi.stubEnv('OPENAI_LOG', 'debug')
      try {
        const error = await rejectionOf(collect(providerFor(baseUrl), requestWith([{ role: 'user', text: 'go' }])))
        expect(failureClassOfProviderFailure(error)).toBe('provider_protocol_error')
      } finally {
        vi.unstubAllEnvs()
        stderr.mockRestore()
        for (const spy of consoled) spy.mockRestore()
      }
      expect(written).toEqual([])
    })
  })

  describe('when the stream carries an event of another API or an error object', () => {
    const quietly = async (run: () => Promise<void>): Promise<ReadonlyArray<string>> => {
      const written: Array<string> = []
      const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((text) => {
        written.push(String(text))
        return true
      })
      const consoled = (['error', 'warn', 'info', 'debug', 'log'] as const).map((level) =>
        vi.spyOn(console, level).mockImplementation((...args: Array<unknown>) => {
          written.push(args.map(String).join(' '))
        }),
      )
      try {
        await run()
      } finally {
        stderr.mockRestore()
        for (const spy of consoled) spy.mockRestore()
      }
      return written
    }

    it('fails a named event whose data is not JSON as a protocol error, printing nothing', async () => {
      const { baseUrl } = await startServer((_req, res) => {
        openSse(res)
        res.write(`event: thread.message.delta\ndata: {"delta": ${SENTINEL}\n\n`)
        res.end('data: [DONE]\n\n')
      })
      const written = await quietly(async () => {
        const error = await rejectionOf(collect(providerFor(baseUrl), requestWith([{ role: 'user', text: 'go' }])))
        expect(failureClassOfProviderFailure(error)).toBe('provider_protocol_error')
      })
      expect(written).toEqual([])
    })

    it('fails an error object in the stream as the endpoint’s error, without quoting it', async () => {
      const { baseUrl } = await startServer((_req, res) => {
        openSse(res)
        sendSse(res, chunk({ content: 'Hel' }))
        sendSse(res, { error: { message: `overloaded ${SENTINEL}` } })
        res.end('data: [DONE]\n\n')
      })
      const error = await rejectionOf(collect(providerFor(baseUrl), requestWith([{ role: 'user', text: 'go' }])))
      expect(error).toMatchObject({
        code: 'stream_error',
        message: 'The model endpoint reported an error in the stream.',
      })
      expect(JSON.stringify(error)).not.toContain(SENTINEL)
    })
  })

  describe('its retry policy', () => {
    it('is DEFAULT_RETRY_POLICY unless one is given', async () => {
      const { baseUrl } = await startServer(sse(chunk({ content: 'ok' })))
      expect(providerFor(baseUrl).retry).toEqual(DEFAULT_RETRY_POLICY)
      const retry = { maxAttempts: 2, baseDelayMs: 5, maxDelayMs: 5, maxWaitMs: 10 }
      expect(makeOpenAICompatibleProvider({ baseUrl, model: 'm', retry }).retry).toEqual(retry)
    })
  })

  describe('when an api key is given', () => {
    it('sends it as a bearer token and never puts it or the prompt in an error', async () => {
      const endpoint = await startServer((_req, res) => {
        res.writeHead(500)
        res.end(SENTINEL)
      })
      const error = await rejectionOf(
        collect(
          providerFor(endpoint.baseUrl, { apiKey: 'sk-test-key-123' }),
          requestWith([{ role: 'user', text: `do ${SENTINEL}` }]),
        ),
      )
      expect(endpoint.received[0]?.headers['authorization']).toBe('Bearer sk-test-key-123')
      expect(error.message).not.toContain(SENTINEL)
      expect(error.message).not.toContain('sk-test-key-123')
      // The failure is a plain value: nothing of it, whole, holds the prompt or the key.
      expect(JSON.stringify(error)).not.toContain(SENTINEL)
      expect(JSON.stringify(error)).not.toContain('sk-test-key-123')
    })
  })

  describe('when a fetch is injected', () => {
    it('sends the request through it', async () => {
      const { baseUrl } = await startServer(sse(chunk({ content: 'ok' })))
      let calls = 0
      const counting: typeof fetch = (input, init) => {
        calls += 1
        return fetch(input, init)
      }
      const provider = makeOpenAICompatibleProvider({ baseUrl, model: 'test-model', fetch: counting })
      expect(await collect(provider, requestWith([]))).toEqual([{ type: 'text_delta', text: 'ok' }])
      expect(calls).toBe(1)
      expect([provider.providerId, provider.modelId, provider.baseUrl]).toEqual([
        'openai-compatible',
        'test-model',
        baseUrl,
      ])
    })
  })
})
