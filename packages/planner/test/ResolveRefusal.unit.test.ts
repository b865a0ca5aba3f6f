import { describe, expect, it } from 'vitest'
import { isParkReason } from '@maka/events'
import { EARLY_EXIT_REASONS, ResolveRefusalSentences, isResolveRefusalCode } from '../src/index.js'

describe('ResolveRefusal', () => {
  it('holds the six resolve codes in the order the checks run, each with a sentence', () => {
    expect(Object.keys(ResolveRefusalSentences)).toEqual([
      'resolve_unavailable',
      'resolve_call_unknown',
      'resolve_call_ambiguous',
      'resolve_call_settled',
      'resolve_call_running',
      'resolve_verdict_contradicts_journal',
    ])
    for (const [code, sentence] of Object.entries(ResolveRefusalSentences)) {
      expect(isResolveRefusalCode(code)).toBe(true)
      // A resolve code never shadows a park reason: hosts look both up.
      expect(isParkReason(code)).toBe(false)
      expect(sentence).toMatch(/^[A-Z].*\.$/)
    }
    expect(isResolveRefusalCode('dangling_tool_state')).toBe(false)
  })

  it('names the early exits a resolve refuses with first', () => {
    expect(EARLY_EXIT_REASONS).toEqual([
      'resume_feature_disabled',
      'recovery_unwritable',
      'resume_candidate_missing',
      'session_owner_alive',
      'safety_observation_unavailable',
      'source_run_unreadable',
      'workspace_identity_missing',
      'runtime_ledger_unreadable',
      'runtime_identity_mismatch',
      'source_prefix_digest_mismatch',
      'continuation_already_exists',
    ])
  })
})
