// @vitest-environment happy-dom
/**
 * The renderer against a fake `window.maka`: the banner, Safe resume live only while the host's
 * plan would continue, a park with every sentence and its next step, the started toast and the
 * continuation streaming in, toasts that close by themselves, the start-up notice told once.
 */
import { act, cleanup, configure, fireEvent, render, screen, waitFor, within } from '@testing-library/react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { App } from '../src/renderer/App.js'
import type {
  HostMessage,
  MakaApi,
  ResumeLatestResult,
  ResumePlanResult,
  SessionListItem,
  SessionView,
} from '../src/hostContract/api.js'

afterEach(() => {
  cleanup()
  vi.useRealTimers()
  window.sessionStorage.clear()
})

// testing-library gives up on `findBy…`/`waitFor` after 1 s by default; on a shared 2-core CI
// machine a first render can take longer. A screen that never comes still fails, only later.
configure({ asyncUtilTimeout: 30_000 })

const interrupted: SessionListItem = {
  sessionId: 's-1',
  title: null,
  cwd: '/work/ws',
  createdAt: '2026-01-01T00:00:00.000Z',
  interrupted: true,
  ownerAlive: false,
  latestRun: { runId: 'run-1', kind: 'turn', status: 'failed', failureClass: 'app_restarted' },
}

const fakeApi = (options: {
  readonly safeResume: boolean
  readonly autoContinued?: ReadonlyArray<{ readonly sessionId: string; readonly runId: string }>
  /** The host's plans, one per `resumePlan` call (the last repeats); no plan channel when absent. */
  readonly plans?: ReadonlyArray<ResumePlanResult>
}) => {
  const listeners = new Set<(message: HostMessage) => void>()
  const calls: Array<string> = []
  const planned: Array<string> = []
  let answer: (result: ResumeLatestResult) => void = () => {}
  const view: SessionView = {
    session: interrupted,
    items: [
      { eventId: 'e1', runId: 'run-1', turnId: 't1', role: 'user', kind: 'text', text: 'list the files' },
      {
        eventId: 'e2',
        runId: 'run-1',
        turnId: 't1',
        role: 'model',
        kind: 'tool_call',
        text: 'Calls list_dir.',
        toolName: 'list_dir',
        status: 'succeeded',
      },
    ],
    omitted: 0,
  }
  const sessions: MakaApi['sessions'] = {
    list: () => Promise.resolve([interrupted]),
    get: () => Promise.resolve(view),
    send: () => Promise.resolve({ disposition: 'failed', message: 'not in this test' }),
  }
  const api: MakaApi = {
    info: () =>
      Promise.resolve({
        safeResume: options.safeResume,
        transport: 'http',
        autoContinued: options.autoContinued ?? [],
      }),
    sessions: options.safeResume
      ? {
          ...sessions,
          resumeLatest: (sessionId) => {
            calls.push(sessionId)
            return new Promise((resolve) => (answer = resolve))
          },
          ...(options.plans === undefined
            ? {}
            : {
                resumePlan: (sessionId: string) => {
                  planned.push(sessionId)
                  const plans = options.plans ?? []
                  const plan = plans[Math.min(planned.length, plans.length) - 1]
                  return plan === undefined ? Promise.reject(new Error('no plan')) : Promise.resolve(plan)
                },
              }),
        }
      : sessions,
    permissions: { answer: () => Promise.resolve(true) },
    onMessage: (listener) => {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
  }
  return {
    api,
    calls,
    planned,
    answer: (result: ResumeLatestResult) => answer(result),
    push: (message: HostMessage) => listeners.forEach((listener) => listener(message)),
  }
}

const openInterrupted = async () => {
  fireEvent.click(await screen.findByText('s-1', { selector: '.title' }))
  return screen.findByRole('region', { name: 'Interrupted turn' })
}

const dangling: ResumePlanResult = {
  disposition: 'park',
  rejectionReasons: ['dangling_tool_state', 'cwd_mismatch'],
  messages: ['First sentence.', 'Second sentence.'],
  nextStep: 'Check whether the call took effect.',
}

const parkLines = (banner: HTMLElement) => [...banner.querySelectorAll('li')].map((li) => li.textContent)

describe('the interrupted-turn banner', () => {
  it('turns Safe resume off while the host plans a park, with every sentence and the next step next to it', async () => {
    const fake = fakeApi({ safeResume: true, plans: [dangling] })
    render(<App api={fake.api} />)
    const banner = await openInterrupted()
    await waitFor(() =>
      expect(banner.querySelector('.next')?.textContent).toBe('Next: Check whether the call took effect.'),
    )
    const button = screen.getByRole('button', { name: 'Safe resume' })
    expect(button.hasAttribute('disabled')).toBe(true)
    expect(button.getAttribute('aria-describedby')).toBe('park-reasons')
    expect(parkLines(banner)).toEqual(['First sentence. (dangling_tool_state)', 'Second sentence. (cwd_mismatch)'])
    fireEvent.click(button)
    expect(fake.calls).toEqual([])
    expect(fake.planned).toEqual(['s-1'])
  })

  it('turns Safe resume on when the host plans a continuation, and Check again asks for a new plan', async () => {
    const fake = fakeApi({ safeResume: true, plans: [dangling, { disposition: 'continue', sourceRunId: 'run-1' }] })
    render(<App api={fake.api} />)
    await openInterrupted()
    fireEvent.click(await screen.findByRole('button', { name: 'Check again' }))
    await waitFor(() =>
      expect(screen.getByRole('button', { name: 'Safe resume' }).hasAttribute('disabled')).toBe(false),
    )
    expect(screen.queryByText('Cannot resume safely:')).toBeNull()
    expect(fake.planned).toEqual(['s-1', 's-1'])
  })

  it('after a park the button stays off and the banner keeps the reasons, instead of parking again on every click', async () => {
    const fake = fakeApi({ safeResume: true })
    render(<App api={fake.api} />)
    const banner = await openInterrupted()
    expect(banner.textContent).toContain('app_restarted')
    const button = screen.getByRole('button', { name: 'Safe resume' })
    fireEvent.click(button)
    await waitFor(() => expect(screen.getByRole('button', { name: 'Resuming…' }).hasAttribute('disabled')).toBe(true))
    fireEvent.click(screen.getByRole('button', { name: 'Resuming…' }))
    expect(fake.calls).toEqual(['s-1'])
    await act(async () => {
      fake.answer({
        disposition: 'park',
        rejectionReasons: ['dangling_tool_state', 'cwd_mismatch'],
        messages: ['First sentence.', 'Second sentence.'],
      })
      await Promise.resolve()
    })
    await screen.findByText('Cannot resume safely:')
    expect(parkLines(banner)).toEqual(['First sentence. (dangling_tool_state)', 'Second sentence. (cwd_mismatch)'])
    expect(screen.getByRole('button', { name: 'Safe resume' }).hasAttribute('disabled')).toBe(true)
    fireEvent.click(screen.getByRole('button', { name: 'Safe resume' }))
    expect(fake.calls).toEqual(['s-1'])
  })

  it('on started shows an info toast and streams the continuation into the transcript', async () => {
    const fake = fakeApi({ safeResume: true })
    render(<App api={fake.api} />)
    await openInterrupted()
    fireEvent.click(screen.getByRole('button', { name: 'Safe resume' }))
    await act(async () => {
      fake.answer({ disposition: 'started', runId: 'run-2', turnId: 't2' })
      await Promise.resolve()
    })
    await screen.findByText('Resuming from the latest safe boundary: run run-2.')
    expect(screen.queryByRole('region', { name: 'Interrupted turn' })).toBeNull()
    act(() => {
      fake.push({ type: 'text', sessionId: 's-1', runId: 'run-2', text: 'Continuing ' })
      fake.push({ type: 'text', sessionId: 's-1', runId: 'run-2', text: 'after list_dir' })
    })
    await screen.findByText('Continuing after list_dir')
    act(() => {
      fake.push({
        type: 'item',
        sessionId: 's-1',
        item: {
          eventId: 'e9',
          runId: 'run-2',
          turnId: 't2',
          role: 'model',
          kind: 'text',
          text: 'Continuing after list_dir: done.',
        },
      })
      // Another session's stream never lands in this transcript.
      fake.push({ type: 'text', sessionId: 's-other', runId: 'run-x', text: 'elsewhere' })
    })
    await screen.findByText('Continuing after list_dir: done.')
    expect(screen.queryByText('Continuing after list_dir')).toBeNull()
    expect(screen.queryByText('elsewhere')).toBeNull()
  })

  it('tells once of a start-up continuation, whether the host info or its message comes first', async () => {
    const fake = fakeApi({ safeResume: true, autoContinued: [{ sessionId: 's-1', runId: 'run-2' }] })
    render(<App api={fake.api} />)
    const sentence = 'Session s-1 was interrupted: continuing from its latest safe boundary.'
    await screen.findByText(sentence)
    act(() => fake.push({ type: 'autoContinued', sessionId: 's-1', runId: 'run-2' }))
    act(() => fake.push({ type: 'autoContinued', sessionId: 's-3', runId: 'run-9' }))
    await screen.findByText('Session s-3 was interrupted: continuing from its latest safe boundary.')
    expect(screen.getAllByText(sentence)).toHaveLength(1)
  })

  it('tells a start-up continuation once per tab: a reload of the page does not tell it again', async () => {
    const autoContinued = [{ sessionId: 's-1', runId: 'run-2' }]
    const sentence = 'Session s-1 was interrupted: continuing from its latest safe boundary.'
    render(<App api={fakeApi({ safeResume: true, autoContinued }).api} />)
    await screen.findByText(sentence)
    cleanup()
    render(<App api={fakeApi({ safeResume: true, autoContinued }).api} />)
    await screen.findByText('Safe resume on')
    expect(screen.queryByText(sentence)).toBeNull()
    // A new host process continues with new run ids: those are told.
    cleanup()
    render(<App api={fakeApi({ safeResume: true, autoContinued: [{ sessionId: 's-1', runId: 'run-7' }] }).api} />)
    await screen.findByText(sentence)
  })

  it('closes an info toast by itself; an error toast stays until its close button', async () => {
    vi.useFakeTimers()
    const fake = fakeApi({ safeResume: true, autoContinued: [{ sessionId: 's-1', runId: 'run-2' }] })
    const api: MakaApi = {
      ...fake.api,
      sessions: { ...fake.api.sessions, get: () => Promise.reject(new Error('unreadable')) },
    }
    render(<App api={api} />)
    const sentence = 'Session s-1 was interrupted: continuing from its latest safe boundary.'
    await act(async () => {
      await vi.advanceTimersByTimeAsync(0)
    })
    expect(screen.getByText(sentence)).toBeTruthy()
    fireEvent.click(screen.getByText('s-1', { selector: '.title' }))
    await act(async () => {
      await vi.advanceTimersByTimeAsync(0)
    })
    expect(screen.getByText('The session s-1 cannot be opened.')).toBeTruthy()
    await act(async () => {
      await vi.advanceTimersByTimeAsync(60_000)
    })
    expect(screen.queryByText(sentence)).toBeNull()
    const error = screen.getByText('The session s-1 cannot be opened.').closest('.toast') as HTMLElement
    fireEvent.click(within(error).getByRole('button', { name: 'Dismiss' }))
    expect(screen.queryByText('The session s-1 cannot be opened.')).toBeNull()
  })

  it('offers no Safe resume without the flag', async () => {
    const fake = fakeApi({ safeResume: false })
    render(<App api={fake.api} />)
    const banner = await openInterrupted()
    expect(screen.queryByRole('button', { name: 'Safe resume' })).toBeNull()
    expect(banner.textContent).toContain('MAKA_RUNTIME_SAFE_BOUNDARY_RESUME=1')
  })

  it('puts a permission question to the person and sends the answer', async () => {
    const fake = fakeApi({ safeResume: true })
    const answers: Array<string> = []
    const api: MakaApi = {
      ...fake.api,
      permissions: {
        answer: (requestId, decision) => {
          answers.push(`${requestId}:${decision}`)
          return Promise.resolve(true)
        },
      },
    }
    render(<App api={api} />)
    await openInterrupted()
    act(() =>
      fake.push({
        type: 'permission',
        prompt: {
          sessionId: 's-1',
          runId: 'run-2',
          requestId: 'q1',
          toolName: 'write_file',
          summary: 'write notes.txt',
        },
      }),
    )
    const question = await screen.findByRole('region', { name: 'Permission' })
    expect(question.textContent).toContain('write_file')
    fireEvent.click(screen.getByRole('button', { name: 'Deny' }))
    await waitFor(() => expect(answers).toEqual(['q1:deny']))
    expect(screen.queryByRole('region', { name: 'Permission' })).toBeNull()
  })
})
