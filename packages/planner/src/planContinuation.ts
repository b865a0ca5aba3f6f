/**
 * The pure planner: already-loaded data in, a plan out. Early exits 6–9 (and the ancestor walk)
 * run as a short-circuiting pipeline; once they pass, gates 0–13 are evaluated together and every
 * failure is collected. No I/O, no clock, no randomness: the same input gives a deep-equal plan.
 */
import { type AgentRun, makeNonNegativeIntUnsafe } from '@maka/events'
import type { LedgerSnapshot } from '@maka/stores'
import { projectResumePlan } from '@maka/projection'
import * as E from 'fp-ts/lib/Either.js'
import { pipe } from 'fp-ts/lib/function.js'
import {
  type Continuation,
  type ContinuationIds,
  type ContinuationPlan,
  type PlanDiagnostic,
  makeContinuePlan,
  makeParkedPlan,
  makeWarning,
} from './ContinuationPlan.js'
import { boundaryUnclaimed, ledgerRowsOwned, sourceLedgerReadable, workspaceIdentityRecorded } from './earlyExits.js'
import { type GateView, evaluateGates } from './gates.js'
import type { HostFacts } from './HostFacts.js'
import type { PlanningInput } from './PlanningInput.js'
import { walkAncestors } from './walkAncestors.js'

// -------------------------------------------------------------------------------------
// internals
// -------------------------------------------------------------------------------------

const expectedHighWaterOf = (facts: HostFacts): GateView['expectedHighWater'] => {
  if (facts.workspaceCheckpoint !== undefined) {
    return { value: facts.workspaceCheckpoint.runtimeEventHighWater, from: 'checkpoint' }
  }
  if (facts.expectedRuntimeEventHighWater !== undefined) {
    return { value: facts.expectedRuntimeEventHighWater, from: 'caller' }
  }
  return undefined
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * The non-blocking diagnostics of a source ledger: a torn final row the store reported.
 * @category constructors
 */
export const ledgerWarnings = (source: AgentRun, ledger: LedgerSnapshot): ReadonlyArray<PlanDiagnostic> =>
  ledger.tornTail === null
    ? []
    : [
        makeWarning('ledger_torn_tail', {
          runId: source.runId,
          offset: ledger.tornTail.offset,
          length: ledger.tornTail.length,
        }),
      ]

/**
 * Plans a continuation of already-loaded data: early exits 6–9, the ancestor walk and gates 0–13.
 * @category constructors
 */
export const planContinuation = (input: PlanningInput, ids: ContinuationIds): ContinuationPlan => {
  const { source, ledger, facts } = input
  const highWater = ledger.problem?._tag === 'Unreadable' ? null : ledger.events.length
  const warnings = ledgerWarnings(source, ledger)
  const expectedHighWater = expectedHighWaterOf(facts)
  return pipe(
    workspaceIdentityRecorded(source),
    E.flatMap(() => sourceLedgerReadable(source.runId)(ledger)),
    E.map(() =>
      projectResumePlan(
        ledger.events,
        expectedHighWater === undefined ? {} : { expectedRuntimeEventHighWater: expectedHighWater.value },
      ),
    ),
    E.bindTo('projection'),
    E.bind('chain', ({ projection }) =>
      walkAncestors({
        source,
        sourceEvents: ledger.events,
        sourceReplay: projection.replayRuntimeEvents,
        ancestors: input.ancestors,
      }),
    ),
    E.tap(({ chain }) => ledgerRowsOwned({ source, ledger, chain })),
    E.tap(() => boundaryUnclaimed({ source, highWater: ledger.events.length, holders: input.boundaryHolders })),
    E.flatMap(({ projection, chain }) => {
      const view: GateView = {
        source,
        events: ledger.events,
        projection,
        ...(expectedHighWater === undefined ? {} : { expectedHighWater }),
        chain,
        facts,
        ids,
      }
      return pipe(
        evaluateGates(view),
        E.map((passed): Continuation => ({
          sessionId: source.sessionId,
          invocationId: ids.invocationId,
          runId: ids.runId,
          turnId: ids.turnId,
          sourceInvocationId: source.invocationId,
          sourceRunId: source.runId,
          sourceTurnId: source.turnId,
          // A row count is a non-negative integer by construction.
          sourceRuntimeEventHighWater: makeNonNegativeIntUnsafe(ledger.events.length),
          runtimeContext: chain.runtimeContext,
          sourceRuntimeContext: chain.sourceRuntimeContext,
          safetySnapshot: {
            workspaceIdentity: passed.workspaceIdentity,
            backgroundOperationsSettled: true,
            availableToolNames: passed.availableToolNames,
            ...(passed.workspaceCheckpoint === null ? {} : { workspaceCheckpoint: passed.workspaceCheckpoint }),
          },
        })),
      )
    }),
    E.match(
      (findings) =>
        makeParkedPlan(findings, { sourceRunId: source.runId, sourceRuntimeEventHighWater: highWater }, warnings),
      (continuation) => makeContinuePlan(continuation, warnings),
    ),
  )
}
