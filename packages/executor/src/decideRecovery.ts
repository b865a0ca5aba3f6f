/**
 * The recovery decider: given a run's header and its committed ledger, decide what startup
 * recovery must write — never perform it. The runner appends the event (durably) before it updates
 * the header, so a header never claims an end the ledger does not hold.
 */
import {
  type AgentRun,
  type ContinuationClaim,
  FailureClass,
  type FiniteNumber,
  type IsoTimestamp,
  NonEmptyString,
  type RuntimeEvent,
  isTerminalEvent,
  isTerminalRunStatus,
  makeTerminalEvent,
  runStatusFromTerminalStatus,
} from '@maka/events'
import type { LedgerSnapshot } from '@maka/stores'

/**
 * What recovery must do for one run.
 * @category models
 */
export type RunRecoveryDecision =
  | { readonly _tag: 'Consistent' }
  | { readonly _tag: 'RepairHeader'; readonly header: AgentRun }
  | {
      readonly _tag: 'AppendTerminal'
      readonly event: RuntimeEvent
      readonly header: AgentRun
      readonly failureClass: string
    }
  | {
      readonly _tag: 'LeaveUntouched'
      readonly reason: 'ledger_unreadable' | 'ambiguous_terminal' | 'identity_mismatch'
    }

/**
 * Time and a fresh event id, given as data so the decider stays pure.
 * @category models
 */
export interface RecoveryStamp {
  readonly now: IsoTimestamp
  readonly ts: FiniteNumber
  readonly eventId: NonEmptyString
}

const failureClassOf = (event: RuntimeEvent): NonEmptyString | undefined => {
  const fromDelta = event.actions?.stateDelta?.['failureClass']
  if (NonEmptyString.is(fromDelta)) return fromDelta
  const code = event.content?.kind === 'error' ? event.content.code : undefined
  // An empty code names no class: the repaired header records none rather than an invalid one.
  return NonEmptyString.is(code) ? code : undefined
}

const headerFromTerminal = (header: AgentRun, terminal: RuntimeEvent, now: IsoTimestamp): AgentRun => {
  const status = runStatusFromTerminalStatus(terminal.status as 'completed' | 'failed' | 'aborted' | 'cancelled')
  // A cancelled run keeps its class too (`user_interrupted`), so a repaired header says why it stopped.
  const failureClass = status === 'failed' || status === 'cancelled' ? failureClassOf(terminal) : undefined
  const { failureClass: _previous, ...rest } = header
  return {
    ...rest,
    status,
    updatedAt: now,
    completedAt: header.completedAt ?? now,
    ...(failureClass === undefined ? {} : { failureClass }),
  }
}

const recoveredTerminal = (
  header: AgentRun,
  stamp: RecoveryStamp,
  failureClass: string,
  recoveryReason: string,
): { event: RuntimeEvent; header: AgentRun } => {
  const event = makeTerminalEvent(header, stamp, {
    status: 'failed',
    failureClass,
    message: recoveryReason,
    stateDelta: { recovered: true, recoveryReason },
  })
  return { event, header: headerFromTerminal(header, event, stamp.now) }
}

/**
 * Decides the repair of one run. Idempotent: a run it repaired decides `Consistent` next time.
 * @category constructors
 */
export const decideRunRecovery = (
  header: AgentRun,
  ledger: LedgerSnapshot,
  stamp: RecoveryStamp,
): RunRecoveryDecision => {
  if (ledger.problem !== null) {
    return {
      _tag: 'LeaveUntouched',
      reason: ledger.problem._tag === 'IdentityMismatch' ? 'identity_mismatch' : 'ledger_unreadable',
    }
  }
  const terminals = ledger.events.filter(isTerminalEvent)
  if (terminals.length > 1) return { _tag: 'LeaveUntouched', reason: 'ambiguous_terminal' }
  const terminal = terminals[0]
  if (terminal !== undefined) {
    const expected = runStatusFromTerminalStatus(terminal.status)
    if (header.status === expected) return { _tag: 'Consistent' }
    return { _tag: 'RepairHeader', header: headerFromTerminal(header, terminal, stamp.now) }
  }
  if (isTerminalRunStatus(header.status)) {
    const repair = recoveredTerminal(
      header,
      stamp,
      FailureClass.missing_terminal_event,
      'The run header recorded an end that the ledger does not hold.',
    )
    return { _tag: 'AppendTerminal', ...repair, failureClass: FailureClass.missing_terminal_event }
  }
  const repair = recoveredTerminal(
    header,
    stamp,
    FailureClass.app_restarted,
    'The process ended before the run finished.',
  )
  return { _tag: 'AppendTerminal', ...repair, failureClass: FailureClass.app_restarted }
}

/**
 * The header recovery writes for a claim whose target run never appeared: the run exists from now
 * on, so the boundary reads as `continuation_already_exists` instead of being claimable twice.
 * @category constructors
 */
export const abandonedTargetHeader = (
  claim: ContinuationClaim,
  source: Pick<AgentRun, 'cwd' | 'providerId' | 'modelId' | 'providerBaseUrl' | 'workspaceIdentity'>,
  now: IsoTimestamp,
): AgentRun => ({
  runId: claim.targetRunId,
  sessionId: claim.sessionId,
  turnId: claim.targetTurnId,
  invocationId: claim.targetInvocationId,
  status: 'created',
  cwd: source.cwd,
  providerId: source.providerId,
  modelId: source.modelId,
  ...(source.providerBaseUrl === undefined ? {} : { providerBaseUrl: source.providerBaseUrl }),
  ...(source.workspaceIdentity === undefined ? {} : { workspaceIdentity: source.workspaceIdentity }),
  createdAt: now,
  updatedAt: now,
  parentRunId: claim.sourceRunId,
  parentTurnId: claim.sourceTurnId,
  continuationSource: {
    sourceInvocationId: claim.sourceInvocationId,
    sourceRunId: claim.sourceRunId,
    sourceTurnId: claim.sourceTurnId,
    sourceRuntimeEventHighWater: claim.sourceRuntimeEventHighWater,
  },
})

/**
 * The terminal event that closes an abandoned continuation target.
 * @category constructors
 */
export const abandonedTerminal = (header: AgentRun, stamp: RecoveryStamp): { event: RuntimeEvent; header: AgentRun } =>
  recoveredTerminal(
    header,
    stamp,
    FailureClass.continuation_abandoned_before_start,
    'The continuation was claimed but never started.',
  )

/**
 * The writes that close a claim whose target header never appeared: the target header, then its
 * durable terminal event, then the terminal header.
 * @category models
 */
export interface AbandonedClaimRepair {
  readonly header: AgentRun
  readonly terminal: RuntimeEvent
  readonly closedHeader: AgentRun
}

/**
 * Decides the repair of an abandoned claim. The target inherits the source's cwd, model and
 * workspace identity: it is a link of the source's chain (decisions #9), and without the identity it
 * would park as workspace_identity_missing for good.
 * @category constructors
 */
export const decideAbandonedClaim = (
  claim: ContinuationClaim,
  source: Pick<AgentRun, 'cwd' | 'providerId' | 'modelId' | 'providerBaseUrl' | 'workspaceIdentity'>,
  createdAt: IsoTimestamp,
  stamp: RecoveryStamp,
): AbandonedClaimRepair => {
  const header = abandonedTargetHeader(claim, source, createdAt)
  const closing = abandonedTerminal(header, stamp)
  return { header, terminal: closing.event, closedHeader: closing.header }
}
