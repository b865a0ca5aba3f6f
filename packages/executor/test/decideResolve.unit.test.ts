import { describe, expect, it } from 'vitest'
import {
  type AgentRun,
  RuntimeEvent,
  makeAbsolutePathUnsafe,
  makeIsoTimestampUnsafe,
  makeNonEmptyStringUnsafe,
  makeRunIdUnsafe,
} from '@maka/events'
import type { ContinuationPlan } from '@maka/planner'
import type { ChainProjection, OpenOperation } from '@maka/projection'
import * as E from 'fp-ts/lib/Either.js'
import { type ResolveJudgement, checkResolveRequest, decideAdjudication, selectResolveOperation } from '../src/index.js'

const ON = { safeBoundaryResumeEnabled: true, toolJournal: true, durableAppend: true }

const open = (over: Partial<OpenOperation> = {}): OpenOperation => ({
  operationId: 'run-1-o2',
  toolCallId: 'call-1',
  toolName: 'append_log',
  runId: 'run-1',
  row: 2,
  callEventId: 'run-1-e2',
  status: 'dispatched_outcome_unknown',
  attempts: 1,
  recordedMode: 'never_auto_retry',
  reconcileBasis: null,
  argsDigest: null,
  adoptions: 0,
  args: {},
  ...over,
})

const projection = (operations: ReadonlyArray<OpenOperation>, corrupt = false): ChainProjection => ({
  journaled: true,
  openOperations: operations,
  corruptions: corrupt
    ? [
        {
          kind: 'duplicate_response',
          runId: 'run-1',
          eventId: 'run-1-e5',
          operationId: 'run-1-o2',
          toolCallId: 'call-1',
        },
      ]
    : [],
  isOpen: (id) => operations.some((op) => op.operationId === id),
  settledCount: 0,
})

const plan = (over: Partial<ContinuationPlan> = {}): ContinuationPlan => ({
  disposition: 'park',
  rejectionReasons: ['tool_outcome_unknown'],
  diagnostics: [],
  sourceRunId: 'run-1',
  sourceRuntimeEventHighWater: 4,
  sourceRuntimeEventPrefixDigest: null,
  ...over,
})

const judgement = (over: Partial<ResolveJudgement> = {}): ResolveJudgement => ({
  plan: plan(),
  calls: [{ operationId: 'run-1-o2', toolCallId: 'call-1', toolName: 'append_log', runId: 'run-1' }],
  projection: projection([open()]),
  sourceEvents: [],
  sourceProtocol: true,
  ...over,
})

const codeOf = (result: E.Either<{ readonly codes: ReadonlyArray<string> }, unknown>) =>
  E.isLeft(result) ? result.left.codes : 'selected'

describe('decideResolve', () => {
  describe('checkResolveRequest', () => {
    it('answers resolve_unavailable first, naming every missing condition', () => {
      const checked = checkResolveRequest(
        { sessionId: 's', target: {}, verdict: 'nonsense', actor: 'cli' },
        { safeBoundaryResumeEnabled: false, toolJournal: false, durableAppend: false },
      )
      expect(E.isLeft(checked) && checked.left).toMatchObject({ _tag: 'Unavailable', code: 'resolve_unavailable' })
      if (E.isRight(checked)) return
      expect(checked.left.message).toContain('MAKA_RUNTIME_SAFE_BOUNDARY_RESUME=1')
      expect(checked.left.message).toContain('MAKA_RUNTIME_TOOL_JOURNAL=0')
      expect(checked.left.message).toContain('durable')
    })

    it('then the verdict, the one target, the actor and the output', () => {
      const base = { sessionId: 's', target: { callId: 'c' }, verdict: 'applied', actor: 'cli' }
      const codes = [
        checkResolveRequest({ ...base, verdict: 'done' }, ON),
        checkResolveRequest({ ...base, target: { callId: 'c', operationId: 'o' } }, ON),
        checkResolveRequest({ ...base, target: { callId: '' } }, ON),
        checkResolveRequest({ ...base, actor: 'robot' }, ON),
        checkResolveRequest({ ...base, output: 'é'.repeat(32 * 1024 + 1) }, ON),
      ].map((r) => (E.isLeft(r) ? r.left.code : 'ok'))
      expect(codes).toEqual(['invalid_verdict', 'invalid_target', 'invalid_target', 'invalid_actor', 'invalid_output'])
      expect(checkResolveRequest({ ...base, output: 'é'.repeat(32 * 1024) }, ON)).toEqual(
        E.right({ ...base, output: 'é'.repeat(32 * 1024) }),
      )
    })
  })

  describe('selectResolveOperation', () => {
    it('refuses in the contract order: corruption, unknown, ambiguous, settled, running, contradiction', () => {
      const request = { target: { callId: 'call-1' }, verdict: 'applied' } as const
      expect(codeOf(selectResolveOperation(judgement({ projection: projection([open()], true) }), request))).toEqual([
        'tool_journal_corrupt',
      ])
      expect(codeOf(selectResolveOperation(judgement(), { ...request, target: { callId: 'nope' } }))).toEqual([
        'resolve_call_unknown',
      ])
      const twice = judgement({
        calls: [
          { operationId: 'run-0-o2', toolCallId: 'call-1', toolName: 'read_file', runId: 'run-0' },
          { operationId: 'run-1-o2', toolCallId: 'call-1', toolName: 'append_log', runId: 'run-1' },
        ],
      })
      const ambiguous = selectResolveOperation(twice, request)
      expect(codeOf(ambiguous)).toEqual(['resolve_call_ambiguous'])
      expect(E.isLeft(ambiguous) && ambiguous.left.detail).toEqual({
        operations: [
          { operationId: 'run-0-o2', toolCallId: 'call-1', toolName: 'read_file', runId: 'run-0' },
          { operationId: 'run-1-o2', toolCallId: 'call-1', toolName: 'append_log', runId: 'run-1' },
        ],
      })
      // --operation names one of them.
      expect(codeOf(selectResolveOperation(twice, { ...request, target: { operationId: 'run-1-o2' } }))).toBe(
        'selected',
      )
      expect(codeOf(selectResolveOperation(judgement({ projection: projection([]) }), request))).toEqual([
        'resolve_call_settled',
      ])
      const background = judgement({ plan: plan({ rejectionReasons: ['background_operation_pending'] }) })
      expect(codeOf(selectResolveOperation(background, request))).toEqual(['resolve_call_running'])
      const reattach = (reason: 'tool_still_running' | 'tool_outcome_unknown') =>
        judgement({
          projection: projection([open({ recordedMode: 'reattach', toolName: 'shell' })]),
          plan: plan({
            openToolOperations: [
              {
                operationId: 'run-1-o2',
                toolCallId: 'call-1',
                toolName: 'shell',
                runId: 'run-1',
                status: 'dispatched_outcome_unknown',
                recoveryMode: 'reattach',
                attempts: 1,
                adoptions: 0,
                action: null,
                reason,
              },
            ],
          }),
        })
      expect(codeOf(selectResolveOperation(reattach('tool_still_running'), request))).toEqual(['resolve_call_running'])
      expect(codeOf(selectResolveOperation(reattach('tool_outcome_unknown'), request))).toBe('selected')
      const undispatched = judgement({ projection: projection([open({ status: 'definitely_not_dispatched' })]) })
      expect(codeOf(selectResolveOperation(undispatched, request))).toEqual(['resolve_verdict_contradicts_journal'])
      expect(codeOf(selectResolveOperation(undispatched, { ...request, verdict: 'not_applied' }))).toBe('selected')
    })
  })

  describe('decideAdjudication', () => {
    const source = {
      runId: 'run-1',
      sessionId: 'session-1',
      turnId: 'turn-1',
      invocationId: 'inv-1',
      status: 'failed',
      cwd: makeAbsolutePathUnsafe('/work/project'),
      providerId: 'openai',
      modelId: 'model-a',
      workspaceIdentity: 'ws-1',
      permissionMode: 'ask',
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:05.000Z',
    } as AgentRun
    const decided = (verdict: 'applied' | 'not_applied' | 'failed', output?: string) =>
      decideAdjudication({
        ids: {
          runId: makeRunIdUnsafe('run-2'),
          turnId: makeNonEmptyStringUnsafe('turn-2'),
          invocationId: makeNonEmptyStringUnsafe('inv-2'),
        },
        sourceHeader: source,
        sourceRuntimeEventHighWater: 4,
        prefixDigest: `sha256:${'a'.repeat(64)}` as never,
        operation: { operationId: 'run-1-o2', toolCallId: 'call-1', toolName: 'append_log' },
        verdict,
        actor: 'tui',
        ...(output === undefined ? {} : { output }),
        createdAt: makeIsoTimestampUnsafe('2026-01-02T00:00:00.000Z'),
        ts: 1_767_312_000_000,
      })

    it('decides a continuation of the source boundary whose rows are valid and name the one operation', () => {
      const { start, response, terminal } = decided('not_applied')
      expect(start.header).toMatchObject({
        runId: 'run-2',
        cwd: '/work/project',
        providerId: 'openai',
        modelId: 'model-a',
        workspaceIdentity: 'ws-1',
        permissionMode: 'ask',
        continuationSource: { sourceRunId: 'run-1', sourceRuntimeEventHighWater: 4 },
      })
      expect(start.claim.sourceRuntimeEventPrefixDigest).toBe(`sha256:${'a'.repeat(64)}`)
      expect(start.startRow.actions?.settlementPlan).toEqual([
        { operationId: 'run-1-o2', toolCallId: 'call-1', action: 'adjudicate' },
      ])
      for (const row of [start.startRow, response, terminal.event]) expect(RuntimeEvent.is(row)).toBe(true)
      expect(response).toMatchObject({
        id: 'run-2-e2',
        role: 'tool',
        author: 'user',
        content: {
          kind: 'function_response',
          id: 'call-1',
          name: 'append_log',
          result: 'An operator confirmed that this call did not take effect. It was not run again.',
          isError: true,
        },
        actions: {
          toolOutcome: {
            settlementOrigin: 'operator_adjudication',
            adjudication: { verdict: 'not_applied', actor: 'tui' },
          },
        },
      })
      expect(terminal).toMatchObject({ status: 'failed', headerFields: { failureClass: 'operator_resolved' } })
      expect(terminal.event.id).toBe('run-2-e3')
    })

    it('gives each verdict its result text, or the person’s output; only applied is not an error', () => {
      expect(decided('applied').response.content).toEqual({
        kind: 'function_response',
        id: 'call-1',
        name: 'append_log',
        result: 'An operator confirmed that this call took effect; its output was not recorded.',
      })
      expect(decided('failed').response.content).toMatchObject({
        result: 'An operator recorded that this call failed.',
        isError: true,
      })
      expect(decided('applied', 'published 1.2.3').response.content).toMatchObject({ result: 'published 1.2.3' })
    })
  })
})
