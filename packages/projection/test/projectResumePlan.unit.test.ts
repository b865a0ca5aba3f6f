import { CommittedPrefix, FAILPOINTS, type RuntimeEvent } from '@maka/events'
import { makeLedgerBuilderUnsafe } from '@maka/events/testing'
import { describe, expect, it } from 'vitest'
import { type ProjectionOptions, type ResumePlan, projectResumePlan } from '../src/index.js'

const givenLedger = (events: ReadonlyArray<RuntimeEvent>) => ({
  whenProjecting: (options: ProjectionOptions = {}) => {
    const plan = projectResumePlan(events, options)
    return {
      plan,
      thenDisposition(disposition: ResumePlan['disposition'], reasons: ResumePlan['rejectionReasons'] = []) {
        expect(plan.disposition).toBe(disposition)
        expect(plan.rejectionReasons).toEqual(reasons)
        return this
      },
      thenDiagnostics(codes: ReadonlyArray<string>) {
        expect(plan.diagnostics.map((d) => d.code)).toEqual(codes)
        return this
      },
      thenReplayIds(ids: ReadonlyArray<string>) {
        expect(plan.replayRuntimeEvents.map((e) => e.id)).toEqual(ids)
        return this
      },
    }
  },
})

const b = () => makeLedgerBuilderUnsafe()

describe('projectResumePlan', () => {
  describe('when classifying tool operations', () => {
    const cases: ReadonlyArray<{
      readonly name: string
      readonly build: () => ReadonlyArray<RuntimeEvent>
      readonly status: string
      readonly diagnostics: ReadonlyArray<string>
    }> = [
      {
        name: 'call then response → succeeded',
        build: () => {
          const l = b()
          return [l.userText('hi'), l.functionCall('c1', 'read_file'), l.functionResponse('c1', 'read_file')]
        },
        status: 'succeeded',
        diagnostics: [],
      },
      {
        name: 'call then error response → failed',
        build: () => {
          const l = b()
          return [l.userText('hi'), l.functionCall('c1', 'shell'), l.functionResponse('c1', 'shell', 'boom', true)]
        },
        status: 'failed',
        diagnostics: [],
      },
      {
        name: 'isError false counts as success',
        build: () => {
          const l = b()
          return [l.userText('hi'), l.functionCall('c1', 'shell'), l.functionResponse('c1', 'shell', 'ok', false)]
        },
        status: 'succeeded',
        diagnostics: [],
      },
      {
        name: 'call without response → indeterminate',
        build: () => {
          const l = b()
          return [l.userText('hi'), l.functionCall('c1', 'write_file')]
        },
        status: 'indeterminate',
        diagnostics: ['pending_tool_result'],
      },
      {
        name: 'response without a call → corruption',
        build: () => {
          const l = b()
          return [l.userText('hi'), l.functionResponse('c1', 'write_file')]
        },
        status: 'corruption',
        diagnostics: ['unmatched_tool_result'],
      },
      {
        name: 'response before its call → corruption',
        build: () => {
          const l = b()
          return [l.userText('hi'), l.functionResponse('c1', 'write_file'), l.functionCall('c1', 'write_file')]
        },
        status: 'corruption',
        diagnostics: ['unmatched_tool_result', 'tool_recovery_corruption'],
      },
      {
        name: 'a second response → corruption',
        build: () => {
          const l = b()
          return [
            l.userText('hi'),
            l.functionCall('c1', 'shell'),
            l.functionResponse('c1', 'shell'),
            l.functionResponse('c1', 'shell'),
          ]
        },
        status: 'corruption',
        diagnostics: ['tool_recovery_corruption'],
      },
      {
        name: 'a second call with the same id → corruption',
        build: () => {
          const l = b()
          return [
            l.userText('hi'),
            l.functionCall('c1', 'shell'),
            l.functionResponse('c1', 'shell'),
            l.functionCall('c1', 'shell'),
          ]
        },
        status: 'corruption',
        diagnostics: ['tool_recovery_corruption'],
      },
      {
        name: 'a response naming another tool → corruption',
        build: () => {
          const l = b()
          return [l.userText('hi'), l.functionCall('c1', 'shell'), l.functionResponse('c1', 'read_file')]
        },
        status: 'corruption',
        diagnostics: ['tool_name_mismatch'],
      },
    ]
    it.each(cases)('$name', ({ build, status, diagnostics }) => {
      const { plan } = givenLedger(build()).whenProjecting().thenDiagnostics(diagnostics)
      expect(plan.operations.map((op) => op.status)).toEqual([status])
      const blocked = diagnostics.length > 0
      expect(plan.disposition).toBe(blocked ? 'blocked' : 'safe_replay')
      expect(plan.rejectionReasons).toEqual(blocked ? ['dangling_tool_state'] : [])
      expect(plan.requiresVerification).toBe(status === 'indeterminate')
    })

    it('records call id, name, args, event ids and isError of an operation', () => {
      const l = b()
      const events = [
        l.userText('hi'),
        l.functionCall('c1', 'shell', { cmd: 'ls' }),
        l.functionResponse('c1', 'shell', 'x', true),
      ]
      expect(projectResumePlan(events).operations).toEqual([
        {
          toolCallId: 'c1',
          toolName: 'shell',
          args: { cmd: 'ls' },
          status: 'failed',
          callEventId: 'run-1-e2',
          responseEventId: 'run-1-e3',
          isError: true,
        },
      ])
    })

    it('ignores partial calls and responses', () => {
      const l = b()
      const events = [
        l.userText('hi'),
        l.partial(l.functionCall('c1', 'shell')),
        l.functionCall('c2', 'shell'),
        l.partial(l.functionResponse('c2', 'shell')),
      ]
      const plan = projectResumePlan(events)
      expect(plan.operations.map((op) => [op.toolCallId, op.status])).toEqual([['c2', 'indeterminate']])
    })

    it('keeps operations in order of first appearance', () => {
      const l = b()
      const events = [
        l.userText('hi'),
        l.functionCall('b', 'shell'),
        l.functionCall('a', 'read_file'),
        l.functionResponse('a', 'read_file'),
        l.functionResponse('b', 'shell'),
      ]
      expect(projectResumePlan(events).operations.map((op) => op.toolCallId)).toEqual(['b', 'a'])
    })
  })

  describe('when an expected high-water is given', () => {
    it('rejects a prefix of another length with runtime_offset_mismatch', () => {
      const l = b()
      givenLedger([l.userText('hi')])
        .whenProjecting({ expectedRuntimeEventHighWater: 2 })
        .thenDisposition('blocked', ['runtime_offset_mismatch'])
        .thenDiagnostics(['runtime_offset_mismatch'])
    })

    it('accepts a prefix of exactly that length', () => {
      const l = b()
      givenLedger([l.userText('hi')])
        .whenProjecting({ expectedRuntimeEventHighWater: 1 })
        .thenDisposition('safe_replay')
    })

    it('orders runtime_offset_mismatch before dangling_tool_state, deduplicated', () => {
      const l = b()
      givenLedger([l.userText('hi'), l.functionCall('c1', 'shell'), l.functionCall('c2', 'shell')])
        .whenProjecting({ expectedRuntimeEventHighWater: 9 })
        .thenDisposition('blocked', ['runtime_offset_mismatch', 'dangling_tool_state'])
        .thenDiagnostics(['runtime_offset_mismatch', 'pending_tool_result', 'pending_tool_result'])
    })
  })

  describe('when filtering the replay', () => {
    it('drops partial events, keeps content-less facts and complete pairs, drops unresolved calls', () => {
      const l = b()
      const events = [
        l.userText('hi'), // e1
        l.partial(l.modelText('streaming')), // e2
        l.permissionRequest('p1', 'shell'), // e3
        l.permissionDecision('p1', 'allow'), // e4
        l.functionCall('c1', 'shell'), // e5
        l.functionResponse('c1', 'shell'), // e6
        l.functionCall('c2', 'write_file'), // e7 (unresolved)
        l.errorFact('oops'), // e8
        l.terminal(), // e9
      ]
      givenLedger(events)
        .whenProjecting()
        .thenReplayIds(['run-1-e1', 'run-1-e3', 'run-1-e4', 'run-1-e5', 'run-1-e6', 'run-1-e8', 'run-1-e9'])
    })

    it('drops both sides of a corrupted pair', () => {
      const l = b()
      const events = [l.userText('hi'), l.functionCall('c1', 'shell'), l.functionResponse('c1', 'read_file')]
      givenLedger(events).whenProjecting().thenReplayIds(['run-1-e1'])
    })

    it('keeps the continuation-start fact', () => {
      const l = b()
      const start = l.continuationStart({
        sourceInvocationId: 'i0' as never,
        sourceRunId: 'r0' as never,
        sourceTurnId: 't0' as never,
        sourceRuntimeEventHighWater: 3 as never,
      })
      givenLedger([start, l.modelText('done')])
        .whenProjecting()
        .thenReplayIds(['run-1-e1', 'run-1-e2'])
    })
  })

  describe('when projecting the four committed prefixes of the failpoint table', () => {
    const reference = (): ReadonlyArray<RuntimeEvent> => {
      const l = b()
      return [
        l.userText('list the files'),
        l.functionCall('call-1', 'list_dir', { path: '.' }),
        l.functionResponse('call-1', 'list_dir', ['a.txt']),
        l.terminal(),
      ]
    }
    it.each(FAILPOINTS)('$id ($prefix) reaches the required decision', ({ prefix, decision }) => {
      const events = reference().slice(0, CommittedPrefix[prefix])
      const plan = projectResumePlan(events)
      expect(plan.disposition).toBe(decision.disposition)
      expect(plan.rejectionReasons).toEqual(decision.rejectionReasons)
      const statuses = plan.operations.map((op) => op.status)
      if (decision.operationStatus === 'none') expect(statuses).toEqual([])
      else if (decision.operationStatus === 'indeterminate') expect(statuses).toEqual(['indeterminate'])
      else expect(['succeeded', 'failed']).toContain(statuses[0])
      expect(plan.replayRuntimeEvents.some((e) => e.content?.kind === 'function_call')).toBe(decision.callInReplay)
      expect(plan.sourceRuntimeEventHighWater).toBe(events.length)
      if (prefix === 'after_terminal_event') expect(plan.replayRuntimeEvents.at(-1)?.status).toBe('failed')
    })
  })

  describe('when projecting the same prefix twice', () => {
    it('returns deep-equal plans and leaves the input untouched', () => {
      const l = b()
      const events = [l.userText('hi'), l.functionCall('c1', 'shell', { a: [1, 2] }), l.functionResponse('c1', 'shell')]
      const before = structuredClone(events)
      const first = projectResumePlan(events)
      const second = projectResumePlan(events)
      expect(second).toEqual(first)
      expect(events).toEqual(before)
    })

    it('projects an empty ledger as safe_replay with high-water 0', () => {
      givenLedger([]).whenProjecting().thenDisposition('safe_replay').thenReplayIds([])
    })
  })
})
