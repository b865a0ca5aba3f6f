/**
 * The built preload, run as a sandboxed preload runs (a `require` that knows `electron` only),
 * against a fake `contextBridge`/`ipcRenderer`: it exposes `window.maka` on exactly the main
 * process's channels, and `resumeLatest` only when the main process passed the flag.
 */
import { readFile } from 'node:fs/promises'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import { Channels, MESSAGE_CHANNEL, RESUME_PROGRESS_CHANNEL, type MakaApi } from '@maka/session-ui'

const PRELOAD = new URL('../dist/electron/preload.cjs', import.meta.url)

const loadPreload = async (argv: ReadonlyArray<string>) => {
  const source = await readFile(PRELOAD, 'utf8')
  const exposed = new Map<string, unknown>()
  const invoked: Array<ReadonlyArray<unknown>> = []
  const subscribed: Array<string> = []
  const electron = {
    contextBridge: { exposeInMainWorld: (key: string, api: unknown) => exposed.set(key, api) },
    ipcRenderer: {
      invoke: (...args: ReadonlyArray<unknown>) => {
        invoked.push(args)
        return Promise.resolve(null)
      },
      on: (channel: string) => subscribed.push(channel),
      removeListener: () => {},
    },
  }
  const module = { exports: {} }
  runInNewContext(source, {
    module,
    exports: module.exports,
    process: { argv },
    require: (name: string) => {
      if (name !== 'electron') throw new Error(`a sandboxed preload cannot require ${name}`)
      return electron
    },
  })
  return { maka: exposed.get('maka') as MakaApi, exposed, invoked, subscribed }
}

describe('the preload', () => {
  it('exposes window.maka only, over the channels the main process registers', async () => {
    const { maka, exposed, invoked, subscribed } = await loadPreload(['electron', '--maka-safe-resume=1'])
    expect([...exposed.keys()]).toEqual(['maka'])
    await maka.info()
    await maka.sessions.list()
    await maka.sessions.get('s-1')
    await maka.sessions.send('s-1', 'hi')
    await maka.sessions.resumePlan?.('s-1')
    await maka.sessions.resumeLatest?.('s-1')
    await maka.sessions.resolveCall?.('s-1', 'op-1', 'applied')
    await maka.sessions.resolveCall?.('s-1', 'op-1', 'failed', 'exit 1')
    await maka.permissions.answer('q1', 'allow')
    maka.onMessage(() => {})
    maka.sessions.onResumeProgress?.(() => {})
    expect(invoked).toEqual([
      [Channels.info],
      [Channels.list],
      [Channels.get, 's-1'],
      [Channels.send, 's-1', 'hi'],
      [Channels.resumePlan, 's-1'],
      [Channels.resumeLatest, 's-1'],
      [Channels.resolveCall, 's-1', 'op-1', 'applied'],
      [Channels.resolveCall, 's-1', 'op-1', 'failed', 'exit 1'],
      [Channels.answerPermission, 'q1', 'allow'],
    ])
    expect(subscribed).toEqual([MESSAGE_CHANNEL, RESUME_PROGRESS_CHANNEL])
  })

  it('has no resumeLatest without the flag', async () => {
    const { maka } = await loadPreload(['electron', '--maka-safe-resume=0'])
    expect(maka.sessions.resumeLatest).toBeUndefined()
    expect(maka.sessions.resumePlan).toBeUndefined()
    expect(maka.sessions.resolveCall).toBeUndefined()
    expect(maka.sessions.onResumeProgress).toBeUndefined()
    expect(Object.keys(maka.sessions).sort()).toEqual(['get', 'list', 'send'])
  })
})
