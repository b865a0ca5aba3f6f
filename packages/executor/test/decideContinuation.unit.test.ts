import { describe, expect, it } from 'vitest'
import {
  makeAbsolutePathUnsafe,
  makeFiniteNumberUnsafe,
  makeIsoTimestampUnsafe,
  makeNonEmptyStringUnsafe,
  makeNonNegativeIntUnsafe,
  makeRunIdUnsafe,
  makeSessionIdUnsafe,
} from '@maka/events'
import type { AgentRun } from '@maka/events'
import {
  type ApprovedContinuation,
  type ContinuationInput,
  decideContinuation,
  providerIdentityOf,
} from '../src/index.js'

const continuation: ApprovedContinuation = {
  sessionId: makeSessionIdUnsafe('session-1'),
  invocationId: makeNonEmptyStringUnsafe('inv-2'),
  runId: makeRunIdUnsafe('run-2'),
  turnId: makeNonEmptyStringUnsafe('turn-2'),
  sourceInvocationId: makeNonEmptyStringUnsafe('inv-1'),
  sourceRunId: makeRunIdUnsafe('run-1'),
  sourceTurnId: makeNonEmptyStringUnsafe('turn-1'),
  sourceRuntimeEventHighWater: makeNonNegativeIntUnsafe(3),
  runtimeContext: [],
  sourceRuntimeContext: [],
  safetySnapshot: {
    workspaceIdentity: makeNonEmptyStringUnsafe('ws-1'),
    backgroundOperationsSettled: true,
    availableToolNames: ['count'],
  },
}

const sourceHeader = {
  runId: 'run-1',
  sessionId: 'session-1',
  turnId: 'turn-1',
  invocationId: 'inv-1',
  status: 'failed',
  cwd: makeAbsolutePathUnsafe('/recorded/workspace'),
  providerId: 'old-provider',
  modelId: 'old-model',
  providerBaseUrl: 'http://old.example',
  workspaceIdentity: 'ws-1',
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:05.000Z',
} as AgentRun

const input: ContinuationInput = {
  continuation,
  sourceHeader,
  provider: providerIdentityOf({ providerId: 'scripted', modelId: 'model-b' }),
  createdAt: makeIsoTimestampUnsafe('2026-01-02T00:00:00.000Z'),
  stamp: { eventId: makeNonEmptyStringUnsafe('run-2-e1'), ts: makeFiniteNumberUnsafe(1_767_312_000_000) },
}

const source = {
  sourceInvocationId: 'inv-1',
  sourceRunId: 'run-1',
  sourceTurnId: 'turn-1',
  sourceRuntimeEventHighWater: 3,
}

describe('decideContinuation', () => {
  it('claims the source boundary for the plan’s target ids', () => {
    expect(decideContinuation(input).claim).toEqual({
      sessionId: 'session-1',
      ...source,
      targetInvocationId: 'inv-2',
      targetRunId: 'run-2',
      targetTurnId: 'turn-2',
      claimedAt: input.createdAt,
    })
  })

  it('creates the target header in the source’s cwd, linked to the source boundary', () => {
    const { header } = decideContinuation(input)
    expect(header).toEqual({
      runId: 'run-2',
      sessionId: 'session-1',
      turnId: 'turn-2',
      invocationId: 'inv-2',
      status: 'created',
      cwd: '/recorded/workspace',
      providerId: 'scripted',
      modelId: 'model-b',
      createdAt: input.createdAt,
      updatedAt: input.createdAt,
      workspaceIdentity: 'ws-1',
      parentRunId: 'run-1',
      parentTurnId: 'turn-1',
      continuationSource: source,
    })
  })

  const endpoints: ReadonlyArray<readonly [string, string | undefined, string | undefined]> = [
    ['no endpoint', undefined, undefined],
    ['an empty endpoint', '', undefined],
    ['an endpoint', 'http://127.0.0.1:9', 'http://127.0.0.1:9'],
  ]
  for (const [name, given, recorded] of endpoints) {
    it(`records the current provider’s endpoint, not the source’s (${name})`, () => {
      const { header } = decideContinuation({
        ...input,
        provider: providerIdentityOf({
          providerId: 'p',
          modelId: 'm',
          ...(given === undefined ? {} : { baseUrl: given }),
        }),
      })
      expect(header.providerBaseUrl).toBe(recorded)
    })
  }

  it('starts the target ledger with a system continuation-start row naming the boundary', () => {
    const { startRow, continuationSource } = decideContinuation(input)
    expect(continuationSource).toEqual(source)
    expect(startRow).toMatchObject({
      id: 'run-2-e1',
      ts: input.stamp.ts,
      sessionId: 'session-1',
      runId: 'run-2',
      turnId: 'turn-2',
      invocationId: 'inv-2',
      role: 'system',
      author: 'system',
      actions: { stateDelta: { continuationStart: true } },
      refs: source,
    })
    expect(startRow).not.toHaveProperty('content')
  })
})
