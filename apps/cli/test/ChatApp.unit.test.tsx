/**
 * The chat screen over a fake backend (ink-testing-library): slash commands, the /resume notice,
 * streamed text, and a permission answered with y.
 */
import { render } from 'ink-testing-library'
import { describe, expect, it, vi } from 'vitest'
import type { RuntimeEvent } from '@maka/events'
import type { ChatBackend, ChatListener, Notice } from '../src/ui/chatBackend.js'
import { ChatApp } from '../src/ui/ChatApp.js'
import { parseChatInput } from '../src/ui/chatInput.js'

const modelText = (text: string): RuntimeEvent =>
  ({
    id: 'r-e2',
    sessionId: 's',
    invocationId: 'i',
    runId: 'r',
    turnId: 't',
    ts: 1,
    partial: false,
    role: 'model',
    author: 'agent',
    status: 'completed',
    content: { kind: 'text', text },
  }) as unknown as RuntimeEvent

const fakeBackend = () => {
  let listener: ChatListener | null = null
  const backend: ChatBackend = {
    sessionId: 's',
    banner: ['maka chat — session s'],
    attach: (l) => {
      listener = l
    },
    recover: vi.fn(async (): Promise<ReadonlyArray<Notice>> => [
      { tone: 'info', text: 'Startup recovery: nothing to repair.' },
    ]),
    submit: vi.fn(async (): Promise<ReadonlyArray<Notice>> => {
      const decision = await listener?.askPermission({
        sessionId: 's',
        runId: 'r',
        requestId: 'p',
        toolName: 'write_file',
        toolCallId: 'c1',
      })
      return [{ tone: 'info', text: `decision was ${decision ?? '?'}` }]
    }),
    resume: vi.fn(async (): Promise<ReadonlyArray<Notice>> => {
      listener?.onTextDelta('r', 'Streamed ')
      listener?.onTextDelta('r', 'words.')
      listener?.onEvent(modelText('Streamed words.'))
      return [{ tone: 'ok', text: 'completed — continuation run r' }]
    }),
    plan: vi.fn(async (): Promise<ReadonlyArray<Notice>> => [{ tone: 'warn', text: 'park — no source run' }]),
    sessions: vi.fn(async (): Promise<ReadonlyArray<Notice>> => [{ tone: 'info', text: '* s' }]),
    cancel: vi.fn(() => null),
  }
  return backend
}

const tick = () => new Promise((r) => setTimeout(r, 30))

// A ceiling far above any render delay on a loaded machine; a frame that never comes still fails.
const UNTIL_CEILING_MS = 30_000

const until = async (frame: () => string | undefined, text: string) => {
  const deadline = Date.now() + UNTIL_CEILING_MS
  while (Date.now() < deadline) {
    if (frame()?.includes(text) === true) return
    await tick()
  }
  throw new Error(`never saw "${text}" in:\n${frame() ?? ''}`)
}

describe('parseChatInput', () => {
  it.each([
    ['', { _tag: 'Empty' }],
    ['hello', { _tag: 'Prompt', text: 'hello' }],
    ['/resume', { _tag: 'Command', name: '/resume' }],
    ['  /resume  ', { _tag: 'Command', name: '/resume' }],
    ['/resume now', { _tag: 'Usage', usage: 'Usage: /resume' }],
    ['/plan x', { _tag: 'Usage', usage: 'Usage: /plan' }],
    ['/nope', { _tag: 'Unknown', name: '/nope' }],
  ])('reads %j', (line, expected) => {
    expect(parseChatInput(line)).toEqual(expected)
  })
})

describe('ChatApp', () => {
  describe('when /resume is typed', () => {
    it('recovers first, shows the notice, streams the continuation and never submits a prompt', async () => {
      const backend = fakeBackend()
      const { lastFrame, stdin, unmount } = render(<ChatApp backend={backend} />)
      await until(lastFrame, 'Startup recovery: nothing to repair.')
      stdin.write('/resume extra')
      stdin.write('\r')
      await until(lastFrame, 'Usage: /resume')
      expect(backend.resume).not.toHaveBeenCalled()
      stdin.write('/resume')
      stdin.write('\r')
      await until(lastFrame, 'completed — continuation run r')
      const frame = lastFrame() ?? ''
      expect(frame).toContain('Resuming from the latest safe boundary')
      expect(frame).toContain('maka › Streamed words.')
      expect(backend.resume).toHaveBeenCalledTimes(1)
      expect(backend.submit).not.toHaveBeenCalled()
      unmount()
    })
  })

  describe('when a tool asks for permission', () => {
    it('asks y/n and hands the answer back', async () => {
      const backend = fakeBackend()
      const { lastFrame, stdin, unmount } = render(<ChatApp backend={backend} />)
      await until(lastFrame, 'Startup recovery')
      stdin.write('write it')
      stdin.write('\r')
      await until(lastFrame, 'Allow write_file')
      stdin.write('y')
      await until(lastFrame, 'decision was allow')
      expect(lastFrame()).toContain('you › write it')
      unmount()
    })
  })
})
