/**
 * `maka ui`'s server: the built renderer and the main-process handlers over loopback HTTP, for
 * machines without Electron. `POST /api/invoke/<channel>` calls the same handlers
 * `registerSessionIpc` gives Electron's `ipcMain`; `GET /api/events` streams host messages as
 * server-sent events. Safety of the bridge: it binds 127.0.0.1 only; every API request carries the
 * per-run token (header `x-maka-token`, or `?token=` for the event stream); the `Host` header must
 * name this loopback origin (DNS rebinding) and an `Origin`, when sent, must be this origin
 * (cross-site requests). node:http is enough for two routes and static files. When the last page's
 * event stream closes (its tab closed), the waits that pages asked for stop; nothing is written.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { extname, join, normalize, sep } from 'node:path'
import type { HostErrorBody, HostMessage } from '../hostContract/api.js'
import { HostInputError } from '../services/HostInputError.js'
import { type IpcMainLike, registerSessionIpc } from '../services/registerSessionIpc.js'
import type { SessionServices } from '../services/sessionServices.js'

/**
 * What the server is given.
 * @category models
 */
export interface UiServerOptions {
  /** Built over an `emit` that `messages.publish` feeds (see `makeMessageHub`). */
  readonly services: SessionServices
  readonly messages: MessageHub
  /** The built renderer (`dist/renderer` of this package; `rendererDir()`). */
  readonly rendererDir: string
  /** 0 (default) picks a free port. */
  readonly port?: number
  /** Fixed only by tests; otherwise 32 random bytes per run. */
  readonly token?: string
  /** Told when the last page closed and the waits pages asked for stopped (how many; only when some did). */
  readonly onWaitsStopped?: (count: number) => void
}

/**
 * A running server.
 * @category models
 */
export interface UiServer {
  /** The URL to open, token included. */
  readonly url: string
  readonly origin: string
  readonly port: number
  readonly token: string
  close(): Promise<void>
}

/**
 * Fans host messages out to the connected event streams.
 * @category models
 */
export interface MessageHub {
  publish(message: HostMessage): void
  subscribe(listener: (message: HostMessage) => void): () => void
}

/**
 * A message hub.
 * @category constructors
 */
export const makeMessageHub = (): MessageHub => {
  const listeners = new Set<(message: HostMessage) => void>()
  return {
    publish: (message) => {
      for (const listener of listeners) listener(message)
    },
    subscribe: (listener) => {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
  }
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
}

/**
 * The Content-Security-Policy of the renderer (the same as its `<meta>` in Electron).
 * @category models
 */
export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

const MAX_BODY_BYTES = 1_000_000

const refuse = (res: ServerResponse, status: number, body: HostErrorBody): void => {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' })
  res.end(JSON.stringify(body))
}

const readBody = (req: IncomingMessage): Promise<string | null> =>
  new Promise((done, fail) => {
    const chunks: Array<Buffer> = []
    let size = 0
    req.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_BODY_BYTES) {
        done(null)
        req.destroy()
        return
      }
      chunks.push(chunk)
    })
    req.on('end', () => done(Buffer.concat(chunks).toString('utf8')))
    req.on('error', fail)
  })

const sameToken = (given: string | null | undefined, token: string): boolean => {
  if (typeof given !== 'string') return false
  const a = Buffer.from(given)
  const b = Buffer.from(token)
  return a.length === b.length && timingSafeEqual(a, b)
}

/**
 * Starts the server on 127.0.0.1.
 * @category constructors
 */
export const serveUi = async (options: UiServerOptions): Promise<UiServer> => {
  const token = options.token ?? randomBytes(32).toString('base64url')
  const handlers = new Map<string, (event: unknown, ...args: Array<unknown>) => unknown>()
  const ipc: IpcMainLike = { handle: (channel, listener) => void handlers.set(channel, listener) }
  registerSessionIpc(ipc, options.services, 'http')
  const root = normalize(options.rendererDir)
  let origin = ''
  let hostPort = ''

  const serveStatic = async (pathname: string, res: ServerResponse): Promise<void> => {
    const relative = pathname === '/' ? 'index.html' : decodeURIComponent(pathname.slice(1))
    const file = normalize(join(root, relative))
    if (!file.startsWith(root + sep)) return refuse(res, 404, { code: 'not_found', message: 'Not found.' })
    const info = await stat(file).catch(() => null)
    if (info === null || !info.isFile()) return refuse(res, 404, { code: 'not_found', message: 'Not found.' })
    res.writeHead(200, {
      'content-type': CONTENT_TYPES[extname(file)] ?? 'application/octet-stream',
      'content-length': info.size,
      'content-security-policy': CONTENT_SECURITY_POLICY,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-store',
    })
    createReadStream(file).pipe(res)
  }

  const invoke = async (channel: string, req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const handler = handlers.get(channel)
    if (handler === undefined) return refuse(res, 404, { code: 'unknown_channel', message: `No channel ${channel}.` })
    if (!(req.headers['content-type'] ?? '').startsWith('application/json')) {
      return refuse(res, 415, { code: 'bad_input', message: 'Send application/json.' })
    }
    const body = await readBody(req)
    if (body === null) return refuse(res, 413, { code: 'bad_input', message: 'The request is too large.' })
    let args: unknown
    try {
      args = (JSON.parse(body) as { args?: unknown }).args
    } catch {
      return refuse(res, 400, { code: 'bad_input', message: 'The body is not JSON.' })
    }
    if (!Array.isArray(args)) return refuse(res, 400, { code: 'bad_input', message: 'The body needs args: [...].' })
    try {
      const value: unknown = await handler(null, ...(args as Array<unknown>))
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' })
      res.end(JSON.stringify({ value: value ?? null }))
    } catch (error) {
      if (error instanceof HostInputError) return refuse(res, 400, { code: error.code, message: error.message })
      refuse(res, 500, { code: 'host_failed', message: error instanceof Error ? error.message : String(error) })
    }
  }

  // The pages connected now: when the last one goes (its tab closed), the waits pages asked for stop.
  let pages = 0
  const events = (req: IncomingMessage, res: ServerResponse): void => {
    pages += 1
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-store',
      connection: 'keep-alive',
    })
    res.write(': connected\n\n')
    const unsubscribe = options.messages.subscribe((message) => {
      res.write(`data: ${JSON.stringify(message)}\n\n`)
    })
    req.on('close', () => {
      unsubscribe()
      pages -= 1
      if (pages > 0) return
      const stopped = options.services.stopWaiting()
      if (stopped > 0) options.onWaitsStopped?.(stopped)
    })
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://placeholder')
    const host = req.headers.host
    if (host !== hostPort && host !== `localhost:${hostPort.split(':')[1] ?? ''}`) {
      return refuse(res, 421, { code: 'host_refused', message: 'This server answers only its own loopback address.' })
    }
    const requestOrigin = req.headers.origin
    if (requestOrigin !== undefined && requestOrigin !== origin && requestOrigin !== `http://${host}`) {
      return refuse(res, 403, { code: 'origin_refused', message: 'Cross-site requests are refused.' })
    }
    if (!url.pathname.startsWith('/api/')) {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        return refuse(res, 405, { code: 'bad_input', message: 'Only GET here.' })
      }
      serveStatic(url.pathname, res).catch(() => res.destroy())
      return
    }
    const given = req.headers['x-maka-token']
    if (!sameToken(Array.isArray(given) ? given[0] : (given ?? url.searchParams.get('token')), token)) {
      return refuse(res, 401, { code: 'token_refused', message: 'The request lacks this run’s token.' })
    }
    if (req.method === 'GET' && url.pathname === '/api/events') return events(req, res)
    const invoked = /^\/api\/invoke\/([a-zA-Z:]+)$/.exec(url.pathname)
    if (req.method === 'POST' && invoked !== null) {
      invoke(invoked[1] ?? '', req, res).catch(() => res.destroy())
      return
    }
    refuse(res, 404, { code: 'not_found', message: 'Not found.' })
  })

  await new Promise<void>((done, fail) => {
    server.once('error', fail)
    server.listen(options.port ?? 0, '127.0.0.1', () => done())
  })
  const port = (server.address() as AddressInfo).port
  hostPort = `127.0.0.1:${port}`
  origin = `http://${hostPort}`
  return {
    url: `${origin}/?token=${token}`,
    origin,
    port,
    token,
    close: () =>
      new Promise((done) => {
        server.closeAllConnections()
        server.close(() => done())
      }),
  }
}
