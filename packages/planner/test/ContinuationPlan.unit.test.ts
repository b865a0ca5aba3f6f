import { describe, expect, it } from 'vitest'
import { makeParkedPlan } from '../src/ContinuationPlan.js'
import { makeParkFinding } from '../src/ParkFinding.js'
import { rejectionReasonsOf, sortFindings } from '../src/internal/GateTable.js'
import { givenLedger, rows, safeRows } from './givenLedger.js'

const keys = (o: object | undefined) => Object.keys(o ?? {}).sort()

describe('ContinuationPlan', () => {
  describe('when the plan continues', () => {
    const { plan } = givenLedger(safeRows(), { ledger: { tornTail: { offset: 10, length: 3 } } })
      .whenPlanning({ workspaceCheckpoint: { ref: 'cp-1', restored: true, runtimeEventHighWater: 4 } })
      .thenContinues()

    it('survives a JSON round trip unchanged', () => {
      expect(JSON.parse(JSON.stringify(plan))).toStrictEqual(plan)
    })

    it('has exactly the fields of the spec', () => {
      expect(keys(plan)).toEqual(
        [
          'continuation',
          'diagnostics',
          'disposition',
          'rejectionReasons',
          'sourceRunId',
          'sourceRuntimeEventHighWater',
          'sourceRuntimeEventPrefixDigest',
        ].sort(),
      )
      expect(keys(plan.continuation)).toEqual(
        [
          'sessionId',
          'invocationId',
          'runId',
          'turnId',
          'sourceInvocationId',
          'sourceRunId',
          'sourceTurnId',
          'sourceRuntimeEventHighWater',
          'runtimeContext',
          'sourceRuntimeContext',
          'safetySnapshot',
        ].sort(),
      )
      expect(keys(plan.continuation?.safetySnapshot)).toEqual(
        ['workspaceIdentity', 'backgroundOperationsSettled', 'availableToolNames', 'workspaceCheckpoint'].sort(),
      )
      expect(keys(plan.continuation?.safetySnapshot.workspaceCheckpoint)).toEqual(['ref', 'runtimeEventHighWater'])
      expect(plan.diagnostics.map(keys)).toEqual([['code', 'detail', 'message', 'severity']])
    })

    it('omits the checkpoint from the snapshot when none was given', () => {
      const { plan: without } = givenLedger(safeRows()).whenPlanning().thenContinues()
      expect(keys(without.continuation?.safetySnapshot)).toEqual([
        'availableToolNames',
        'backgroundOperationsSettled',
        'workspaceIdentity',
      ])
    })
  })

  describe('when the plan parks', () => {
    const l = rows()
    const { plan } = givenLedger([l.userText('x'), l.functionCall('c1', 'shell'), l.permissionRequest('p1', 'shell')])
      .whenPlanning({ backgroundOperationsSettled: false, unsettledOperations: [{ kind: 'shell_run', id: 's1' }] })
      .thenParks([
        'dangling_tool_state',
        'pending_permission',
        'terminal_repair_failed',
        'background_operation_pending',
      ])

    it('survives a JSON round trip unchanged and has no continuation key', () => {
      expect(JSON.parse(JSON.stringify(plan))).toStrictEqual(plan)
      expect(keys(plan)).toEqual(
        [
          'diagnostics',
          'disposition',
          'rejectionReasons',
          'sourceRunId',
          'sourceRuntimeEventHighWater',
          'sourceRuntimeEventPrefixDigest',
        ].sort(),
      )
    })

    it('turns every finding into an error diagnostic with the human sentence', () => {
      for (const d of plan.diagnostics) {
        expect(d.severity).toBe('error')
        expect(d.message).not.toBe(d.code)
        expect(d.message.length).toBeGreaterThan(10)
      }
    })
  })

  describe('when findings repeat or arrive out of order', () => {
    const findings = [
      makeParkFinding('tool_catalog_mismatch', { missingToolNames: ['a'] }),
      makeParkFinding('runtime_identity_mismatch', { n: 1 }),
      makeParkFinding('dangling_tool_state', {}),
      makeParkFinding('runtime_identity_mismatch', { n: 2 }),
      makeParkFinding('runtime_offset_mismatch', {}),
    ] as const

    it('lists each reason once, in gate order', () => {
      expect(rejectionReasonsOf(findings)).toEqual([
        'runtime_offset_mismatch',
        'dangling_tool_state',
        'runtime_identity_mismatch',
        'tool_catalog_mismatch',
      ])
    })

    it('keeps every finding as a diagnostic, stable within one code', () => {
      expect(sortFindings(findings).map((f) => f.detail)).toEqual([
        {},
        {},
        { n: 1 },
        { n: 2 },
        { missingToolNames: ['a'] },
      ])
      const plan = makeParkedPlan(findings, { sourceRunId: 'run-1', sourceRuntimeEventHighWater: 3 })
      expect(plan.diagnostics).toHaveLength(5)
      expect(plan.rejectionReasons).toHaveLength(4)
    })
  })
})
