import type { RuntimeEvent } from '@maka/events'
import { describe, expect, it } from 'vitest'
import { type HostFacts } from '../src/index.js'
import { GateTable } from '../src/internal/GateTable.js'
import {
  type Given,
  type LooseContinuationIds,
  givenLedger,
  header,
  journalFacts,
  rows,
  safeRows,
} from './givenLedger.js'

// A protocol run whose one call was dispatched under `mode` and has no response.
const dispatched = (tool: string, mode: 'never_auto_retry' | 'reconcile' | 'reattach' | 'replay_safe', args = {}) => {
  const l = rows()
  const user = l.protocolUserText('go')
  const call = l.protocolCall('call-1', tool, args)
  return [user, call, l.dispatch(call, mode), l.terminal()]
}
const observed = (facts: Record<string, unknown>) => () => ({
  operationFacts: new Map([['run-1-o2', facts as never]]),
})

interface GateCase {
  readonly gate: number
  readonly name: string
  readonly events: () => ReadonlyArray<RuntimeEvent>
  readonly given?: () => Given
  readonly facts?: Partial<HostFacts>
  readonly ids?: Partial<LooseContinuationIds>
  readonly reasons: ReadonlyArray<string>
  readonly detail?: Record<string, unknown>
}

// One case per gate row, each the smallest change to the safe ledger that trips that gate alone.
const cases: ReadonlyArray<GateCase> = [
  {
    gate: 0,
    name: 'the caller expects another high-water',
    events: () => safeRows(),
    facts: { expectedRuntimeEventHighWater: 3 },
    reasons: ['runtime_offset_mismatch'],
    detail: { expectedHighWater: 3, expectedFrom: 'caller', actualHighWater: 4 },
  },
  {
    gate: 0,
    name: 'a tool call has no committed response',
    events: () => {
      const l = rows()
      return [l.userText('clean up'), l.functionCall('call-1', 'shell', { cmd: 'rm -rf build' }), l.terminal()]
    },
    reasons: ['dangling_tool_state'],
    detail: { toolCallIds: ['call-1'] },
  },
  {
    gate: 0,
    name: 'a dispatch names no call (Phase 2)',
    events: () => {
      const l = rows()
      const user = l.protocolUserText('go')
      const call = l.protocolCall('call-1', 'read_file')
      return [
        user,
        l.dispatch({ ...call, refs: { toolCallId: 'call-1', operationId: 'run-9-o2' } } as never, 'replay_safe'),
        l.terminal(),
      ]
    },
    facts: journalFacts,
    reasons: ['tool_journal_corrupt'],
  },
  {
    gate: 0,
    name: 'a never_auto_retry call was dispatched and has no outcome',
    events: () => dispatched('shell', 'never_auto_retry', { command: 'npm publish', background: true }),
    facts: journalFacts,
    given: observed({ currentMode: 'never_auto_retry' }),
    reasons: ['tool_outcome_unknown'],
    detail: { operations: [{ operationId: 'run-1-o2', toolCallId: 'call-1', recoveryMode: 'never_auto_retry' }] },
  },
  {
    gate: 0,
    name: 'a foreground command is still running',
    events: () => dispatched('shell', 'reattach', { command: 'make' }),
    facts: journalFacts,
    given: observed({ currentMode: 'reattach', observation: 'running' }),
    reasons: ['tool_still_running'],
  },
  {
    gate: 0,
    name: 'a probe finds the file neither before nor after',
    events: () => dispatched('write_file', 'reconcile'),
    facts: journalFacts,
    given: observed({ currentMode: 'reconcile', probe: 'diverged' }),
    reasons: ['reconcile_diverged'],
  },
  {
    gate: 0,
    name: 'a probe cannot read the file',
    events: () => dispatched('write_file', 'reconcile'),
    facts: journalFacts,
    given: observed({ currentMode: 'reconcile', probe: 'unreadable' }),
    reasons: ['reconcile_unreadable'],
  },
  {
    gate: 0,
    name: 'more than 64 calls would be settled',
    events: () => {
      const l = rows()
      const user = l.protocolUserText('go')
      return [user, ...Array.from({ length: 65 }, (_, i) => l.protocolCall(`call-${i}`, 'read_file')), l.terminal()]
    },
    facts: journalFacts,
    reasons: ['operator_decision_required'],
    detail: { openOperations: 65 },
  },
  {
    gate: 0,
    name: 'the tool now declares another mode',
    events: () => dispatched('read_file', 'replay_safe'),
    facts: { ...journalFacts, toolRecoveryModes: { read_file: 'never_auto_retry' } },
    reasons: ['tool_recovery_mode_changed'],
  },
  {
    gate: 1,
    name: 'a permission request has no decision',
    events: () => {
      const l = rows()
      return [l.userText('deploy'), l.permissionRequest('perm-1', 'shell'), l.terminal()]
    },
    reasons: ['pending_permission'],
    detail: { requestIds: ['perm-1'] },
  },
  {
    // An empty ledger cannot trip gate 2 alone: it has no terminal event and no history either.
    gate: 2,
    name: 'the ledger is empty',
    events: () => [],
    reasons: [
      'runtime_ledger_empty',
      'terminal_repair_failed',
      'provider_resume_head_unsupported',
      'provider_resume_boundary_unsupported',
    ],
    detail: { highWater: 0 },
  },
  {
    gate: 3,
    name: 'a row carries another turn id',
    events: () => {
      const [user, call, response, terminal] = safeRows()
      return [user!, call!, { ...response!, turnId: 'turn-9' } as RuntimeEvent, terminal!]
    },
    reasons: ['runtime_identity_mismatch'],
    detail: { count: 1, rows: [{ line: 3, eventId: 'run-1-e3', fields: ['turnId'] }] },
  },
  {
    gate: 4,
    name: 'the new run id is the source run id',
    events: () => safeRows(),
    ids: { runId: 'run-1' },
    reasons: ['continuation_identity_reused'],
    detail: { reusedFields: ['runId'] },
  },
  {
    gate: 5,
    name: 'the header says running but the ledger ended',
    events: () => safeRows(),
    given: () => ({ source: header({ status: 'running' }, ['failureClass']) }),
    reasons: ['terminal_repair_failed'],
    detail: { headerStatus: 'running', terminalEventCount: 1 },
  },
  {
    gate: 6,
    name: 'the cwd moved',
    events: () => safeRows(),
    facts: { currentCwd: '/work/other' },
    reasons: ['workspace_cwd_mismatch'],
    detail: { sourceCwd: '/work/project', currentCwd: '/work/other' },
  },
  {
    gate: 7,
    name: 'the workspace is another directory',
    events: () => safeRows(),
    facts: { currentWorkspaceIdentity: 'fs:64769:9999:/work/project' },
    reasons: ['workspace_identity_mismatch'],
  },
  {
    gate: 8,
    name: 'a background shell is still running',
    events: () => safeRows(),
    facts: { backgroundOperationsSettled: false, unsettledOperations: [{ kind: 'shell_run', id: 'shell-1' }] },
    reasons: ['background_operation_pending'],
    detail: { unsettledOperations: [{ kind: 'shell_run', id: 'shell-1' }] },
  },
  {
    gate: 9,
    name: 'the checkpoint has no ref',
    events: () => safeRows(),
    facts: { workspaceCheckpoint: { restored: true, runtimeEventHighWater: 4 } },
    reasons: ['workspace_ref_missing'],
  },
  {
    gate: 10,
    name: 'the checkpoint was not restored',
    events: () => safeRows(),
    facts: { workspaceCheckpoint: { ref: 'refs/checkpoints/1', restored: false, runtimeEventHighWater: 4 } },
    reasons: ['checkpoint_restore_failed'],
    detail: { ref: 'refs/checkpoints/1' },
  },
  {
    gate: 11,
    name: 'a tool of the history is gone',
    events: () => safeRows(),
    facts: { availableToolNames: ['shell'] },
    reasons: ['tool_catalog_mismatch'],
    detail: { missingToolNames: ['read_file'] },
  },
  {
    gate: 12,
    name: 'the history starts with the model',
    events: () => {
      const l = rows()
      return [l.modelText('hello'), l.userText('hi'), l.terminal()]
    },
    reasons: ['provider_resume_head_unsupported'],
    detail: { role: 'model' },
  },
  {
    gate: 13,
    name: 'the history ends with the model',
    events: () => {
      const l = rows()
      return [l.userText('hi'), l.modelText('hello'), l.terminal()]
    },
    reasons: ['provider_resume_boundary_unsupported'],
    detail: { role: 'model', eventId: 'run-1-e2' },
  },
]

describe('gates', () => {
  describe('when every gate passes', () => {
    it('continues', () => {
      givenLedger(safeRows()).whenPlanning().thenContinues()
    })
  })

  describe('when exactly one gate fails', () => {
    it.each(cases)('gate $gate: $name → $reasons', ({ events, given, facts, ids, reasons, detail }) => {
      const result = givenLedger(events(), given?.() ?? {})
        .whenPlanning(facts, ids)
        .thenParks(reasons)
      if (detail !== undefined) result.thenDetail(reasons[0]!, detail)
    })

    it('covers every gate row of the spec', () => {
      expect([...new Set(cases.map((c) => c.gate))]).toEqual(GateTable.map((row) => row.gate))
      expect(new Set(cases.flatMap((c) => c.reasons))).toEqual(new Set(GateTable.flatMap((row) => row.reasons)))
    })
  })

  describe('when several gates fail', () => {
    it('reports every reason once, in the spec order, whatever the evaluation order', () => {
      const l = rows()
      givenLedger(
        [
          l.modelText('I will run it'),
          l.functionCall('call-1', 'shell'),
          l.permissionRequest('perm-1', 'shell', 'call-1'),
          l.functionCall('call-2', 'deploy'),
          l.functionResponse('call-2', 'deploy'),
          l.functionCall('call-3', 'shell'),
          l.thinking('what next'),
        ],
        { source: header({ status: 'running', cwd: '/work/project/' }, ['failureClass']) },
      )
        .whenPlanning(
          {
            currentCwd: '/work/elsewhere',
            currentWorkspaceIdentity: 'fs:1:1:/work/elsewhere',
            backgroundOperationsSettled: false,
            availableToolNames: ['shell'],
            workspaceCheckpoint: { restored: false, runtimeEventHighWater: 2 },
          },
          { invocationId: 'invocation-1', turnId: 'turn-1' },
        )
        .thenParks([
          'runtime_offset_mismatch',
          'dangling_tool_state',
          'pending_permission',
          'continuation_identity_reused',
          'terminal_repair_failed',
          'workspace_cwd_mismatch',
          'workspace_identity_mismatch',
          'background_operation_pending',
          'workspace_ref_missing',
          'checkpoint_restore_failed',
          'tool_catalog_mismatch',
          'provider_resume_head_unsupported',
          'provider_resume_boundary_unsupported',
        ])
        .thenDetail('dangling_tool_state', { toolCallIds: ['call-1', 'call-3'] })
        .thenDetail('tool_catalog_mismatch', { missingToolNames: ['deploy'] })
        .thenDetail('continuation_identity_reused', { reusedFields: ['invocationId', 'turnId'] })
    })

    it('parks with the background and dangling reasons in spec order (gate 0 before gate 8)', () => {
      const l = rows()
      givenLedger([l.userText('build'), l.functionCall('call-1', 'shell'), l.terminal()])
        .whenPlanning({ backgroundOperationsSettled: false })
        .thenParks(['dangling_tool_state', 'background_operation_pending'])
    })
  })
})
