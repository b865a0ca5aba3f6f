import { describe, expect, it } from 'vitest'
import {
  CodeSentences,
  ExecutionRejectionSentences,
  FAILPOINTS,
  PARK_REASONS,
  ParkReasonSentences,
  describeCode,
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
})

describe('ExecutionRejection', () => {
  it('holds the guard, the twelve revalidation codes and the session-history refusal', () => {
    expect(Object.keys(ExecutionRejectionSentences)).toHaveLength(15)
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
