import { describe, expect, it } from 'vitest'
import {
  makeAbsolutePathUnsafe,
  makeNonEmptyStringUnsafe,
  makeNonNegativeIntUnsafe,
  makeRunIdUnsafe,
  makeSessionIdUnsafe,
} from '@maka/events'
import type { AgentRun, ExecutionRejection, RuntimeEvent } from '@maka/events'
import { makeLedgerBuilderUnsafe } from '@maka/events/testing'
import { type LedgerSnapshot, emptyLedgerSnapshot } from '@maka/stores'
import type { HostFacts } from '@maka/planner'
import { projectResumePlan } from '@maka/projection'
import type { Continuation } from '@maka/planner'
import { revalidate, type RevalidationObservation } from '../src/index.js'

const source = { sessionId: 'session-1', invocationId: 'inv-1', runId: 'run-1', turnId: 'turn-1' }
const b = makeLedgerBuilderUnsafe(source)
/**
 * The source ledger: user → (a partial streaming snapshot) → call → response → recovered terminal.
 * The partial row is committed (it counts toward the high-water) but never replayed, which lets one
 * case change a row's identity without changing the replay.
 */
const rows: ReadonlyArray<RuntimeEvent> = [
  b.userText('count please'),
  b.partial(b.modelText('thinking about it')),
  b.functionCall('c-1', 'count', { label: 'a' }),
  b.functionResponse('c-1', 'count', { count: 1 }),
  b.terminal(),
]
const replay = projectResumePlan(rows).replayRuntimeEvents

const plan: Continuation = {
  sessionId: makeSessionIdUnsafe('session-1'),
  invocationId: makeNonEmptyStringUnsafe('inv-2'),
  runId: makeRunIdUnsafe('run-2'),
  turnId: makeNonEmptyStringUnsafe('turn-2'),
  sourceInvocationId: makeNonEmptyStringUnsafe('inv-1'),
  sourceRunId: makeRunIdUnsafe('run-1'),
  sourceTurnId: makeNonEmptyStringUnsafe('turn-1'),
  sourceRuntimeEventHighWater: makeNonNegativeIntUnsafe(rows.length),
  runtimeContext: replay,
  sourceRuntimeContext: replay,
  safetySnapshot: {
    workspaceIdentity: makeNonEmptyStringUnsafe('fs:64769:1234:/work/space'),
    backgroundOperationsSettled: true,
    availableToolNames: ['count', 'mutate'],
  },
}

const header = {
  ...source,
  status: 'failed',
  failureClass: 'app_restarted',
  cwd: '/work/space',
  providerId: 'scripted',
  modelId: 'scripted',
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:09.000Z',
  completedAt: '2026-01-01T00:00:09.000Z',
  workspaceIdentity: 'fs:64769:1234:/work/space',
} as AgentRun

const facts: HostFacts = {
  currentCwd: '/work/space',
  currentWorkspaceIdentity: 'fs:64769:1234:/work/space',
  backgroundOperationsSettled: true,
  unsettledOperations: [],
  availableToolNames: ['count', 'mutate'],
}

const baseline: RevalidationObservation = {
  sourceHeader: header,
  ledger: { ...emptyLedgerSnapshot, events: rows, highWater: rows.length },
  facts,
  existingBoundaryHolder: null,
  targetRunExists: false,
}

const withRow = (index: number, change: (row: RuntimeEvent) => RuntimeEvent): ReadonlyArray<RuntimeEvent> =>
  rows.map((row, i) => (i === index ? change(row) : row))

const withLedger = (events: ReadonlyArray<RuntimeEvent>, highWater = events.length): RevalidationObservation => ({
  ...baseline,
  ledger: { ...emptyLedgerSnapshot, events, highWater },
})

const withFacts = (change: Partial<HostFacts>): RevalidationObservation => ({
  ...baseline,
  facts: { ...facts, ...change },
})

interface Case {
  readonly code: ExecutionRejection
  readonly change: string
  readonly observed: RevalidationObservation
  /** Only when one change necessarily implies more than one code. */
  readonly expected?: ReadonlyArray<ExecutionRejection>
}

const cases: ReadonlyArray<Case> = [
  {
    code: 'source_identity_changed',
    change: 'the header names another turn',
    observed: { ...baseline, sourceHeader: { ...header, turnId: makeNonEmptyStringUnsafe('turn-9') } },
  },
  {
    code: 'source_terminal_changed',
    change: 'the header says completed while the terminal event says failed',
    observed: { ...baseline, sourceHeader: { ...header, status: 'completed' } },
  },
  {
    code: 'source_cwd_changed',
    change: 'the session cwd now resolves elsewhere',
    observed: withFacts({ currentCwd: '/work/elsewhere' }),
  },
  {
    code: 'source_high_water_changed',
    change: 'the store counts one more committed line than the plan pinned',
    observed: withLedger(rows, rows.length + 1),
  },
  {
    code: 'source_ledger_identity_changed',
    change: 'the partial row now carries another invocation id (partial rows are never replayed)',
    observed: withLedger(withRow(1, (row) => ({ ...row, invocationId: makeNonEmptyStringUnsafe('inv-9') }))),
  },
  {
    code: 'source_replay_changed',
    change: 'the committed tool result differs from the planned replay',
    observed: withLedger(
      withRow(3, (row) =>
        row.content?.kind === 'function_response' ? { ...row, content: { ...row.content, result: { count: 2 } } } : row,
      ),
    ),
  },
  {
    code: 'workspace_identity_changed',
    change: 'the workspace directory is another inode',
    observed: withFacts({ currentWorkspaceIdentity: 'fs:64769:9999:/work/space' }),
  },
  {
    code: 'background_operation_started',
    change: 'a background shell run is now unsettled',
    observed: withFacts({
      backgroundOperationsSettled: false,
      unsettledOperations: [{ kind: 'shell_run', id: 'sh-1' }],
    }),
  },
  {
    code: 'tool_catalog_changed',
    change: 'a snapshot tool is no longer registered',
    observed: withFacts({ availableToolNames: ['count'] }),
  },
  {
    code: 'workspace_checkpoint_changed',
    change: 'a checkpoint appeared that the plan did not snapshot',
    observed: withFacts({ workspaceCheckpoint: { ref: 'cp-1', restored: true, runtimeEventHighWater: rows.length } }),
  },
  {
    code: 'continuation_claim_conflict',
    change: 'another run holds the boundary',
    observed: { ...baseline, existingBoundaryHolder: 'run-7' },
  },
  {
    code: 'target_run_conflict',
    change: 'the target run id exists',
    observed: { ...baseline, targetRunExists: true },
  },
]

describe('revalidate', () => {
  describe('when nothing changed since planning', () => {
    it('accepts the plan', () => {
      expect(revalidate(plan, baseline)).toEqual([])
    })

    it('accepts a header cwd recorded with a trailing separator', () => {
      expect(
        revalidate(plan, { ...baseline, sourceHeader: { ...header, cwd: makeAbsolutePathUnsafe('/work/space/') } }),
      ).toEqual([])
    })
  })

  describe('when exactly one observed fact changed', () => {
    it('covers every code of the revalidation table', () => {
      expect(new Set(cases.map((c) => c.code)).size).toBe(12)
    })

    it.each(cases)('rejects with $code when $change', ({ code, observed, expected }) => {
      expect(revalidate(plan, observed)).toEqual(expected ?? [code])
    })
  })

  describe('when durable state can no longer be read', () => {
    it('rejects a vanished source header as source_identity_changed', () => {
      expect(revalidate(plan, { ...baseline, sourceHeader: null })).toEqual(['source_identity_changed'])
    })

    it('rejects an unreadable ledger as source_replay_changed (and terminal changed: it is past the bad row)', () => {
      // The store hands back only the rows before the bad line, so the terminal event is no longer
      // seen either: both codes follow from the one corruption.
      const ledger: LedgerSnapshot = {
        ...emptyLedgerSnapshot,
        events: rows.slice(0, 2),
        highWater: 5,
        problem: { _tag: 'Unreadable', line: 3, reason: 'not JSON' },
      }
      expect(revalidate(plan, { ...baseline, ledger })).toEqual(['source_terminal_changed', 'source_replay_changed'])
    })

    it('rejects unobservable host facts on every host check', () => {
      expect(revalidate(plan, { ...baseline, facts: null })).toEqual([
        'source_cwd_changed',
        'workspace_identity_changed',
        'background_operation_started',
        'tool_catalog_changed',
      ])
    })
  })

  describe('when several facts changed', () => {
    it('reports every code, in the spec’s order, whatever the order of discovery', () => {
      const observed: RevalidationObservation = {
        ...withFacts({ availableToolNames: [], currentCwd: '/elsewhere' }),
        targetRunExists: true,
        existingBoundaryHolder: 'run-7',
        sourceHeader: { ...header, turnId: makeNonEmptyStringUnsafe('turn-9') },
      }

      expect(revalidate(plan, observed)).toEqual([
        'source_identity_changed',
        'source_cwd_changed',
        'tool_catalog_changed',
        'continuation_claim_conflict',
        'target_run_conflict',
      ])
    })
  })

  describe('when a checkpoint was snapshotted', () => {
    const withCheckpoint: Continuation = {
      ...plan,
      safetySnapshot: {
        ...plan.safetySnapshot,
        workspaceCheckpoint: { ref: 'cp-1', runtimeEventHighWater: rows.length },
      },
    }
    const same = { ref: 'cp-1', restored: true, runtimeEventHighWater: rows.length }

    it.each([
      { change: 'nothing', current: same, expected: [] },
      { change: 'the ref', current: { ...same, ref: 'cp-2' }, expected: ['workspace_checkpoint_changed'] },
      {
        change: 'the high-water',
        current: { ...same, runtimeEventHighWater: 4 },
        expected: ['workspace_checkpoint_changed'],
      },
      {
        change: 'the restored flag',
        current: { ...same, restored: false },
        expected: ['workspace_checkpoint_changed'],
      },
    ])('compares ref, high-water and restored (changed: $change)', ({ current, expected }) => {
      expect(revalidate(withCheckpoint, withFacts({ workspaceCheckpoint: current }))).toEqual(expected)
    })

    it('rejects when the checkpoint is gone', () => {
      expect(revalidate(withCheckpoint, baseline)).toEqual(['workspace_checkpoint_changed'])
    })
  })
  describe('when server tools (MCP) were snapshotted', () => {
    const entry = { server: 'fs', digest: `sha256:${'a'.repeat(64)}` }
    const withCatalog: Continuation = {
      ...plan,
      safetySnapshot: { ...plan.safetySnapshot, toolCatalog: { mcp__fs__read_file: entry } },
    }

    it.each([
      { change: 'nothing', current: { mcp__fs__read_file: entry }, expected: [] },
      {
        change: 'the digest',
        current: { mcp__fs__read_file: { ...entry, digest: `sha256:${'b'.repeat(64)}` } },
        expected: ['tool_catalog_changed'],
      },
      {
        change: 'the server',
        current: { mcp__fs__read_file: { ...entry, server: 'other' } },
        expected: ['tool_catalog_changed'],
      },
      { change: 'the tool is gone', current: {}, expected: ['tool_catalog_changed'] },
    ])('compares each tool’s server and digest (changed: $change)', ({ current, expected }) => {
      expect(revalidate(withCatalog, withFacts({ toolCatalog: current }))).toEqual(expected)
    })
  })
})
