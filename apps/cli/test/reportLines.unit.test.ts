/**
 * The words of a plan's boundary and of a session's line: no `?` standing for a value the plan does
 * not have, no "no source run" for a session that has runs, no `running [running]`.
 */
import { describe, expect, it } from 'vitest'
import type { ContinuationPlan } from '@maka/planner'
import type { SessionSummary } from '@maka/sessions'
import { makeStyle } from '../src/Style.js'
import { sessionLine } from '../src/commands/sessions.js'
import { planLines } from '../src/reportLines.js'

const plain = makeStyle(false)

const parked = (fields: Partial<ContinuationPlan>): ContinuationPlan => ({
  disposition: 'park',
  rejectionReasons: [],
  diagnostics: [],
  sourceRunId: null,
  sourceRuntimeEventHighWater: null,
  sourceRuntimeEventPrefixDigest: null,
  ...fields,
})

const summary = (fields: Partial<SessionSummary>): SessionSummary => ({
  sessionId: 's1',
  cwd: '/w',
  createdAt: '2026-12-05T10:00:00.000Z',
  runCount: 1,
  unreadableRuns: [],
  latestRun: { runId: 'r1', kind: 'turn', status: 'running', createdAt: '2026-12-05T10:00:00.000Z' },
  interrupted: false,
  ownerAlive: true,
  ...fields,
})

describe('planLines', () => {
  describe('when the plan names a source run but no high-water', () => {
    it('names the run and no "high-water ?"', () => {
      const lines = planLines(parked({ sourceRunId: 'r1', rejectionReasons: ['runtime_ledger_unreadable'] }), plain)
      expect(lines[0]).toBe('park — source run r1')
    })
  })

  describe('when the plan stopped before choosing a run', () => {
    it.each<[string, ContinuationPlan['rejectionReasons'], string]>([
      ['the flag is off', ['resume_feature_disabled'], 'park — stopped before choosing a run'],
      ['another process owns the session', ['session_owner_alive'], 'park — stopped before choosing a run'],
      ['the session has no run to resume', ['resume_candidate_missing'], 'park — no run to resume'],
    ])('says so when %s, never "no source run"', (_what, reasons, first) => {
      expect(planLines(parked({ rejectionReasons: reasons }), plain)[0]).toBe(first)
    })
  })
})

describe('sessionLine', () => {
  it('says running once for a running run whose owner is alive', () => {
    const line = sessionLine(summary({}), plain)
    expect(line).toContain('turn r1 running  ')
    expect(line).not.toContain('[running]')
  })

  it('marks a session a live process holds while its run is not running as in use', () => {
    const line = sessionLine(
      summary({ latestRun: { runId: 'r1', kind: 'turn', status: 'completed', createdAt: '2026-12-05T10:00:00.000Z' } }),
      plain,
    )
    expect(line).toContain('turn r1 completed [in use]')
  })
})
