/**
 * The plan of a data directory that holds no session. There is no session to read, so the ports have
 * nothing to answer: the early exits are the flag (exit 1) and the "latest" entry over an empty run
 * listing (exit 2), which finds no top-level run. A host asks for this plan instead of deriving it,
 * so "nothing to resume" parks with the planner's own reason, exactly as `/resume` does in a session
 * that has no run yet.
 */
import * as E from 'fp-ts/lib/Either.js'
import { pipe } from 'fp-ts/lib/function.js'
import { type ContinuationPlan, makeParkedPlan } from './ContinuationPlan.js'
import { noTopLevelRun, resumeFeatureEnabled } from './internal/earlyExits.js'

/**
 * The parked plan of a data directory with no session: `resume_feature_disabled` without the flag,
 * else `resume_candidate_missing` (`no_top_level_run`). It always parks: every path ends in a finding.
 * @category constructors
 */
export const planNoSession = (safeBoundaryResumeEnabled: boolean): ContinuationPlan =>
  pipe(
    resumeFeatureEnabled(safeBoundaryResumeEnabled),
    E.flatMap(() => noTopLevelRun),
    E.toUnion,
    (findings) => makeParkedPlan(findings, { sourceRunId: null, sourceRuntimeEventHighWater: null }),
  )
