/**
 * Test support: a loopback OpenAI-compatible chat endpoint (127.0.0.1, a random port, node:http).
 * Each request takes the next scripted answer — streamed text, a streamed tool call, a plain-JSON
 * completion, an HTTP error (with a `Retry-After` if given), a dropped connection, a stall or a
 * stream with a chunk that is not JSON — and every request body is kept, so a test can assert what
 * the model was sent.
 */
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/** One answer of the double. An HTTP error body echoes a marker, as real servers echo prompts. */
export type Answer =
  | { readonly text: string }
  | { readonly toolCall: { readonly id: string; readonly name: string; readonly args: string } }
  | { readonly json: { readonly text?: string; readonly toolCall?: { readonly name: string; readonly args: string } } }
  | { readonly status: number; readonly retryAfter?: string }
  | { readonly drop: true }
  | { readonly stall: true }
  | { readonly malformed: true }

/** The marker an HTTP error body carries; it must never reach a ledger or a terminal. */
export const ECHOED_BODY = 'ECHOED-BODY-5e1d'

export interface EndpointDouble {
  readonly baseUrl: string
  /** Every request body received, in order. */
  readonly requests: Array<Record<string, unknown>>
  close(): Promise<void>
}

const base = { id: 'chatcmpl-d', object: 'chat.completion.chunk', created: 1_767_225_600, model: 'm' }
const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
  ...base,
  choices: [{ index: 0, delta, finish_reason: finish }],
})

const sse = (res: ServerResponse, payloads: ReadonlyArray<unknown>, end = true): void => {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
  for (const payload of payloads) res.write(`data: ${JSON.stringify(payload)}\n\n`)
  if (end) res.end('data: [DONE]\n\n')
}

const answer = (res: ServerResponse, a: Answer): void => {
  if ('text' in a) {
    const half = Math.ceil(a.text.length / 2)
    sse(res, [
      chunk({ role: 'assistant', content: a.text.slice(0, half) }),
      chunk({ content: a.text.slice(half) }),
      chunk({}, 'stop'),
    ])
  } else if ('toolCall' in a) {
    const { id, name, args } = a.toolCall
    const cut = Math.ceil(args.length / 2)
    sse(res, [
      chunk({ tool_calls: [{ index: 0, id, type: 'function', function: { name, arguments: args.slice(0, cut) } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(cut) } }] }),
      chunk({}, 'tool_calls'),
    ])
  } else if ('json' in a) {
    const call = a.json.toolCall
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(
      JSON.stringify({
        ...base,
        object: 'chat.completion',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: a.json.text ?? null,
              ...(call === undefined
                ? {}
                : {
                    tool_calls: [
                      { id: 'call-json', type: 'function', function: { name: call.name, arguments: call.args } },
                    ],
                  }),
            },
            finish_reason: call === undefined ? 'stop' : 'tool_calls',
          },
        ],
      }),
    )
  } else if ('status' in a) {
    res.writeHead(a.status, {
      'content-type': 'application/json',
      ...(a.retryAfter === undefined ? {} : { 'retry-after': a.retryAfter }),
    })
    res.end(JSON.stringify({ error: { message: `rejected: ${ECHOED_BODY}` } }))
  } else if ('drop' in a) {
    sse(res, [chunk({ role: 'assistant', content: 'Half an ans' })], false)
    setTimeout(() => res.socket?.destroy(), 50)
  } else if ('malformed' in a) {
    // A chunk that is not JSON, echoing the marker as a broken proxy would echo the prompt.
    sse(res, [chunk({ role: 'assistant', content: 'Hal' })], false)
    res.write(`data: {"choices": [${ECHOED_BODY}\n\n`)
    res.end('data: [DONE]\n\n')
  } else {
    sse(res, [chunk({ role: 'assistant', content: 'Thinking' })], false)
  }
}

/** Starts the double; answers are used in order, then every further request gets the text "ok". */
export const startEndpointDouble = async (answers: ReadonlyArray<Answer>): Promise<EndpointDouble> => {
  const requests: Array<Record<string, unknown>> = []
  const server = createServer((req, res) => {
    const parts: Array<Buffer> = []
    req.on('data', (part: Buffer) => parts.push(part))
    req.on('end', () => {
      requests.push(JSON.parse(Buffer.concat(parts).toString('utf8')) as Record<string, unknown>)
      answer(res, answers[requests.length - 1] ?? { text: 'ok' })
    })
  })
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready))
  const { port } = server.address() as AddressInfo
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: async () => {
      // Stalled answers keep sockets open; close them so `close` can finish.
      server.closeAllConnections()
      await new Promise<void>((done) => server.close(() => done()))
    },
  }
}
