/**
 * Revalidation: planning is not a lease. Right before a continuation claims its boundary, the
 * executor re-reads durable state and host facts and compares them with the approved plan. This
 * module is the pure comparison; every failed check yields its stable code, in the spec's order.
 */
import {
  type AgentRun,
  type ExecutionRejection,
  type RuntimeEvent,
  isFunctionCallEvent,
  isFunctionResponseEvent,
  isTerminalEvent,
  isTerminalRunStatus,
  runStatusFromTerminalStatus,
} from '@maka/events'
import { type Continuation, type ContinuationPlan, type HostFacts, sameCwd } from '@maka/planner'
import type { JournalObservation } from './observeJournal.js'
import { projectResumePlan } from '@maka/projection'
import type { LedgerSnapshot } from '@maka/stores'

/**
 * What the executor re-read from durable state and the host just before claiming.
 * @category models
 */
export interface RevalidationObservation {
  /** The source header, or null when it can no longer be read. */
  readonly sourceHeader: AgentRun | null
  /** The source ledger, or null when it can no longer be read. */
  readonly ledger: LedgerSnapshot | null
  /** Fresh host facts, or null when they cannot be observed. */
  readonly facts: HostFacts | null
  /** The run that already holds this boundary (by header or claim), if any. */
  readonly existingBoundaryHolder: string | null
  /** True when a run with the target run id exists. */
  readonly targetRunExists: boolean
  /**
   * The chain carries a tool journal (Phase 2): the source's replay is judged by
   * {@link revalidateJournal} instead of Phase 0.
   */
  readonly journaled?: boolean
}

/**
 * Every rejection of several checks, once each, in the spec's order.
 * @category constructors
 */
export const orderRejections = (codes: Iterable<ExecutionRejection>): ReadonlyArray<ExecutionRejection> => {
  const found = new Set(codes)
  return ORDER.filter((code) => found.has(code))
}

const ORDER: ReadonlyArray<ExecutionRejection> = [
  'source_identity_changed',
  'source_terminal_changed',
  'source_cwd_changed',
  'source_high_water_changed',
  'source_prefix_digest_changed',
  'source_ledger_identity_changed',
  'source_replay_changed',
  'reconcile_verdict_changed',
  'workspace_identity_changed',
  'background_operation_started',
  'tool_catalog_changed',
  'workspace_checkpoint_changed',
  'continuation_claim_conflict',
  'target_run_conflict',
]

/**
 * Structural equality of plain JSON data (what ledgers and plans are made of).
 * @category guards
 */
export const jsonEqual = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]))
  const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined)
  const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined)
  return (
    ka.length === kb.length &&
    ka.every((k) => jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
  )
}

const terminalIsIntact = (
  header: AgentRun,
  events: ReadonlyArray<RuntimeEvent>,
  planned: ReadonlyArray<RuntimeEvent>,
) => {
  const terminals = events.filter(isTerminalEvent)
  const terminal = terminals[0]
  if (terminals.length !== 1 || terminal === undefined || !isTerminalRunStatus(header.status)) return false
  if (runStatusFromTerminalStatus(terminal.status) !== header.status) return false
  return planned.some((event) => event.id === terminal.id && jsonEqual(event, terminal))
}

/**
 * Compares an approved plan with what is true now; returns every rejection, in the spec's order.
 * @category gates
 */
export const revalidate = (plan: Continuation, now: RevalidationObservation): ReadonlyArray<ExecutionRejection> => {
  const found = new Set<ExecutionRejection>()
  const { sourceHeader: header, ledger, facts } = now

  if (
    header === null ||
    header.sessionId !== plan.sessionId ||
    header.runId !== plan.sourceRunId ||
    header.invocationId !== plan.sourceInvocationId ||
    header.turnId !== plan.sourceTurnId
  ) {
    found.add('source_identity_changed')
  }
  if (header !== null && ledger !== null && !terminalIsIntact(header, ledger.events, plan.sourceRuntimeContext)) {
    found.add('source_terminal_changed')
  }
  if (header !== null && (facts === null || !sameCwd(header.cwd, facts.currentCwd))) {
    found.add('source_cwd_changed')
  }
  if (ledger === null || ledger.problem !== null) {
    found.add('source_replay_changed')
  } else {
    if (ledger.highWater !== plan.sourceRuntimeEventHighWater || ledger.events.length !== ledger.highWater) {
      found.add('source_high_water_changed')
    }
    // Rows carry the session id as a plain non-empty string, the plan as a session id.
    const sessionId: string = plan.sessionId
    const sourceRunId: string = plan.sourceRunId
    const foreign = ledger.events.some(
      (e) =>
        e.sessionId !== sessionId ||
        e.runId !== sourceRunId ||
        e.invocationId !== plan.sourceInvocationId ||
        e.turnId !== plan.sourceTurnId,
    )
    if (foreign) found.add('source_ledger_identity_changed')
    const replay = projectResumePlan(ledger.events)
    if (
      now.journaled !== true &&
      (replay.disposition !== 'safe_replay' || !jsonEqual(replay.replayRuntimeEvents, plan.sourceRuntimeContext))
    ) {
      found.add('source_replay_changed')
    }
  }
  if (facts === null) {
    found.add('workspace_identity_changed')
    found.add('background_operation_started')
    found.add('tool_catalog_changed')
  } else {
    const snapshot = plan.safetySnapshot
    if (facts.currentWorkspaceIdentity !== snapshot.workspaceIdentity) found.add('workspace_identity_changed')
    if (!facts.backgroundOperationsSettled) found.add('background_operation_started')
    const available = new Set(facts.availableToolNames)
    if (snapshot.availableToolNames.some((name) => !available.has(name))) found.add('tool_catalog_changed')
    // A server tool the plan relied on must still be declared exactly as it was (server and digest).
    const catalog = snapshot.toolCatalog
    if (
      catalog !== undefined &&
      Object.entries(catalog).some(([name, entry]) => {
        const now = facts.toolCatalog?.[name]
        return now === undefined || now.server !== entry.server || now.digest !== entry.digest
      })
    ) {
      found.add('tool_catalog_changed')
    }
    const planned = snapshot.workspaceCheckpoint
    const current = facts.workspaceCheckpoint
    const checkpointSame =
      planned === undefined
        ? current === undefined
        : current !== undefined &&
          current.restored &&
          current.ref === planned.ref &&
          current.runtimeEventHighWater === planned.runtimeEventHighWater
    if (!checkpointSame) found.add('workspace_checkpoint_changed')
  }
  if (now.existingBoundaryHolder !== null) found.add('continuation_claim_conflict')
  if (now.targetRunExists) found.add('target_run_conflict')
  return ORDER.filter((code) => found.has(code))
}

/**
 * What execution re-read and re-probed of a chain with a tool journal.
 * @category models
 */
export interface JournalRevalidation {
  readonly observed: JournalObservation
  /** Each probe made again (`settle_applied` and probe-chosen reissues). */
  readonly probes: ReadonlyMap<string, { readonly verdict: string }>
  /** Fresh host facts, or null. */
  readonly facts: HostFacts | null
}

// The source's replay under the journal's rule: its tool rows are kept unless their operation is
// open in the chain and not settled by this continuation.
const journalSourceReplay = (
  observed: JournalObservation,
  planned: ReadonlySet<string>,
): ReadonlyArray<RuntimeEvent> | null => {
  const { projection, sourceJournal } = observed
  if (projection === null || sourceJournal === null) return null
  if (!sourceJournal.protocol) return projectResumePlan(observed.sourceEvents).replayRuntimeEvents
  const keep = (operationId: string | undefined) =>
    operationId !== undefined && (!projection.isOpen(operationId) || planned.has(operationId))
  return observed.sourceEvents.filter(
    (event) =>
      !event.partial &&
      (!(isFunctionCallEvent(event) || isFunctionResponseEvent(event)) || keep(event.refs?.operationId)),
  )
}

/**
 * The checks a chain with a tool journal adds (Phase 2): the prefix digest, the journal projected
 * again (no corruption, the same open operations, the same source replay), each probe made again,
 * and the tools' recovery modes. Every failed check, in the spec's order.
 * @category gates
 */
export const revalidateJournal = (
  plan: ContinuationPlan,
  now: JournalRevalidation,
): ReadonlyArray<ExecutionRejection> => {
  const c = plan.continuation
  if (c === undefined) return []
  const found = new Set<ExecutionRejection>()
  const { observed } = now
  const plannedDigest = plan.sourceRuntimeEventPrefixDigest ?? null
  if (
    plannedDigest !== null &&
    observed.sourceEvents.length === c.sourceRuntimeEventHighWater &&
    observed.sourceDigest !== plannedDigest
  ) {
    found.add('source_prefix_digest_changed')
  }
  // Each link up the chain still stands on the prefix it recorded (the run that holds a reissued call among them).
  if (!observed.pinsHold) found.add('source_prefix_digest_changed')
  const planned = new Set((c.settlementPlan ?? []).map((entry) => entry.operationId))
  const projection = observed.projection
  const replay = journalSourceReplay(observed, planned)
  const open = (projection?.openOperations ?? []).map((op) => ({
    operationId: op.operationId,
    status: op.status,
    attempts: op.attempts,
    adoptions: op.adoptions,
  }))
  const plannedOpen = (plan.openToolOperations ?? []).map((op) => ({
    operationId: op.operationId,
    status: op.status,
    attempts: op.attempts,
    adoptions: op.adoptions,
  }))
  if (
    projection === null ||
    projection.corruptions.length > 0 ||
    replay === null ||
    !jsonEqual(replay, c.sourceRuntimeContext) ||
    !jsonEqual(open, plannedOpen)
  ) {
    found.add('source_replay_changed')
  }
  for (const { operationId, verdict } of c.safetySnapshot.probeVerdicts ?? []) {
    if (now.probes.get(operationId)?.verdict !== verdict) found.add('reconcile_verdict_changed')
  }
  const modes = c.safetySnapshot.toolRecoveryModes
  if (modes !== undefined && (now.facts === null || !jsonEqual(now.facts.toolRecoveryModes ?? {}, modes))) {
    found.add('tool_catalog_changed')
  }
  return ORDER.filter((code) => found.has(code))
}
