/**
 * The chat screen over a fake backend (ink-testing-library): slash commands, the /resume notice,
 * streamed text, a permission answered with y, a reopened session's transcript and resume offer,
 * Esc cancelling a turn without leaving, the keys that leave, and the status line.
 */
import { render } from 'ink-testing-library'
import { describe, expect, it, vi } from 'vitest'
import type { RuntimeEvent } from '@maka/events'
import type { ChatBackend, ChatListener, Notice } from '../src/ui/chatBackend.js'
import { ChatApp } from '../src/ui/ChatApp.js'
import { RESOLVE_USAGE, parseChatInput } from '../src/ui/chatInput.js'
import { wrapWords } from '../src/ui/TranscriptItem.js'

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
    ['/resume list', { _tag: 'ResumeList' }],
    ['/resume list now', { _tag: 'Usage', usage: 'Usage: /resume' }],
    ['/plan x', { _tag: 'Usage', usage: 'Usage: /plan' }],
    ['/nope', { _tag: 'Unknown', name: '/nope' }],
    ['/resolve', { _tag: 'ResolveList' }],
    ['/resolve call-1 applied', { _tag: 'Resolve', target: { callId: 'call-1' }, verdict: 'applied' }],
    [
      '/resolve call-1 failed  exit 1:  disk   full ',
      { _tag: 'Resolve', target: { callId: 'call-1' }, verdict: 'failed', output: 'exit 1:  disk   full' },
    ],
    [
      '/resolve --operation op-1 not_applied',
      { _tag: 'Resolve', target: { operationId: 'op-1' }, verdict: 'not_applied' },
    ],
    ['/resolve call-1 maybe', { _tag: 'Usage', usage: RESOLVE_USAGE }],
    ['/resolve call-1', { _tag: 'Usage', usage: RESOLVE_USAGE }],
    ['/resolve --operation applied', { _tag: 'Usage', usage: RESOLVE_USAGE }],
  ])('reads %j', (line, expected) => {
    expect(parseChatInput(line)).toEqual(expected)
  })
})

describe('ChatApp with commands still running and open tool calls', () => {
  it('/resume shows the call it waits for and how long; Esc stops the wait and the chat stays', async () => {
    const backend = fakeBackend()
    let listener: ChatListener | null = null
    let stop: (() => void) | null = null
    backend.attach = (l) => {
      listener = l
    }
    backend.resume = vi.fn(
      () =>
        new Promise<ReadonlyArray<Notice>>((done) => {
          listener?.onWaiting?.([{ operationId: 'op-9', toolCallId: 'call-9', toolName: 'shell', elapsedMs: 12_000 }])
          stop = () => done([{ tone: 'info', text: 'Stopped waiting; nothing was written.' }])
        }),
    )
    backend.stopWaiting = vi.fn(() => {
      if (stop === null) return false
      stop()
      stop = null
      return true
    })
    const { lastFrame, stdin, unmount } = render(<ChatApp backend={backend} />)
    await until(lastFrame, 'Startup recovery: nothing to repair.')
    stdin.write('/resume')
    stdin.write('\r')
    await until(lastFrame, 'Waiting for shell (call call-9), still running after 12 s')
    expect(lastFrame()).toContain('Esc stops waiting')
    stdin.write('\u001b')
    await until(lastFrame, 'Stopped waiting; nothing was written.')
    expect(backend.stopWaiting).toHaveBeenCalledTimes(1)
    expect(backend.cancel).not.toHaveBeenCalled()
    expect(lastFrame()).not.toContain('Waiting for shell')
    unmount()
  })

  it('/resolve lists the open calls and /resolve <call> <verdict> [text] records one', async () => {
    const backend = fakeBackend()
    backend.openOperations = vi.fn(async (): Promise<ReadonlyArray<Notice>> => [
      { tone: 'info', text: 'open tool call: shell (call call-9)' },
    ])
    backend.resolve = vi.fn(async (): Promise<ReadonlyArray<Notice>> => [
      { tone: 'ok', text: 'Recorded failed for call call-9' },
      { tone: 'info', text: '/resume continues the turn from this record.' },
    ])
    const { lastFrame, stdin, unmount } = render(<ChatApp backend={backend} />)
    await until(lastFrame, 'Startup recovery: nothing to repair.')
    stdin.write('/resolve')
    stdin.write('\r')
    await until(lastFrame, 'open tool call: shell (call call-9)')
    stdin.write('/resolve call-9 failed it crashed')
    stdin.write('\r')
    await until(lastFrame, '/resume continues the turn from this record.')
    expect(backend.resolve).toHaveBeenCalledWith({ callId: 'call-9' }, 'failed', 'it crashed')
    unmount()
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

  describe('when /resume has other interrupted sessions to offer', () => {
    const listing = () => {
      const backend = fakeBackend()
      const switchTo = vi.fn((id: string): ReadonlyArray<Notice> => [{ tone: 'info', text: `now on ${id}` }])
      const entry = (sessionId: string, canContinue: boolean) => ({
        sessionId,
        title: `title of ${sessionId}`,
        age: '3 min ago',
        folder: '/w',
        canContinue,
        verdict: canContinue ? 'can continue' : 'cannot continue: the reason',
      })
      const resumeChoices = vi.fn(async () => [entry('a', true), entry('b', false)])
      return { backend: { ...backend, resumeChoices, switchTo }, resumeChoices, switchTo }
    }

    it('lists them numbered, and a number picks one, switches to it and resumes it', async () => {
      const { backend, resumeChoices, switchTo } = listing()
      const { lastFrame, stdin, unmount } = render(<ChatApp backend={backend} />)
      await until(lastFrame, 'Startup recovery')
      stdin.write('/resume')
      stdin.write('\r')
      await until(lastFrame, '2. title of b · 3 min ago · /w · cannot continue: the reason (b)')
      expect(lastFrame()).toContain('1. title of a · 3 min ago · /w · can continue (a)')
      expect(resumeChoices).toHaveBeenCalledWith(false)
      stdin.write('7')
      stdin.write('\r')
      await until(lastFrame, 'Type a number from 1 to 2')
      expect(backend.resume).not.toHaveBeenCalled()
      stdin.write('1')
      stdin.write('\r')
      await until(lastFrame, 'completed — continuation run r')
      expect(switchTo).toHaveBeenCalledWith('a')
      expect(lastFrame()).toContain('now on a')
      expect(lastFrame()).not.toContain('Interrupted sessions, newest first')
      expect(backend.resume).toHaveBeenCalledTimes(1)
      unmount()
    })

    it('/resume list always lists, and Esc picks none', async () => {
      const { backend, resumeChoices, switchTo } = listing()
      const { lastFrame, stdin, unmount } = render(<ChatApp backend={backend} />)
      await until(lastFrame, 'Startup recovery')
      stdin.write('/resume list')
      stdin.write('\r')
      await until(lastFrame, 'Interrupted sessions, newest first')
      expect(resumeChoices).toHaveBeenCalledWith(true)
      stdin.write('\u001b')
      await until(lastFrame, 'No session picked.')
      expect(lastFrame()).not.toContain('Interrupted sessions, newest first')
      expect(switchTo).not.toHaveBeenCalled()
      expect(backend.resume).not.toHaveBeenCalled()
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

describe('ChatApp for a day of work', () => {
  const reopenedBackend = (interrupted: boolean) => {
    const backend = fakeBackend()
    let cancelled: (() => void) | null = null
    return Object.assign(backend, {
      status: { model: 'scripted', folder: '~/ws', permissionMode: 'ask' },
      reopen: vi.fn(async () => ({
        entries: [
          { kind: 'user' as const, text: 'earlier prompt' },
          { kind: 'tool' as const, text: '⚙ shell', failed: false, detail: '$ ls -la' },
          { kind: 'tool' as const, text: '✓ shell ok', failed: false, preview: ['a.txt', 'b.txt'] },
          { kind: 'model' as const, text: 'Earlier answer.' },
        ],
        interrupted,
      })),
      submit: vi.fn(
        () =>
          new Promise<ReadonlyArray<Notice>>((done) => {
            cancelled = () => done([{ tone: 'error', text: 'The turn cancelled (user_interrupted).' }])
          }),
      ),
      cancel: vi.fn(() => {
        if (cancelled === null) return null
        setTimeout(cancelled, 10)
        cancelled = null
        return 'r'
      }),
    })
  }

  describe('when a session is reopened', () => {
    it('shows its transcript, the status line, and y on the offer resumes', async () => {
      const backend = reopenedBackend(true)
      const { lastFrame, stdin, unmount } = render(<ChatApp backend={backend} />)
      await until(lastFrame, 'Interrupted turn found')
      const frame = lastFrame() ?? ''
      expect(frame).toContain('you › earlier prompt')
      expect(frame).toContain('⚙ shell  $ ls -la')
      expect(frame).toContain('│ b.txt')
      expect(frame).toContain('maka › Earlier answer.')
      expect(frame).toContain('scripted · ~/ws · ask mode')
      stdin.write('y')
      await until(lastFrame, 'completed — continuation run r')
      expect(backend.resume).toHaveBeenCalledTimes(1)
      expect(backend.submit).not.toHaveBeenCalled()
      unmount()
    })

    it('another key dismisses the offer and is typed', async () => {
      const backend = reopenedBackend(true)
      const { lastFrame, stdin, unmount } = render(<ChatApp backend={backend} />)
      await until(lastFrame, 'Interrupted turn found')
      stdin.write('/plan')
      await until(lastFrame, 'Not resumed')
      stdin.write('\r')
      await until(lastFrame, 'park — no source run')
      expect(backend.resume).not.toHaveBeenCalled()
      unmount()
    })
  })

  describe('when Esc is pressed during a turn', () => {
    it('cancels it and the chat stays open; Ctrl+C then clears the line and leaves', async () => {
      const backend = reopenedBackend(false)
      const left: Array<number> = []
      const { lastFrame, stdin, unmount } = render(
        <ChatApp backend={backend} controls={{ onLeave: (how) => left.push(how.code) }} />,
      )
      await until(lastFrame, 'Earlier answer.')
      stdin.write('wait')
      stdin.write('\r')
      await until(lastFrame, 'The model is working')
      stdin.write('\u001b')
      await until(lastFrame, 'Turn cancelled; the chat stays open')
      expect(backend.cancel).toHaveBeenCalledTimes(1)
      expect(lastFrame()).not.toContain('The model is working')
      expect(lastFrame()).not.toContain('Cancelling run')
      expect(left).toEqual([])
      stdin.write('typed')
      await until(lastFrame, '› typed')
      stdin.write('\u0003')
      await waitUntil(() => !(lastFrame() ?? '').includes('› typed'))
      expect(left).toEqual([])
      stdin.write('\u0003')
      await waitUntil(() => left.length === 1)
      expect(left).toEqual([0])
      unmount()
    })
  })

  describe('when Ctrl+D is pressed on an empty line', () => {
    it('leaves', async () => {
      const backend = fakeBackend()
      const left: Array<number> = []
      const { lastFrame, stdin, unmount } = render(
        <ChatApp backend={backend} controls={{ onLeave: (how) => left.push(how.code) }} />,
      )
      await until(lastFrame, 'Startup recovery')
      stdin.write('\u0004')
      await waitUntil(() => left.length === 1)
      expect(left).toEqual([0])
      unmount()
    })
  })
})

const waitUntil = async (check: () => boolean) => {
  const deadline = Date.now() + UNTIL_CEILING_MS
  while (Date.now() < deadline) {
    if (check()) return
    await tick()
  }
  throw new Error('the condition never held')
}

describe('wrapWords', () => {
  it('breaks rows at spaces, never inside a word that fits, and keeps indentation', () => {
    const text = 'alpha beta gamma delta epsilon zeta eta theta\n    indented words wrap under their indent'
    const rows = wrapWords(text, 20).split('\n')
    for (const row of rows) expect(row.length).toBeLessThanOrEqual(20)
    expect(
      rows
        .join(' ')
        .split(/\s+/)
        .filter((w) => w !== ''),
    ).toEqual(text.split(/\s+/).filter((w) => w !== ''))
    expect(rows.filter((row) => row.startsWith('    ')).length).toBeGreaterThan(1)
  })

  it('cuts a word longer than a row', () => {
    expect(wrapWords('x'.repeat(25), 10).split('\n')).toEqual(['x'.repeat(10), 'x'.repeat(10), 'x'.repeat(5)])
  })
})
