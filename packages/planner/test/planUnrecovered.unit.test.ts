import { PARK_REASONS, ParkReasonSentences } from '@maka/events'
import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { type RecoveryRefusal, planUnrecovered } from '../src/index.js'
import { makeParkFinding } from '../src/ParkFinding.js'
import { EarlyExitTable, rejectionReasonsOf } from '../src/internal/GateTable.js'
import { recoveryWritten } from '../src/internal/earlyExits.js'

const refusal: RecoveryRefusal = { operation: 'open', code: 'EROFS', path: 'sessions/s1/owner.lock' }

describe('recoveryWritten (early exit 1a)', () => {
  describe('when recovery wrote what the session needed', () => {
    it('passes', () => {
      expect(recoveryWritten(null)).toEqual(E.right(undefined))
    })
  })

  describe('when the data directory refused the repair', () => {
    it('parks recovery_unwritable with the operation, the errno name and the path inside the data dir', () => {
      expect(recoveryWritten(refusal)).toEqual(
        E.left([
          { code: 'recovery_unwritable', message: ParkReasonSentences.recovery_unwritable, detail: { ...refusal } },
        ]),
      )
    })
  })
})

describe('planUnrecovered', () => {
  describe('when the flag is on', () => {
    it('parks with recovery_unwritable alone, naming no source run', () => {
      expect(planUnrecovered({ safeBoundaryResumeEnabled: true, refusal })).toEqual({
        disposition: 'park',
        rejectionReasons: ['recovery_unwritable'],
        diagnostics: [
          {
            code: 'recovery_unwritable',
            severity: 'error',
            message: ParkReasonSentences.recovery_unwritable,
            detail: refusal,
          },
        ],
        sourceRunId: null,
        sourceRuntimeEventHighWater: null,
        sourceRuntimeEventPrefixDigest: null,
      })
    })

    it('names the run that was asked for', () => {
      expect(planUnrecovered({ safeBoundaryResumeEnabled: true, refusal, runId: 'run-1' }).sourceRunId).toBe('run-1')
    })
  })

  describe('when the flag is off', () => {
    it('parks on the flag first (exit 1 precedes exit 1a)', () => {
      expect(planUnrecovered({ safeBoundaryResumeEnabled: false, refusal }).rejectionReasons).toEqual([
        'resume_feature_disabled',
      ])
    })
  })
})

describe('the order of early exit 1a', () => {
  it('stands after the flag and before every exit that reads the session', () => {
    const reasons = EarlyExitTable.map((row) => row.reason)
    expect(reasons.slice(0, 3)).toEqual(['resume_feature_disabled', 'recovery_unwritable', 'resume_candidate_missing'])
    expect(PARK_REASONS.slice(0, 3)).toEqual(reasons.slice(0, 3))
  })

  it('sorts findings by that order', () => {
    const findings = [
      makeParkFinding('resume_candidate_missing'),
      makeParkFinding('recovery_unwritable'),
      makeParkFinding('resume_feature_disabled'),
    ]
    expect(rejectionReasonsOf(findings)).toEqual([
      'resume_feature_disabled',
      'recovery_unwritable',
      'resume_candidate_missing',
    ])
  })
})
