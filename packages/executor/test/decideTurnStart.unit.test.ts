import { describe, expect, it } from 'vitest'
import {
  makeAbsolutePathUnsafe,
  makeFiniteNumberUnsafe,
  makeIsoTimestampUnsafe,
  makeNonEmptyStringUnsafe,
  makeRunIdUnsafe,
  makeSessionIdUnsafe,
} from '@maka/events'
import { type TurnStartInput, decideTurnStart, providerIdentityOf } from '../src/index.js'

const base: TurnStartInput = {
  sessionId: makeSessionIdUnsafe('session-1'),
  runId: makeRunIdUnsafe('run-1'),
  turnId: makeNonEmptyStringUnsafe('turn-1'),
  invocationId: makeNonEmptyStringUnsafe('inv-1'),
  cwd: makeAbsolutePathUnsafe('/workspace'),
  provider: providerIdentityOf({ providerId: 'scripted', modelId: 'model-a' }),
  prompt: 'count the files',
  createdAt: makeIsoTimestampUnsafe('2026-01-01T00:00:00.000Z'),
  stamp: { eventId: makeNonEmptyStringUnsafe('run-1-e1'), ts: makeFiniteNumberUnsafe(1_767_225_600_000) },
}

describe('decideTurnStart', () => {
  const cases: ReadonlyArray<{
    readonly name: string
    readonly given: Partial<TurnStartInput>
    readonly header: Readonly<Record<string, unknown>>
    readonly absent: ReadonlyArray<string>
  }> = [
    {
      name: 'a local model without the resume flag records neither endpoint nor workspace identity',
      given: {},
      header: { status: 'created', cwd: '/workspace', providerId: 'scripted', modelId: 'model-a' },
      absent: ['providerBaseUrl', 'workspaceIdentity', 'continuationSource', 'parentRunId'],
    },
    {
      name: 'an empty endpoint is not recorded',
      given: { provider: providerIdentityOf({ providerId: 'openai', modelId: 'm', baseUrl: '' }) },
      header: { providerId: 'openai' },
      absent: ['providerBaseUrl'],
    },
    {
      name: 'an endpoint and an inspected workspace are recorded',
      given: {
        provider: providerIdentityOf({ providerId: 'openai', modelId: 'm', baseUrl: 'http://127.0.0.1:9' }),
        workspaceIdentity: makeNonEmptyStringUnsafe('ws-1'),
      },
      header: { providerBaseUrl: 'http://127.0.0.1:9', workspaceIdentity: 'ws-1' },
      absent: ['continuationSource'],
    },
  ]

  for (const c of cases) {
    it(c.name, () => {
      const start = decideTurnStart({ ...base, ...c.given })
      expect(start.header).toMatchObject({
        runId: 'run-1',
        sessionId: 'session-1',
        turnId: 'turn-1',
        invocationId: 'inv-1',
        createdAt: base.createdAt,
        updatedAt: base.createdAt,
        ...c.header,
      })
      for (const field of c.absent) expect(start.header).not.toHaveProperty(field)
    })
  }

  it('opens the ledger with the prompt as the user row, stamped with the given id and time', () => {
    const start = decideTurnStart(base)
    expect(start.initialUser).toMatchObject({
      id: 'run-1-e1',
      ts: base.stamp.ts,
      sessionId: 'session-1',
      runId: 'run-1',
      turnId: 'turn-1',
      invocationId: 'inv-1',
      role: 'user',
      author: 'user',
      partial: false,
      content: { kind: 'text', text: 'count the files' },
    })
  })

  it('decides the same writes from the same input', () => {
    expect(decideTurnStart(base)).toEqual(decideTurnStart(base))
  })
})
