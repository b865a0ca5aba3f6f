/**
 * Record builders for tests: shell runs and run headers with sensible defaults, built without
 * checks (the `Unsafe` way) so a test states only the fields it is about.
 */
import type { AgentRun, ShellRun } from '@maka/events'

/**
 * The session every test record belongs to unless told otherwise.
 * @category unsafe
 */
export const SESSION_ID = 'session-1'

/**
 * A shell-run record; defaults to a finished `true` command.
 * @category unsafe
 */
export const shellRunUnsafe = (fields: {
  readonly shellRunId: string
  readonly status: ShellRun['status']
  readonly pid: number
  readonly startedAt: string
  readonly sessionId?: string
  readonly runId?: string
  readonly bootId?: string
  readonly startTicks?: number
  readonly operationId?: string
}): ShellRun =>
  ({
    command: 'true',
    sessionId: SESSION_ID,
    runId: 'run-1',
    ...fields,
  }) as ShellRun

/**
 * An AgentRun header; `kind` picks a top-level, child or continuation run.
 * @category unsafe
 */
export const runHeaderUnsafe = (fields: {
  readonly runId: string
  readonly status: AgentRun['status']
  readonly kind: 'top_level' | 'child' | 'continuation'
  readonly sessionId?: string
}): AgentRun => {
  const { kind, ...rest } = fields
  const base = {
    sessionId: SESSION_ID,
    turnId: `${fields.runId}-turn`,
    invocationId: `${fields.runId}-invocation`,
    cwd: '/tmp',
    providerId: 'fake',
    modelId: 'fake-model',
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    ...rest,
  }
  switch (kind) {
    case 'top_level':
      return base as AgentRun
    case 'child':
      return { ...base, parentRunId: 'run-1', parentTurnId: 'turn-1' } as AgentRun
    case 'continuation':
      return {
        ...base,
        parentRunId: 'run-1',
        parentTurnId: 'turn-1',
        continuationSource: {
          sourceInvocationId: 'invocation-1',
          sourceRunId: 'run-1',
          sourceTurnId: 'turn-1',
          sourceRuntimeEventHighWater: 3,
        },
      } as AgentRun
  }
}
