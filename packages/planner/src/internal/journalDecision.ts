/**
 * The decision per open operation of a chain with a tool journal (Phase 2): the first row of the
 * spec's table that matches decides — reissue, settle from a probe, settle from a command that
 * ended, or park with the code that names what is missing. Pure: the host's world reads (the call's
 * current mode, a probe's verdict, a command's observation) come in as {@link OperationFacts}.
 */
import {
  MAX_SETTLEMENTS,
  type ParkReason,
  type RecoveryMode,
  type SettlementAction,
  type SettlementEntry,
} from '@maka/events'
import type { ChainProjection, OpenOperation } from '@maka/projection'
import type { HostFacts, OperationFacts } from '../HostFacts.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/** The most automatic adoptions an operation may have before a person must decide (C8). */
export const ADOPTION_BUDGET = 3

/**
 * The reasons an open operation parks with (all of gate 0 but `tool_catalog_mismatch`, gate 11's).
 * @category models
 */
export type OperationParkReason = Extract<
  ParkReason,
  | 'dangling_tool_state'
  | 'tool_catalog_mismatch'
  | 'operator_decision_required'
  | 'tool_recovery_mode_changed'
  | 'reconcile_diverged'
  | 'reconcile_unreadable'
  | 'tool_still_running'
  | 'tool_outcome_unknown'
>

/**
 * What planning decided for one open operation. `action` and `reason` are both null while a world
 * read it needs was not made (gate 6 or 7 failed, so the plan parks there).
 * @category models
 */
export interface OperationDecision {
  readonly operation: OpenOperation
  /** The recorded mode (last dispatch), or for an undispatched call its current mode; null when unknown. */
  readonly recoveryMode: RecoveryMode | null
  readonly action: Exclude<SettlementAction, 'adjudicate'> | null
  readonly reason: OperationParkReason | null
  /** The probe's verdict when one chose the action or the reason. */
  readonly probe: OperationFacts['probe'] | null
}

/**
 * What the decisions amount to for the plan.
 * @category models
 */
export interface JournalDecisions {
  readonly decisions: ReadonlyArray<OperationDecision>
  /** The settlement plan in call-row order, when at most {@link MAX_SETTLEMENTS} would be listed. */
  readonly settlementPlan: ReadonlyArray<SettlementEntry>
  /** More than {@link MAX_SETTLEMENTS} entries would be listed: the plan parks instead. */
  readonly tooManySettlements: boolean
  /** Operations whose decision needs a world read the host has not given yet. */
  readonly awaitingFacts: ReadonlyArray<OpenOperation>
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

const decision = (
  operation: OpenOperation,
  recoveryMode: RecoveryMode | null,
  outcome:
    | { readonly action: OperationDecision['action']; readonly reason?: never }
    | { readonly reason: OperationParkReason | null; readonly action?: never },
  probe: OperationFacts['probe'] | null = null,
): OperationDecision => ({
  operation,
  recoveryMode,
  action: outcome.action ?? null,
  reason: outcome.reason ?? null,
  probe,
})

/**
 * Decides one open operation (rows 0–14 of the table). `facts` is what the host read for it; absent
 * when it has not been asked (or may not be: the workspace is not the one the call ran in).
 * @category constructors
 */
export const decideOperation = (
  operation: OpenOperation,
  host: Pick<HostFacts, 'toolJournal' | 'availableToolNames' | 'toolRecoveryModes'>,
  facts: OperationFacts | undefined,
): OperationDecision => {
  const staticMode = host.toolRecoveryModes?.[operation.toolName]
  const currentMode: RecoveryMode | null =
    facts !== undefined ? facts.currentMode : staticMode === undefined || staticMode === 'by_args' ? null : staticMode
  const recorded = operation.recordedMode
  // 0–1: a host that writes no journal, or a legacy call, is Phase 1.
  if (host.toolJournal !== true && operation.status !== 'indeterminate') {
    return decision(operation, recorded, { reason: 'dangling_tool_state' })
  }
  if (operation.status === 'indeterminate') return decision(operation, null, { reason: 'dangling_tool_state' })
  // 2: the tool is gone.
  if (!host.availableToolNames.includes(operation.toolName)) {
    return decision(operation, recorded, { reason: 'tool_catalog_mismatch' })
  }
  // 3: the adoption budget.
  if (operation.adoptions >= ADOPTION_BUDGET) {
    return decision(operation, recorded ?? currentMode, { reason: 'operator_decision_required' })
  }
  // 4: never dispatched, so never ran: run it (preflight again).
  if (operation.status === 'definitely_not_dispatched') return decision(operation, currentMode, { action: 'reissue' })
  const mode = recorded ?? 'never_auto_retry'
  // 5: the mode a new run would have must be the one the effect was dispatched under.
  if (facts === undefined && (staticMode === undefined || staticMode === 'by_args')) {
    return decision(operation, mode, { reason: null })
  }
  if (currentMode !== mode) return decision(operation, mode, { reason: 'tool_recovery_mode_changed' })
  switch (mode) {
    case 'replay_safe':
    case 'idempotent':
      return decision(operation, mode, { action: 'reissue' })
    case 'reconcile':
      switch (facts?.probe) {
        case 'applied':
          return decision(operation, mode, { action: 'settle_applied' }, 'applied')
        case 'not_applied':
          return decision(operation, mode, { action: 'reissue' }, 'not_applied')
        case 'diverged':
          return decision(operation, mode, { reason: 'reconcile_diverged' }, 'diverged')
        case 'unreadable':
          return decision(operation, mode, { reason: 'reconcile_unreadable' }, 'unreadable')
        case undefined:
          return decision(operation, mode, { reason: null })
      }
      break
    case 'reattach':
      switch (facts?.observation) {
        case 'exited':
          return decision(operation, mode, { action: 'settle_reattached' })
        case 'running':
          return decision(operation, mode, { reason: 'tool_still_running' })
        case 'lost':
          return decision(operation, mode, { reason: 'tool_outcome_unknown' })
        case undefined:
          return decision(operation, mode, { reason: null })
      }
      break
    case 'never_auto_retry':
      return decision(operation, mode, { reason: 'tool_outcome_unknown' })
  }
  return decision(operation, mode, { reason: 'tool_outcome_unknown' })
}

/**
 * Decides every open operation of a chain, in call-row order.
 * @category constructors
 */
export const decideOperations = (
  projection: ChainProjection,
  host: Pick<HostFacts, 'toolJournal' | 'availableToolNames' | 'toolRecoveryModes'>,
  facts: ReadonlyMap<string, OperationFacts> | undefined,
): JournalDecisions => {
  const decisions = projection.openOperations.map((operation) =>
    decideOperation(operation, host, facts?.get(operation.operationId)),
  )
  const entries = decisions.flatMap((d): ReadonlyArray<SettlementEntry> =>
    d.action === null
      ? []
      : [
          {
            operationId: d.operation.operationId,
            toolCallId: d.operation.toolCallId,
            action: d.action,
          } as SettlementEntry,
        ],
  )
  const tooManySettlements = entries.length > MAX_SETTLEMENTS
  return {
    decisions,
    settlementPlan: tooManySettlements ? [] : entries,
    tooManySettlements,
    awaitingFacts: decisions.filter((d) => d.action === null && d.reason === null).map((d) => d.operation),
  }
}
