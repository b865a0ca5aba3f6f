import { ParkReasonSentences } from '@maka/events'
import * as E from 'fp-ts/lib/Either.js'
import { pipe } from 'fp-ts/lib/function.js'
import { describe, expect, it } from 'vitest'
import { latestCandidate, planNoSession } from '../src/index.js'
import { makeParkedPlan } from '../src/ContinuationPlan.js'
import { resumeFeatureEnabled } from '../src/internal/earlyExits.js'

// The early exits a planner runs over an empty run listing, as a host once derived them itself.
const earlyExitsOverNoRuns = (enabled: boolean) =>
  pipe(
    resumeFeatureEnabled(enabled),
    E.flatMap(() => latestCandidate([])),
  )

describe('planNoSession', () => {
  describe('when the flag is on', () => {
    it('parks with resume_candidate_missing (no_top_level_run), naming no source run', () => {
      expect(planNoSession(true)).toEqual({
        disposition: 'park',
        rejectionReasons: ['resume_candidate_missing'],
        diagnostics: [
          {
            code: 'resume_candidate_missing',
            severity: 'error',
            message: ParkReasonSentences.resume_candidate_missing,
            detail: { reason: 'no_top_level_run' },
          },
        ],
        sourceRunId: null,
        sourceRuntimeEventHighWater: null,
        sourceRuntimeEventPrefixDigest: null,
      })
    })
  })

  describe('when the flag is off', () => {
    it('parks with resume_feature_disabled alone', () => {
      expect(planNoSession(false).rejectionReasons).toEqual(['resume_feature_disabled'])
    })
  })

  it.each([true, false])('is the plan the early exits give an empty run listing (flag %s)', (enabled) => {
    const exits = earlyExitsOverNoRuns(enabled)
    if (E.isRight(exits)) throw new Error('an empty run listing has no candidate')
    expect(planNoSession(enabled)).toEqual(
      makeParkedPlan(exits.left, { sourceRunId: null, sourceRuntimeEventHighWater: null }),
    )
  })
})
