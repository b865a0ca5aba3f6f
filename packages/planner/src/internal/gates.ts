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
import type { ContinuationIds, OpenToolOperation, SnapshotCheckpoint } from '../ContinuationPlan.js'
import type { HostFacts } from '../HostFacts.js'
import { sameCwd } from '../normalizeCwd.js'
import { FindingsValidation, type Gate, makeParkFinding, park, parkUnless } from '../ParkFinding.js'
import { DETAIL_LIMIT, type FoldedLedger, sortedUnique } from './foldLedger.js'
import type { OperationDecision, OperationParkReason } from './journalDecision.js'
import { type JournalView, journalToolNames, visibleRows } from './journalView.js'
import type { ChainOutline } from '../walkAncestors.js'
import { describeMissingServerTools, withoutChangedTools } from './toolCatalog.js'

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
  /** The chain's tool journal (Phase 2); null for a chain with no marker and no journal key. */
  readonly journal: JournalView | null
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

const phase0Findings = ({ ledger: { projection }, expectedHighWater }: GateView, withDangling: boolean) =>
  projection.rejectionReasons
    .filter((reason) => withDangling || reason === 'runtime_offset_mismatch')
    .map((reason) =>
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

/**
 * One open operation as a park finding names it: identities, status, mode and counts — never args.
 * @category constructors
 */
export const describeOperation = (d: OperationDecision): Omit<OpenToolOperation, 'action' | 'reason'> => ({
  operationId: d.operation.operationId,
  toolCallId: d.operation.toolCallId,
  toolName: d.operation.toolName,
  runId: d.operation.runId,
  status: d.operation.status,
  recoveryMode: d.recoveryMode,
  attempts: d.operation.attempts,
  adoptions: d.operation.adoptions,
})

// The journal's findings: corruption, then each reason an open operation parks with (gate 11 names
// a missing tool), in the code table's order.
const journalFindings = (view: GateView, journal: JournalView) => {
  const { source, ledger } = view
  const findings = phase0Findings(view, !ledger.journal.protocol)
  const { corruptions } = journal.projection
  if (corruptions.length > 0) {
    findings.push(
      makeParkFinding('tool_journal_corrupt', {
        diagnostics: corruptions.slice(0, DETAIL_LIMIT).map((c) => ({ code: 'tool_journal_corruption', ...c })),
        corruptionCount: corruptions.length,
      }),
    )
  }
  const byReason = new Map<OperationParkReason, Array<OperationDecision>>()
  for (const d of journal.decided.decisions) {
    if (d.reason === null || d.reason === 'tool_catalog_mismatch') continue
    // A legacy source's own open calls are Phase 0's finding already.
    if (d.reason === 'dangling_tool_state' && !ledger.journal.protocol && d.operation.runId === source.runId) continue
    byReason.set(d.reason, [...(byReason.get(d.reason) ?? []), d])
  }
  for (const [reason, decisions] of byReason) {
    findings.push(
      makeParkFinding(reason, {
        operations: decisions.slice(0, DETAIL_LIMIT).map(describeOperation),
      }),
    )
  }
  // An operation whose decision needs a probe or an observation the host did not make parks: nothing
  // proves what became of it. (When the workspace is not the call's, gates 6 and 7 park instead.)
  const awaiting = journal.decided.awaitingFacts
  if (awaiting.length > 0 && E.isRight(cwdUnchanged(view)) && E.isRight(workspaceIdentityUnchanged(view))) {
    findings.push(
      makeParkFinding('tool_outcome_unknown', {
        reason: 'observation_unavailable',
        operations: journal.decided.decisions
          .filter((d) => d.action === null && d.reason === null)
          .slice(0, DETAIL_LIMIT)
          .map(describeOperation),
      }),
    )
  }
  if (journal.decided.tooManySettlements) {
    findings.push(
      makeParkFinding('operator_decision_required', { openOperations: journal.projection.openOperations.length }),
    )
  }
  return findings
}

/**
 * Gate 0: Phase 0 on the source prefix must be `safe_replay` — for a chain with a tool journal, the
 * Phase 2 projection of the chain and the decision for each open operation instead.
 * @category gates
 */
export const phase0Replayable: Gate<GateView, void> = (view) => {
  const findings = view.journal === null ? phase0Findings(view, true) : journalFindings(view, view.journal)
  return RA.isNonEmpty(findings) ? E.left(findings) : E.right(undefined)
}

// The open permission requests a reissue will ask again (the call it names is reissued).
const reaskedRequests = ({ ledger: { openPermissionCalls }, journal }: GateView): ReadonlySet<string> => {
  if (journal === null) return new Set()
  const reissued = new Set(
    journal.decided.decisions.filter((d) => d.action === 'reissue').map((d) => d.operation.toolCallId),
  )
  return new Set([...openPermissionCalls].flatMap(([requestId, callId]) => (reissued.has(callId) ? [requestId] : [])))
}

/**
 * The permission requests left open at the boundary that the continuation will ask again.
 * @category constructors
 */
export const reaskedPermissions = (view: GateView): ReadonlyArray<string> => [...reaskedRequests(view)]

/**
 * Gate 1: every permission request has a later decision with its request id.
 * @category gates
 */
export const permissionsDecided: Gate<GateView, void> = (view) => {
  const reasked = reaskedRequests(view)
  const open = [...view.ledger.openPermissions].filter(([requestId]) => !reasked.has(requestId))
  return parkUnless(open.length === 0, 'pending_permission', () => ({
    requestIds: open.map(([requestId]) => requestId),
    eventIds: open.map(([, eventId]) => eventId),
  }))
}

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
export const backgroundSettled: Gate<GateView, void> = ({ facts, journal }) => {
  // A supervised command whose operation is open in the chain is the `reattach` decision's to judge.
  const judged = facts.unsettledOperations.filter(
    (op) => op.operationId === undefined || journal === null || !journal.projection.isOpen(op.operationId),
  )
  const settled =
    judged.length === 0 && (facts.backgroundOperationsSettled || judged.length < facts.unsettledOperations.length)
  return parkUnless(settled, 'background_operation_pending', () => ({
    unsettledOperations: judged.map((op) => ({ kind: op.kind, id: op.id })),
  }))
}

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
export const toolCatalogCovers: Gate<GateView, ReadonlyArray<string>> = ({ chain, facts, journal }) => {
  const available = sortedUnique(facts.availableToolNames)
  // A tool offered under its name with another declaration than the calls recorded is not theirs.
  const usable = new Set(withoutChangedTools(facts, chain.segments).availableToolNames)
  const called =
    journal === null
      ? chain.segments.flatMap(({ folded }) => folded.calledToolNames)
      : journalToolNames(chain.segments, journal)
  const missing = sortedUnique(called.filter((name) => !usable.has(name)))
  if (!RA.isNonEmpty(missing)) return E.right(available)
  const serverTools = describeMissingServerTools(missing, chain.segments, facts)
  return park('tool_catalog_mismatch', {
    missingToolNames: missing,
    ...(serverTools.length === 0 ? {} : { serverTools: serverTools.map((t) => ({ ...t })) }),
  })
}

/**
 * Gate 12: the runtime context's first model-visible event is a user event.
 * @category gates
 */
export const historyStartsWithUser: Gate<GateView, void> = ({ chain, journal }) => {
  const first =
    journal === null
      ? chain.segments.find(({ folded }) => folded.firstVisible !== undefined)?.folded.firstVisible
      : chain.segments.map(({ folded }) => visibleRows(folded, journal).firstVisible).find((v) => v !== undefined)
  return parkUnless(first?.role === 'user', 'provider_resume_head_unsupported', () =>
    first === undefined ? { reason: 'no_model_visible_event' } : { role: first.role, eventId: first.eventId },
  )
}

/**
 * Gate 13: the runtime context's last model-visible event is a user or tool event.
 * @category gates
 */
export const historyEndsAtBoundary: Gate<GateView, void> = ({ chain, journal }) => {
  // Settlements are written first in the continuation: the history then ends with their tool rows.
  if (journal !== null && journal.decided.settlementPlan.length > 0) return E.right(undefined)
  const last =
    journal === null
      ? chain.segments.findLast(({ folded }) => folded.lastVisible !== undefined)?.folded.lastVisible
      : chain.segments.map(({ folded }) => visibleRows(folded, journal).lastVisible).findLast((v) => v !== undefined)
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
