/**
 * The IPC surface of the main process, against anything shaped like Electron's `ipcMain` (the real
 * one in `electron/main.ts`, a fake in tests, the HTTP bridge of `maka ui`). Every argument is
 * checked here: the renderer names a session, a prompt or a permission answer, never a fact the
 * planner relies on. `sessions:resumePlan`, `sessions:resumeLatest` and `sessions:resolveCall` exist
 * only with the resume flag; `sessions:resolveCall` carries a session, an operation, a verdict and an
 * optional output text, and the host adds who asked (`desktop` over Electron, `browser` over HTTP).
 */
import { isOperatorVerdict } from '@maka/events'
import { Channels, type HostInfo } from '../hostContract/api.js'
import { HostInputError } from './HostInputError.js'
import type { SessionServices } from './sessionServices.js'

/**
 * The part of Electron's `ipcMain` the host uses.
 * @category models
 */
export interface IpcMainLike {
  handle(channel: string, listener: (event: unknown, ...args: Array<unknown>) => unknown): void
}

const arity = (channel: string, args: ReadonlyArray<unknown>, count: number, optional = 0): void => {
  if (args.length < count || args.length > count + optional) {
    const told = optional === 0 ? `${count}` : `${count} to ${count + optional}`
    throw new HostInputError('bad_input', `${channel} takes ${told} argument${count + optional === 1 ? '' : 's'}.`)
  }
}

const text = (value: unknown, what: string): string => {
  if (typeof value !== 'string') throw new HostInputError('bad_input', `${what} must be text.`)
  return value
}

/**
 * Registers the session handlers; returns the channels registered.
 * @category constructors
 */
export const registerSessionIpc = (
  ipc: IpcMainLike,
  services: SessionServices,
  transport: HostInfo['transport'],
): ReadonlyArray<string> => {
  const channels: Array<string> = []
  const on = (channel: string, count: number, run: (args: ReadonlyArray<unknown>) => unknown, optional = 0): void => {
    channels.push(channel)
    ipc.handle(channel, (_event, ...args) => {
      arity(channel, args, count, optional)
      return run(args)
    })
  }
  on(Channels.info, 0, (): HostInfo => ({
    safeResume: services.safeResume,
    transport,
    autoContinued: services.autoContinued(),
  }))
  on(Channels.list, 0, () => services.list())
  on(Channels.get, 1, ([sessionId]) => services.get(text(sessionId, 'The session id')))
  on(Channels.send, 2, ([sessionId, prompt]) =>
    services.send(text(sessionId, 'The session id'), text(prompt, 'The prompt')),
  )
  on(Channels.answerPermission, 2, ([requestId, decision]) => {
    const answer = text(decision, 'The decision')
    if (answer !== 'allow' && answer !== 'deny') throw new HostInputError('bad_input', 'Answer allow or deny.')
    return services.answerPermission(text(requestId, 'The request id'), answer)
  })
  if (services.safeResume) {
    on(Channels.resumePlan, 1, ([sessionId]) => services.resumePlan(text(sessionId, 'The session id')))
    on(Channels.resumeLatest, 1, ([sessionId]) => services.resumeLatest(text(sessionId, 'The session id')))
    on(
      Channels.resolveCall,
      3,
      ([sessionId, operationId, verdict, output]) => {
        if (!isOperatorVerdict(verdict)) throw new HostInputError('bad_input', 'Answer applied, not_applied or failed.')
        return services.resolveCall(
          text(sessionId, 'The session id'),
          text(operationId, 'The operation id'),
          verdict,
          // JSON carries an absent output as null.
          output === undefined || output === null ? undefined : text(output, 'The output'),
          transport === 'electron' ? 'desktop' : 'browser',
        )
      },
      1,
    )
  }
  return channels
}
