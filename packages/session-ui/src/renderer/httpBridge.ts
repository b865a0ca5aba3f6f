/**
 * `window.maka` for a browser tab opened by `maka ui`: the same interface as the Electron preload,
 * over `POST /api/invoke/<channel>` and a server-sent event stream. The per-run token comes from
 * the URL `maka ui` printed; the server refuses any request without it.
 */
import {
  Channels,
  type HostErrorBody,
  type HostInfo,
  type HostMessage,
  type MakaApi,
  type ResumeProgress,
} from '../hostContract/api.js'

/**
 * A refusal from the host, with its stable code.
 * @category errors
 */
export class HostError extends Error {
  override readonly name = 'HostError'
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

const invoker =
  (token: string) =>
  async <A>(channel: string, ...args: ReadonlyArray<unknown>): Promise<A> => {
    const response = await fetch(`/api/invoke/${channel}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-maka-token': token },
      body: JSON.stringify({ args }),
    })
    const body = (await response.json()) as { value: A } | HostErrorBody
    if (!response.ok || !('value' in body)) {
      const refusal = body as HostErrorBody
      throw new HostError(refusal.code, refusal.message)
    }
    return body.value
  }

/**
 * Connects to the host that served this page; Left-ish: throws a HostError without a token.
 * @category constructors
 */
export const connectHttp = async (location: Pick<Location, 'search'>): Promise<MakaApi> => {
  const token = new URLSearchParams(location.search).get('token')
  if (token === null || token === '') {
    throw new HostError('token_missing', 'Open the address maka ui printed: it carries the token of this run.')
  }
  const call = invoker(token)
  const info = await call<HostInfo>(Channels.info)
  const listeners = new Set<(message: HostMessage) => void>()
  const progressListeners = new Set<(progress: ResumeProgress) => void>()
  const stream = new EventSource(`/api/events?token=${encodeURIComponent(token)}`)
  // One event stream carries both: a resume's progress goes to its own listeners, as Electron's
  // separate channel does.
  stream.onmessage = (event: MessageEvent<string>) => {
    const message = JSON.parse(event.data) as HostMessage
    if (message.type === 'resumeProgress') for (const listener of progressListeners) listener(message)
    else for (const listener of listeners) listener(message)
  }
  const sessions: MakaApi['sessions'] = {
    list: () => call(Channels.list),
    get: (sessionId) => call(Channels.get, sessionId),
    send: (sessionId, prompt) => call(Channels.send, sessionId, prompt),
  }
  return {
    info: () => Promise.resolve(info),
    sessions: info.safeResume
      ? {
          ...sessions,
          resumePlan: (sessionId) => call(Channels.resumePlan, sessionId),
          resumeLatest: (sessionId) => call(Channels.resumeLatest, sessionId),
          // Only these four values cross: the host adds who asked.
          resolveCall: (sessionId, operationId, verdict, output) =>
            call(Channels.resolveCall, sessionId, operationId, verdict, ...(output === undefined ? [] : [output])),
          onResumeProgress: (listener) => {
            progressListeners.add(listener)
            return () => progressListeners.delete(listener)
          },
        }
      : sessions,
    permissions: { answer: (requestId, decision) => call(Channels.answerPermission, requestId, decision) },
    onMessage: (listener) => {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
  }
}
