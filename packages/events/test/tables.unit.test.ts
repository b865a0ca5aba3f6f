import { describe, expect, it } from 'vitest'
import {
  CodeSentences,
  ExecutionRejectionSentences,
  CommittedPrefixT1,
  FAILPOINTS,
  FAILPOINTS_T1,
  type FailpointPlanT1,
  PARK_REASONS,
  ParkReasonNextSteps,
  ParkReasonSentences,
  describeCode,
  nextStepForPark,
  describeParkReason,
  isTerminalEvent,
  isModelVisible,
  runStatusFromTerminalStatus,
} from '../src/index.js'
import { makeLedgerBuilderUnsafe } from '../src/testing.js'

describe('ParkReason', () => {
  it('lists exactly the spec codes, in the spec order, with recovery_unwritable as early exit 1a', () => {
    expect(PARK_REASONS).toEqual([
      'resume_feature_disabled',
      'recovery_unwritable',
      'resume_candidate_missing',
      'session_owner_alive',
      'safety_observation_unavailable',
      'source_run_unreadable',
      'workspace_identity_missing',
      'runtime_ledger_unreadable',
      'runtime_identity_mismatch',
      'continuation_already_exists',
      'runtime_offset_mismatch',
      'dangling_tool_state',
      'pending_permission',
      'runtime_ledger_empty',
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
      // Phase 2's codes, at the end of the table (their rank in a plan is the planner's, not this order).
      'tool_outcome_unknown',
      'tool_still_running',
      'reconcile_diverged',
      'reconcile_unreadable',
      'operator_decision_required',
      'tool_recovery_mode_changed',
      'tool_journal_corrupt',
      'source_prefix_digest_mismatch',
    ])
  })

  it('gives every code a distinct human sentence that is not the raw code', () => {
    const sentences = Object.entries(ParkReasonSentences)
    expect(new Set(sentences.map(([, s]) => s)).size).toBe(sentences.length)
    for (const [code, sentence] of sentences) {
      expect(sentence).not.toContain(code)
      expect(sentence.length).toBeGreaterThan(10)
    }
  })

  it('describes an unknown code with a generic sentence', () => {
    expect(describeParkReason('dangling_tool_state')).toBe(ParkReasonSentences.dangling_tool_state)
    expect(describeParkReason('from_the_future')).toMatch(/reason this version does not know/)
  })

  it('gives every code a next step in words, never a raw code, and one for a code it does not know', () => {
    expect(Object.keys(ParkReasonNextSteps)).toEqual(PARK_REASONS)
    for (const [code, step] of Object.entries(ParkReasonNextSteps)) {
      expect(step).not.toMatch(/\b[a-z]+_[a-z_]+\b/)
      expect(step).toMatch(/^[A-Z].*[.:]/)
      expect(nextStepForPark(code)).toBe(step)
    }
    // A call that may have run is never "resume again": a person checks first.
    for (const code of ['dangling_tool_state', 'tool_outcome_unknown', 'reconcile_unreadable'] as const) {
      expect(ParkReasonNextSteps[code]).toMatch(/^Check whether the call took effect/)
    }
    expect(nextStepForPark('from_the_future')).toMatch(/Update maka/)
  })
})

describe('ExecutionRejection', () => {
  it('holds the guard, the twelve revalidation codes and the session-history refusal', () => {
    expect(Object.keys(ExecutionRejectionSentences)).toHaveLength(17)
    expect(ExecutionRejectionSentences).toHaveProperty('session_history_unreadable')
  })
})

describe('CodeSentences', () => {
  it('holds every park reason and every execution rejection, each with its own sentence', () => {
    expect(Object.keys(CodeSentences)).toEqual([
      ...Object.keys(ParkReasonSentences),
      ...Object.keys(ExecutionRejectionSentences),
    ])
    expect(describeCode('dangling_tool_state')).toBe(ParkReasonSentences.dangling_tool_state)
    expect(describeCode('source_high_water_changed')).toBe(ExecutionRejectionSentences.source_high_water_changed)
  })

  it('describes an unknown code with the generic sentence', () => {
    expect(describeCode('from_the_future')).toBe(describeParkReason('from_the_future'))
  })
})

describe('Failpoint', () => {
  it('numbers P0–P11 without gaps', () => {
    expect(FAILPOINTS.map((f) => f.id)).toEqual(Array.from({ length: 12 }, (_, i) => `P${i}`))
  })
})

describe('Failpoint in a protocol run (FAILPOINTS_T1)', () => {
  const plans = (plan: FailpointPlanT1 | Readonly<Record<string, FailpointPlanT1>>): ReadonlyArray<FailpointPlanT1> =>
    'disposition' in plan ? [plan as FailpointPlanT1] : Object.values(plan)

  it('keeps the ids and boundaries of P0–P11, over the five prefixes of the protocol ledger', () => {
    expect(FAILPOINTS_T1.map((f) => [f.id, f.boundary])).toEqual(FAILPOINTS.map((f) => [f.id, f.boundary]))
    expect(CommittedPrefixT1).toEqual({
      before_function_call: 1,
      after_function_call: 2,
      after_tool_dispatch: 3,
      after_function_response: 4,
      after_terminal_event: 5,
    })
    expect(FAILPOINTS_T1.map((f) => f.prefix)).toEqual([
      'before_function_call',
      'after_function_call',
      ...Array.from({ length: 3 }, () => 'after_tool_dispatch'),
      ...Array.from({ length: 4 }, () => 'after_function_response'),
      ...Array.from({ length: 3 }, () => 'after_terminal_event'),
    ])
  })

  it('continues every crash that Phase 1 parked except where an effect cannot be judged', () => {
    const byId = new Map(FAILPOINTS_T1.map((f) => [f.id, f.decision]))
    expect(byId.get('P1')?.operationStatus).toBe('definitely_not_dispatched')
    for (const id of ['P2', 'P3', 'P4']) {
      const decision = byId.get(id)
      expect(decision?.operationStatus).toBe('dispatched_outcome_unknown')
      expect(decision?.plan.replay_safe).toEqual({ disposition: 'continue', action: 'reissue' })
      expect(decision?.plan.idempotent).toEqual({ disposition: 'continue', action: 'reissue' })
      expect(decision?.plan.never_auto_retry).toEqual({ disposition: 'park', reason: 'tool_outcome_unknown' })
      expect(decision?.plan.reconcile).toEqual({
        applied: { disposition: 'continue', action: 'settle_applied' },
        not_applied: { disposition: 'continue', action: 'reissue' },
        diverged: { disposition: 'park', reason: 'reconcile_diverged' },
        unreadable: { disposition: 'park', reason: 'reconcile_unreadable' },
      })
    }
  })

  it('runs a dispatched call again only for a replay-safe or keyed tool, or a probe that says not applied', () => {
    for (const { decision } of FAILPOINTS_T1) {
      if (decision.operationStatus !== 'dispatched_outcome_unknown') continue
      expect(plans(decision.plan.never_auto_retry).some((p) => p.disposition === 'continue')).toBe(false)
      const reconcile = decision.plan.reconcile
      const reissued =
        'disposition' in reconcile
          ? []
          : Object.entries(reconcile).filter(([, p]) => p.disposition === 'continue' && p.action === 'reissue')
      expect(reissued.map(([verdict]) => verdict)).toEqual(['not_applied'])
    }
  })

  it('plans nothing for the call where it was never made or is already answered', () => {
    for (const { id, decision } of FAILPOINTS_T1) {
      if (id === 'P1' || decision.operationStatus === 'dispatched_outcome_unknown') continue
      for (const mode of ['replay_safe', 'idempotent', 'reconcile', 'never_auto_retry'] as const) {
        expect(plans(decision.plan[mode])).toEqual([{ disposition: 'continue', action: null }])
      }
    }
  })
})

describe('guards', () => {
  const l = makeLedgerBuilderUnsafe()
  it('recognises terminal events only when committed with endInvocation', () => {
    const terminal = l.terminal()
    expect(isTerminalEvent(terminal)).toBe(true)
    expect(isTerminalEvent(l.partial(terminal))).toBe(false)
    expect(isTerminalEvent({ ...terminal, actions: {} })).toBe(false)
    expect(isTerminalEvent(l.modelText('x'))).toBe(false)
  })

  it('shows a model only committed, non-error content', () => {
    expect(isModelVisible(l.userText('x'))).toBe(true)
    expect(isModelVisible(l.functionResponse('c', 'shell'))).toBe(true)
    expect(isModelVisible(l.partial(l.modelText('x')))).toBe(false)
    expect(isModelVisible(l.errorFact('x'))).toBe(false)
    expect(isModelVisible(l.permissionDecision('p', 'allow'))).toBe(false)
  })

  it.each([
    ['completed', 'completed'],
    ['failed', 'failed'],
    ['aborted', 'cancelled'],
    ['cancelled', 'cancelled'],
  ] as const)('maps terminal status %s to run status %s', (status, run) => {
    expect(runStatusFromTerminalStatus(status)).toBe(run)
  })
})
