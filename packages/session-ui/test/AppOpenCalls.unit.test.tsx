// @vitest-environment happy-dom
/**
 * The renderer's banner for the calls a crash leaves open, against a fake `window.maka`: the open
 * calls with the host's preview and sentences; **Resolve…** only on the calls the host offers
 * verdicts for; a confirmation that says what the picked verdict means and sends exactly the four
 * values; **Safe resume** offered once the host's plan continues; and a resume that waits for a
 * command: the host's progress in the banner, and the resume settled by the last progress message.
 */
import { cleanup, configure, fireEvent, render, screen, waitFor, within } from '@testing-library/react'
import { afterEach, describe, expect, it } from 'vitest'
import { App } from '../src/renderer/App.js'
import type {
  HostMessage,
  MakaApi,
  OpenOperation,
  ResolveCallResult,
  ResumeLatestResult,
  ResumePlanResult,
  ResumeProgress,
  SessionListItem,
  SessionView,
} from '../src/hostContract/api.js'

afterEach(() => {
  cleanup()
  window.sessionStorage.clear()
})

configure({ asyncUtilTimeout: 30_000 })

const VERDICTS: OpenOperation['verdicts'] = [
  { verdict: 'applied', meaning: 'It took effect: recorded as succeeded.' },
  { verdict: 'not_applied', meaning: 'It did not take effect: recorded as not done, not run again.' },
  { verdict: 'failed', meaning: 'It failed: recorded as failed.' },
]

const openShell: OpenOperation = {
  operationId: 'run-1-o2',
  toolCallId: 'run-1-1',
  toolName: 'shell',
  status: 'dispatched_outcome_unknown',
  recoveryMode: 'never_auto_retry',
  reason: 'tool_outcome_unknown',
  reasonText: 'A tool call may have taken effect and cannot be checked automatically.',
  preview: 'run "npm publish" in the background',
  verdicts: VERDICTS,
}

const reissued: OpenOperation = {
  operationId: 'run-1-o3',
  toolCallId: 'run-1-2',
  toolName: 'read_file',
  status: 'definitely_not_dispatched',
  recoveryMode: 'replay_safe',
  reason: null,
  reasonText: null,
}

const session = (failureClass: string): SessionListItem => ({
  sessionId: 's-1',
  title: null,
  cwd: '/work/ws',
  createdAt: '2026-01-01T00:00:00.000Z',
  interrupted: true,
  ownerAlive: false,
  latestRun: { runId: 'run-1', kind: 'turn', status: 'failed', failureClass },
})

const fakeApi = (plans: ReadonlyArray<ResumePlanResult>) => {
  const messages = new Set<(message: HostMessage) => void>()
  const progress = new Set<(p: ResumeProgress) => void>()
  const resolved: Array<ReadonlyArray<unknown>> = []
  let planCalls = 0
  let latest: SessionListItem = session('app_restarted')
  let resumeAnswer: ResumeLatestResult = { disposition: 'failed', message: 'not set' }
  const view = (): SessionView => ({ session: latest, items: [], omitted: 0 })
  const api: MakaApi = {
    info: () => Promise.resolve({ safeResume: true, transport: 'http', autoContinued: [] }),
    sessions: {
      list: () => Promise.resolve([latest]),
      get: () => Promise.resolve(view()),
      send: () => Promise.resolve({ disposition: 'failed', message: 'not in this test' }),
      resumePlan: () => {
        planCalls += 1
        return Promise.resolve(plans[Math.min(planCalls, plans.length) - 1] ?? plans[0]!)
      },
      resumeLatest: () => Promise.resolve(resumeAnswer),
      resolveCall: (...args: ReadonlyArray<unknown>) => {
        resolved.push(args)
        latest = session('operator_resolved')
        const result: ResolveCallResult = { disposition: 'resolved', runId: 'run-2' }
        return Promise.resolve(result)
      },
      onResumeProgress: (listener) => {
        progress.add(listener)
        return () => progress.delete(listener)
      },
    },
    permissions: { answer: () => Promise.resolve(true) },
    onMessage: (listener) => {
      messages.add(listener)
      return () => messages.delete(listener)
    },
  }
  return {
    api,
    resolved,
    setResume: (answer: ResumeLatestResult) => (resumeAnswer = answer),
    progress: (p: ResumeProgress) => progress.forEach((listener) => listener(p)),
  }
}

const openSession = async (api: MakaApi) => {
  render(<App api={api} />)
  fireEvent.click(await screen.findByRole('button', { name: /s-1/ }))
  return screen.findByRole('region', { name: 'Interrupted turn' })
}

describe('the banner with open tool calls', () => {
  it('lists them; Resolve… says what the verdict means, sends the four values, then Safe resume is offered', async () => {
    const fake = fakeApi([
      {
        disposition: 'park',
        rejectionReasons: ['tool_outcome_unknown'],
        messages: ['A tool call may have taken effect and cannot be checked automatically.'],
        openToolOperations: [openShell, reissued],
      },
      { disposition: 'continue', sourceRunId: 'run-2' },
    ])
    const banner = await openSession(fake.api)
    await within(banner).findByText('run "npm publish" in the background', { exact: false })
    expect(within(banner).getByText('shell (call run-1-1)')).toBeTruthy()
    // Only the call the host offers verdicts for has Resolve….
    expect(within(banner).getAllByRole('button', { name: 'Resolve…' })).toHaveLength(1)
    expect((screen.getByRole('button', { name: 'Safe resume' }) as HTMLButtonElement).disabled).toBe(true)

    fireEvent.click(within(banner).getByRole('button', { name: 'Resolve…' }))
    const dialog = await screen.findByRole('dialog', { name: 'Resolve shell (call run-1-1)' })
    const record = within(dialog).getByRole('button', { name: 'Record verdict' }) as HTMLButtonElement
    expect(record.disabled).toBe(true)
    fireEvent.click(within(dialog).getByLabelText('It failed (failed)'))
    expect(within(dialog).getByRole('note').textContent).toContain('It failed: recorded as failed.')
    fireEvent.click(within(dialog).getByLabelText('It did not take effect (not_applied)'))
    expect(within(dialog).getByRole('note').textContent).toContain(
      'It did not take effect: recorded as not done, not run again.',
    )
    fireEvent.change(within(dialog).getByRole('textbox', { name: 'Output (optional)' }), {
      target: { value: 'Nothing was published.' },
    })
    fireEvent.click(record)
    await screen.findByText('Recorded: it did not take effect — shell (call run-1-1).')
    expect(fake.resolved).toEqual([['s-1', 'run-1-o2', 'not_applied', 'Nothing was published.']])
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull())
    await screen.findByText('A verdict was recorded for the interrupted turn’s open tool call.')
    await waitFor(() =>
      expect((screen.getByRole('button', { name: 'Safe resume' }) as HTMLButtonElement).disabled).toBe(false),
    )
  })

  it('sends no output when none was typed, and Cancel records nothing', async () => {
    const fake = fakeApi([
      {
        disposition: 'park',
        rejectionReasons: ['tool_outcome_unknown'],
        messages: ['x'],
        openToolOperations: [openShell],
      },
    ])
    const banner = await openSession(fake.api)
    fireEvent.click(await within(banner).findByRole('button', { name: 'Resolve…' }))
    let dialog = await screen.findByRole('dialog')
    fireEvent.click(within(dialog).getByRole('button', { name: 'Cancel' }))
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull())
    expect(fake.resolved).toEqual([])
    fireEvent.click(within(banner).getByRole('button', { name: 'Resolve…' }))
    dialog = await screen.findByRole('dialog')
    fireEvent.click(within(dialog).getByLabelText('It took effect (applied)'))
    fireEvent.click(within(dialog).getByRole('button', { name: 'Record verdict' }))
    await waitFor(() => expect(fake.resolved).toEqual([['s-1', 'run-1-o2', 'applied']]))
  })
})

describe('the banner while a resume waits for a command', () => {
  it('offers Safe resume with the call it would wait for, shows the progress, and settles on the last message', async () => {
    const running = { operationId: 'run-1-o2', toolCallId: 'run-1-1', toolName: 'shell', elapsedMs: null }
    const fake = fakeApi([{ disposition: 'waiting', operations: [running] }])
    const banner = await openSession(fake.api)
    await within(banner).findByText('shell (call run-1-1) is still running', { exact: false })
    fake.setResume({ disposition: 'waiting', operations: [{ ...running, elapsedMs: 4_000 }] })
    fireEvent.click(screen.getByRole('button', { name: 'Safe resume' }))
    const status = await screen.findByRole('status', { name: 'Waiting for a command' })
    expect(status.textContent).toContain('Waiting for shell (call run-1-1): still running for 4 s.')
    expect((screen.getByRole('button', { name: 'Waiting…' }) as HTMLButtonElement).disabled).toBe(true)
    fake.progress({ type: 'resumeProgress', sessionId: 's-1', operations: [{ ...running, elapsedMs: 9_000 }] })
    await screen.findByText('still running for 9 s.', { exact: false })
    fake.progress({
      type: 'resumeProgress',
      sessionId: 's-1',
      operations: [],
      result: { disposition: 'started', runId: 'run-3', turnId: 't-3' },
    })
    await screen.findByText('Resuming from the latest safe boundary: run run-3.')
    await waitFor(() => expect(screen.queryByRole('status', { name: 'Waiting for a command' })).toBeNull())
  })
})
