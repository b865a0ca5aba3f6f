/**
 * `sessions:resolveCall` as `registerSessionIpc` registers it, over fake services: only with the
 * resume flag; it carries exactly a session, an operation, a verdict and an optional output, checks
 * each before the services see it, and names the actor from the transport, never from the caller.
 */
import { describe, expect, it } from 'vitest'
import { Channels, HostInputError, type SessionServices, registerSessionIpc } from '../src/index.js'

type Handler = (event: unknown, ...args: Array<unknown>) => unknown

const registered = (safeResume: boolean, transport: 'electron' | 'http') => {
  const handlers = new Map<string, Handler>()
  const calls: Array<ReadonlyArray<unknown>> = []
  const services = {
    safeResume,
    resolveCall: (...args: ReadonlyArray<unknown>) => {
      calls.push(args)
      return Promise.resolve({ disposition: 'resolved', runId: 'run-2' })
    },
  } as unknown as SessionServices
  registerSessionIpc({ handle: (channel, listener) => void handlers.set(channel, listener) }, services, transport)
  return { handlers, calls }
}

describe('sessions:resolveCall', () => {
  it('exists only with the resume flag', () => {
    expect(registered(false, 'electron').handlers.has(Channels.resolveCall)).toBe(false)
    expect(registered(true, 'electron').handlers.has(Channels.resolveCall)).toBe(true)
  })

  it.for([
    ['electron', 'desktop'],
    ['http', 'browser'],
  ] as const)('over %s passes the four values and names the actor %s', async ([transport, actor]) => {
    const { handlers, calls } = registered(true, transport)
    const handle = handlers.get(Channels.resolveCall) as Handler
    await handle(null, 's-1', 'op-1', 'applied')
    await handle(null, 's-1', 'op-1', 'failed', 'exit 1')
    // JSON carries an absent output as null.
    await handle(null, 's-1', 'op-1', 'not_applied', null)
    expect(calls).toEqual([
      ['s-1', 'op-1', 'applied', undefined, actor],
      ['s-1', 'op-1', 'failed', 'exit 1', actor],
      ['s-1', 'op-1', 'not_applied', undefined, actor],
    ])
  })

  it.for([
    [['s-1', 'op-1']],
    [['s-1', 'op-1', 'applied', 'text', 'desktop']],
    [['s-1', 'op-1', 'maybe']],
    [['s-1', 7, 'applied']],
    [['s-1', 'op-1', 'applied', { text: 'x' }]],
  ] as const)('refuses %j as bad input before the services see it', ([args]) => {
    const { handlers, calls } = registered(true, 'http')
    const handle = handlers.get(Channels.resolveCall) as Handler
    expect(() => handle(null, ...args)).toThrow(HostInputError)
    expect(calls).toEqual([])
  })
})
