/**
 * The Electron host's one check of its own: only the app's renderer frame may call the session
 * handlers (`@maka/session-ui`'s, registered through a fake `ipcMain` over a real temp data dir).
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Channels, type IpcMainLike, makeSessionServices, registerSessionIpc } from '@maka/session-ui'
import { trustedSenders } from '../src/index.js'

type Handler = (event: unknown, ...args: Array<unknown>) => unknown

const made: Array<string> = []
afterAll(async () => {
  await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })))
})

const scratch = async (): Promise<{ readonly dataDir: string }> => {
  const root = await mkdtemp(join(tmpdir(), 'maka-desktop-'))
  made.push(root)
  return { dataDir: join(root, 'data') }
}

describe('trustedSenders', () => {
  it("refuses a call from any frame but the app's renderer before the handler runs", async () => {
    const { dataDir } = await scratch()
    const handlers = new Map<string, Handler>()
    const ipc: IpcMainLike = { handle: (channel, listener) => void handlers.set(channel, listener) }
    const services = makeSessionServices({ dataDir, safeResume: true, emit: () => {} })
    registerSessionIpc(
      trustedSenders(ipc, (url) => url.startsWith('file:///app/renderer/')),
      services,
      'electron',
    )
    const info = handlers.get(Channels.info)
    if (info === undefined) throw new Error('no info handler')
    expect(await info({ senderFrame: { url: 'file:///app/renderer/index.html' } })).toEqual({
      safeResume: true,
      transport: 'electron',
      autoContinued: [],
    })
    for (const event of [{ senderFrame: { url: 'https://evil.example/' } }, { senderFrame: null }, {}]) {
      expect(() => info(event)).toThrow(expect.objectContaining({ code: 'sender_refused' }))
    }
  })
})

describe('trustedSenders and sessions:resolveCall', () => {
  it("refuses a verdict from any frame but the app's renderer, before anything is read or written", async () => {
    const { dataDir } = await scratch()
    const handlers = new Map<string, Handler>()
    const ipc: IpcMainLike = { handle: (channel, listener) => void handlers.set(channel, listener) }
    const services = makeSessionServices({ dataDir, safeResume: true, emit: () => {} })
    registerSessionIpc(
      trustedSenders(ipc, (url) => url.startsWith('file:///app/renderer/')),
      services,
      'electron',
    )
    const resolveCall = handlers.get(Channels.resolveCall)
    if (resolveCall === undefined) throw new Error('no resolveCall handler')
    for (const event of [{ senderFrame: { url: 'https://evil.example/' } }, { senderFrame: null }, {}]) {
      expect(() => resolveCall(event, 's-1', 'op-1', 'applied')).toThrow(
        expect.objectContaining({ code: 'sender_refused' }),
      )
    }
    // From the renderer, the call reaches the services (here: no such session).
    await expect(
      resolveCall({ senderFrame: { url: 'file:///app/renderer/index.html' } }, 's-1', 'op-1', 'applied'),
    ).rejects.toMatchObject({ code: 'unknown_session' })
  })
})
