import { describe, expect, it } from 'vitest'
import {
  makeAbsolutePathUnsafe,
  makeFiniteNumberUnsafe,
  makeIsoTimestampUnsafe,
  makeNonEmptyStringUnsafe,
} from '@maka/events'
import type { AgentRun } from '@maka/events'
import { decideTerminal } from '../src/index.js'

const header = {
  runId: 'run-1',
  sessionId: 'session-1',
  turnId: 'turn-1',
  invocationId: 'inv-1',
  status: 'running',
  cwd: makeAbsolutePathUnsafe('/workspace'),
  providerId: 'scripted',
  modelId: 'scripted',
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
} as AgentRun

const stamp = { eventId: makeNonEmptyStringUnsafe('run-1-e7'), ts: makeFiniteNumberUnsafe(1_767_225_700_000) }
const completedAt = makeIsoTimestampUnsafe('2026-01-01T00:01:40.000Z')

describe('decideTerminal', () => {
  const cases = [
    {
      outcome: { _tag: 'Completed' },
      status: 'completed',
      event: { status: 'completed' },
      headerFields: { completedAt },
    },
    {
      outcome: { _tag: 'Cancelled' },
      status: 'cancelled',
      event: { status: 'cancelled' },
      headerFields: { completedAt, failureClass: 'user_interrupted', abortSource: 'user' },
    },
    {
      outcome: {
        _tag: 'Failed',
        failureClass: 'provider_error',
        message: 'The provider refused.',
        detail: { httpStatus: 500 },
      },
      status: 'failed',
      event: { status: 'failed', actions: { stateDelta: { httpStatus: 500 } } },
      headerFields: { completedAt, failureClass: 'provider_error' },
    },
  ] as const

  for (const c of cases) {
    it(`a ${c.outcome._tag} loop ends ${c.status}`, () => {
      const terminal = decideTerminal(header, c.outcome, stamp, completedAt)
      expect(terminal.status).toBe(c.status)
      expect(terminal.headerFields).toEqual(c.headerFields)
      expect(terminal.event).toMatchObject({
        id: 'run-1-e7',
        ts: stamp.ts,
        runId: 'run-1',
        sessionId: 'session-1',
        ...c.event,
      })
    })
  }

  it('keeps the failure sentence in the terminal row of a failed run', () => {
    const terminal = decideTerminal(
      header,
      { _tag: 'Failed', failureClass: 'provider_error', message: 'The provider refused.' },
      stamp,
      completedAt,
    )
    expect(JSON.stringify(terminal.event)).toContain('The provider refused.')
  })
})
