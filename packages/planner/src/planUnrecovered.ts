/**
 * The plan of a session that startup recovery could not repair (early exit 1a). The host judges it
 * from its own recovery report, before the planner's ports are asked anything: the session's files
 * are the ones recovery could not bring to a state planning can trust, so reading them would only
 * plan from what is known to be stale. The flag (exit 1) still answers first, as it does everywhere.
 */
import * as E from 'fp-ts/lib/Either.js'
import { pipe } from 'fp-ts/lib/function.js'
import { type ContinuationPlan, makeParkedPlan } from './ContinuationPlan.js'
import { recoveryRefused, resumeFeatureEnabled } from './internal/earlyExits.js'
import type { RecoveryRefusal } from './PlanningInput.js'

/**
 * The parked plan of a session whose recovery was refused: `resume_feature_disabled` without the
 * flag, else `recovery_unwritable` with the refusal as its detail. `runId` is the run asked for, if any.
 * @category constructors
 */
export const planUnrecovered = (input: {
  readonly safeBoundaryResumeEnabled: boolean
  readonly refusal: RecoveryRefusal
  readonly runId?: string
}): ContinuationPlan =>
  pipe(
    resumeFeatureEnabled(input.safeBoundaryResumeEnabled),
    E.flatMap(() => recoveryRefused(input.refusal)),
    E.toUnion,
    (findings) => makeParkedPlan(findings, { sourceRunId: input.runId ?? null, sourceRuntimeEventHighWater: null }),
  )
