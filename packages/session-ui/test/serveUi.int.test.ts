/**
 * The loopback server in-process, over real session services on a temp data dir and the built
 * renderer: the per-run token, the Host and Origin checks, what a bad request gets, the static files
 * with their Content-Security-Policy, and host messages on the event stream. (`maka ui` in real
 * headless Chromium is `apps/cli/test/ui.e2e.test.ts`.)
 */
import { request } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  CONTENT_SECURITY_POLICY,
  type HostMessage,
  type UiServer,
  makeMessageHub,
  makeSessionServices,
  rendererDir,
  serveUi,
} from '../src/index.js'
import { removeScratch, scratch } from './support/scratch.js'

interface Answer {
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly body: string
}

let server: UiServer
const messages = makeMessageHub()

const raw = (
  path: string,
  headers: Record<string, string> = {},
  method = 'GET',
  body?: string | Buffer,
): Promise<Answer> =>
  new Promise((done, fail) => {
    const req = request(
      { host: '127.0.0.1', port: server.port, path, method, headers: { host: `127.0.0.1:${server.port}`, ...headers } },
      (res) => {
        const chunks: Array<Buffer> = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('end', () =>
          done({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
        )
        res.on('error', fail)
      },
    )
    req.on('error', fail)
    req.end(body)
  })

const invoke = (channel: string, body: string, headers: Record<string, string> = {}) =>
  raw(
    `/api/invoke/${channel}`,
    { 'content-type': 'application/json', 'x-maka-token': server.token, ...headers },
    'POST',
    body,
  )

beforeAll(async () => {
  const { dataDir } = await scratch()
  const services = makeSessionServices({ dataDir, safeResume: false, emit: (m) => messages.publish(m) })
  server = await serveUi({ services, messages, rendererDir: rendererDir() })
})

afterAll(async () => {
  await server.close()
  await removeScratch()
})

describe('serveUi', () => {
  describe('when a request lacks the token or comes from elsewhere', () => {
    it('refuses it: 401 without the token, 403 for a foreign Origin, 421 for a foreign Host', async () => {
      expect(server.url).toBe(`http://127.0.0.1:${server.port}/?token=${server.token}`)
      expect(Buffer.from(server.token, 'base64url')).toHaveLength(32)
      const missing = await invoke('sessions:list', '{"args":[]}', { 'x-maka-token': '' })
      expect([missing.status, JSON.parse(missing.body)]).toMatchObject([401, { code: 'token_refused' }])
      const wrong = await raw('/api/events?token=not-it')
      expect(wrong.status).toBe(401)
      const foreign = await invoke('sessions:list', '{"args":[]}', { origin: 'http://evil.example' })
      expect([foreign.status, JSON.parse(foreign.body)]).toMatchObject([403, { code: 'origin_refused' }])
      const rebound = await raw('/', { host: `evil.example:${server.port}` })
      expect([rebound.status, JSON.parse(rebound.body)]).toMatchObject([421, { code: 'host_refused' }])
      const allowed = await invoke('sessions:list', '{"args":[]}', { origin: server.origin })
      expect([allowed.status, JSON.parse(allowed.body)]).toEqual([200, { value: [] }])
    })
  })

  describe('when a request with the token is malformed', () => {
    it('answers with a stable code and one sentence, and drops a body over 1 MB', async () => {
      const cases: ReadonlyArray<readonly [Promise<Answer>, number, string]> = [
        [invoke('sessions:resumeLatest', '{"args":["s"]}'), 404, 'unknown_channel'],
        [invoke('sessions:list', 'not json'), 400, 'bad_input'],
        [invoke('sessions:list', '{"args":{}}'), 400, 'bad_input'],
        [invoke('sessions:get', '{"args":[]}'), 400, 'bad_input'],
        [invoke('sessions:list', '{"args":[]}', { 'content-type': 'text/plain' }), 415, 'bad_input'],
      ]
      for (const [answer, status, code] of cases) {
        const { status: got, body } = await answer
        expect([got, JSON.parse(body)], code).toMatchObject([status, { code }])
        expect(typeof (JSON.parse(body) as { message: unknown }).message).toBe('string')
      }
      // Over 1 MB the server stops reading and drops the connection: the request is never handled.
      const oversized = await invoke('sessions:list', Buffer.alloc(1_000_001, 'x').toString()).then(
        (answer) => answer.status,
        (error: NodeJS.ErrnoException) => error.code,
      )
      expect([413, 'ECONNRESET', 'EPIPE']).toContain(oversized)
    })
  })

  describe('when the renderer is fetched', () => {
    it('serves the built files with the Content-Security-Policy, and nothing outside them', async () => {
      const index = await raw('/')
      expect(index.status).toBe(200)
      expect(index.headers['content-type']).toBe('text/html; charset=utf-8')
      expect(index.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY)
      expect(index.headers['x-content-type-options']).toBe('nosniff')
      expect(index.body).toContain('<div id="root">')
      const script = /src="\.\/(assets\/[^"]+\.js)"/.exec(index.body)?.[1]
      expect(script).toBeDefined()
      expect((await raw(`/${script ?? ''}`)).headers['content-type']).toBe('text/javascript; charset=utf-8')
      expect((await raw('/%2e%2e/package.json')).status).toBe(404)
      expect((await raw('/missing.js')).status).toBe(404)
      expect((await raw('/', {}, 'POST')).status).toBe(405)
    })
  })

  describe('when a host message is published', () => {
    it('streams it to a client holding the token as a server-sent event', async () => {
      const message: HostMessage = { type: 'autoContinued', sessionId: 's-1', runId: 'r-1' }
      const received = await new Promise<string>((done, fail) => {
        const req = request(
          {
            host: '127.0.0.1',
            port: server.port,
            path: `/api/events?token=${encodeURIComponent(server.token)}`,
            headers: { host: `127.0.0.1:${server.port}` },
          },
          (res) => {
            expect(res.headers['content-type']).toBe('text/event-stream')
            let text = ''
            res.setEncoding('utf8')
            res.on('data', (chunk: string) => {
              text += chunk
              if (text.includes(': connected')) messages.publish(message)
              if (text.includes('data: ')) {
                req.destroy()
                done(text)
              }
            })
          },
        )
        req.on('error', (error) => ((error as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : fail(error)))
        req.end()
      })
      expect(received).toContain(`data: ${JSON.stringify(message)}\n\n`)
    })
  })
})
