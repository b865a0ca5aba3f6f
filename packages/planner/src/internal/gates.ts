/**
 * The planner's gates 0–13: one small validator per row of the spec's gate table. They do not
 * depend on each other — all read the same view, built after the early exits passed — so they are
 * combined with the validation applicative and the user sees every reason at once. What a gate
 * passes on (the replay, the workspace identity, the tool catalog) becomes part of the plan.
 */
import { type AgentRun, type NonEmptyString, isTerminalRunStatus, runStatusFromTerminalStatus } from '@maka/events'
import { sequenceS } from 'fp-ts/lib/Apply.js'
import * as E from 'fp-ts/lib/Either.js'
import { pipe } from 'fp-ts/lib/function.js'
import * as RA from 'fp-ts/lib/ReadonlyArray.js'
import type { ContinuationIds, SnapshotCheckpoint } from '../ContinuationPlan.js'
import type { HostFacts } from '../HostFacts.js'
import { sameCwd } from '../normalizeCwd.js'
import { FindingsValidation, type Gate, makeParkFinding, park, parkUnless } from '../ParkFinding.js'
import { DETAIL_LIMIT, type FoldedLedger, sortedUnique } from './foldLedger.js'
import type { ChainOutline } from '../walkAncestors.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * What every gate reads: the source, its Phase 0 projection, the walked chain, host facts and the
 * new ids.
 * @category models
 */
export interface GateView {
  readonly source: AgentRun
  /** The source's committed rows, folded; Phase 0 projected against {@link GateView.expectedHighWater}. */
  readonly ledger: FoldedLedger
  /** The checkpoint's high-water when a checkpoint is given, else the caller's; absent when neither. */
  readonly expectedHighWater?: { readonly value: number; readonly from: 'checkpoint' | 'caller' }
  readonly chain: ChainOutline
  readonly facts: HostFacts
  readonly ids: ContinuationIds
}

/**
 * What the gates pass on when all of them pass.
 * @category models
 */
export interface GatesPassed {
  readonly workspaceIdentity: NonEmptyString
  readonly availableToolNames: ReadonlyArray<string>
  readonly workspaceCheckpoint: SnapshotCheckpoint | null
}

// -------------------------------------------------------------------------------------
// internals
// -------------------------------------------------------------------------------------

// -------------------------------------------------------------------------------------
// gates
// -------------------------------------------------------------------------------------

/**
 * Gate 0: Phase 0 on the source prefix must be `safe_replay`.
 * @category gates
 */
export const phase0Replayable: Gate<GateView, void> = ({ ledger: { projection }, expectedHighWater }) => {
  const findings = projection.rejectionReasons.map((reason) =>
    reason === 'runtime_offset_mismatch'
      ? makeParkFinding(reason, {
          expectedHighWater: expectedHighWater?.value ?? null,
          expectedFrom: expectedHighWater?.from ?? null,
          actualHighWater: projection.sourceRuntimeEventHighWater,
        })
      : makeParkFinding(reason, {
          toolCallIds: sortedUnique(
            projection.diagnostics.flatMap((d) => (d.toolCallId === undefined ? [] : [d.toolCallId])),
          ),
          diagnostics: projection.diagnostics
            .filter((d) => d.code !== 'runtime_offset_mismatch')
            .slice(0, DETAIL_LIMIT)
            .map((d) => ({ ...d })),
        }),
  )
  return RA.isNonEmpty(findings) ? E.left(findings) : E.right(undefined)
}

/**
 * Gate 1: every permission request has a later decision with its request id.
 * @category gates
 */
export const permissionsDecided: Gate<GateView, void> = ({ ledger: { openPermissions } }) =>
  parkUnless(openPermissions.size === 0, 'pending_permission', () => ({
    requestIds: [...openPermissions.keys()],
    eventIds: [...openPermissions.values()],
  }))

/**
 * Gate 2: the ledger holds at least one event.
 * @category gates
 */
export const ledgerNotEmpty: Gate<GateView, void> = ({ ledger }) =>
  parkUnless(ledger.rows > 0, 'runtime_ledger_empty', () => ({ highWater: 0 }))

/**
 * Gate 3: every event carries the header's session, invocation, run and turn ids.
 * @category gates
 */
export const eventIdentityConsistent: Gate<GateView, void> = ({ ledger: { identityMismatches } }) =>
  parkUnless(identityMismatches.count === 0, 'runtime_identity_mismatch', () => ({
    count: identityMismatches.count,
    rows: identityMismatches.rows,
  }))

/**
 * Gate 4: the new invocation, run and turn ids all differ from the source's.
 * @category gates
 */
export const continuationIdsFresh: Gate<GateView, void> = ({ source, ids }) => {
  const reused = (['invocationId', 'runId', 'turnId'] as const).filter((field) => ids[field] === source[field])
  return parkUnless(reused.length === 0, 'continuation_identity_reused', () => ({ reusedFields: reused }))
}

/**
 * Gate 5: the header's terminal status matches exactly one non-partial terminal event.
 * @category gates
 */
export const terminalStatusConsistent: Gate<GateView, void> = ({ source, ledger: { terminals } }) => {
  const only = terminals.count === 1 ? terminals.listed[0] : undefined
  const ok =
    only !== undefined &&
    isTerminalRunStatus(source.status) &&
    runStatusFromTerminalStatus(only.status) === source.status
  return parkUnless(ok, 'terminal_repair_failed', () => ({
    headerStatus: source.status,
    terminalEvents: terminals.listed,
    terminalEventCount: terminals.count,
  }))
}

/**
 * Gate 6: the source cwd equals the current cwd, both without a trailing separator.
 * @category gates
 */
export const cwdUnchanged: Gate<GateView, void> = ({ source, facts }) =>
  parkUnless(sameCwd(source.cwd, facts.currentCwd), 'workspace_cwd_mismatch', () => ({
    sourceCwd: source.cwd,
    currentCwd: facts.currentCwd,
  }))

/**
 * Gate 7: the source workspace identity equals the current one.
 * @category gates
 */
export const workspaceIdentityUnchanged: Gate<GateView, NonEmptyString> = ({ source, facts }) =>
  source.workspaceIdentity !== undefined && source.workspaceIdentity === facts.currentWorkspaceIdentity
    ? E.right(source.workspaceIdentity)
    : park('workspace_identity_mismatch', {
        sourceWorkspaceIdentity: source.workspaceIdentity ?? null,
        currentWorkspaceIdentity: facts.currentWorkspaceIdentity,
      })

/**
 * Gate 8: no background or child operation is unsettled.
 * @category gates
 */
export const backgroundSettled: Gate<GateView, void> = ({ facts }) =>
  parkUnless(
    facts.backgroundOperationsSettled && facts.unsettledOperations.length === 0,
    'background_operation_pending',
    () => ({ unsettledOperations: facts.unsettledOperations.map((op) => ({ kind: op.kind, id: op.id })) }),
  )

/**
 * Gate 9: a given checkpoint has a ref.
 * @category gates
 */
export const checkpointHasRef: Gate<GateView, void> = ({ facts }) => {
  const checkpoint = facts.workspaceCheckpoint
  return parkUnless(
    checkpoint === undefined || (checkpoint.ref !== undefined && checkpoint.ref !== ''),
    'workspace_ref_missing',
    () => ({ runtimeEventHighWater: checkpoint?.runtimeEventHighWater ?? null }),
  )
}

/**
 * Gate 10: a given checkpoint was restored.
 * @category gates
 */
export const checkpointRestored: Gate<GateView, void> = ({ facts }) => {
  const checkpoint = facts.workspaceCheckpoint
  return parkUnless(checkpoint === undefined || checkpoint.restored, 'checkpoint_restore_failed', () => ({
    ref: checkpoint?.ref ?? null,
  }))
}

/**
 * Gate 11: every tool named by a `function_call` in the runtime context is available now.
 * @category gates
 */
export const toolCatalogCovers: Gate<GateView, ReadonlyArray<string>> = ({ chain, facts }) => {
  const available = sortedUnique(facts.availableToolNames)
  const availableSet = new Set(available)
  const missing = sortedUnique(
    chain.segments.flatMap(({ folded }) => folded.calledToolNames.filter((name) => !availableSet.has(name))),
  )
  return RA.isNonEmpty(missing) ? park('tool_catalog_mismatch', { missingToolNames: missing }) : E.right(available)
}

/**
 * Gate 12: the runtime context's first model-visible event is a user event.
 * @category gates
 */
export const historyStartsWithUser: Gate<GateView, void> = ({ chain }) => {
  const first = chain.segments.find(({ folded }) => folded.firstVisible !== undefined)?.folded.firstVisible
  return parkUnless(first?.role === 'user', 'provider_resume_head_unsupported', () =>
    first === undefined ? { reason: 'no_model_visible_event' } : { role: first.role, eventId: first.eventId },
  )
}

/**
 * Gate 13: the runtime context's last model-visible event is a user or tool event.
 * @category gates
 */
export const historyEndsAtBoundary: Gate<GateView, void> = ({ chain }) => {
  const last = chain.segments.findLast(({ folded }) => folded.lastVisible !== undefined)?.folded.lastVisible
  return parkUnless(last?.role === 'user' || last?.role === 'tool', 'provider_resume_boundary_unsupported', () =>
    last === undefined ? { reason: 'no_model_visible_event' } : { role: last.role, eventId: last.eventId },
  )
}

/**
 * Every gate, collected with the validation applicative; on success, what the plan snapshots.
 * @category gates
 */
export const evaluateGates: Gate<GateView, GatesPassed> = (view) =>
  pipe(
    sequenceS(FindingsValidation)({
      phase0: phase0Replayable(view),
      permissions: permissionsDecided(view),
      notEmpty: ledgerNotEmpty(view),
      identity: eventIdentityConsistent(view),
      freshIds: continuationIdsFresh(view),
      terminal: terminalStatusConsistent(view),
      cwd: cwdUnchanged(view),
      workspace: workspaceIdentityUnchanged(view),
      background: backgroundSettled(view),
      checkpointRef: checkpointHasRef(view),
      checkpointRestored: checkpointRestored(view),
      tools: toolCatalogCovers(view),
      head: historyStartsWithUser(view),
      boundary: historyEndsAtBoundary(view),
    }),
    E.map(({ workspace, tools }): GatesPassed => {
      const checkpoint = view.facts.workspaceCheckpoint
      return {
        workspaceIdentity: workspace,
        availableToolNames: tools,
        workspaceCheckpoint:
          checkpoint?.ref === undefined
            ? null
            : { ref: checkpoint.ref, runtimeEventHighWater: checkpoint.runtimeEventHighWater },
      }
    }),
  )
