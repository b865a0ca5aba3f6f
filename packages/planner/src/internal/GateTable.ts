/**
 * The planner's order tables: the early exits 1–9 and the gates 0–13 of the spec, each with the
 * reasons it may produce, plus maka's own early exit 1a (`recovery_unwritable`). Rejection reasons
 * are sorted by these tables — never by the order in which gates happened to be evaluated — so CLI
 * output and snapshots stay stable.
 */
import type { ParkReason } from '@maka/events'
import type { ParkFinding } from '../ParkFinding.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * The early exits in evaluation order; the first one that fails is the plan's only reason.
 * @category models
 */
export const EarlyExitTable = [
  /** The safe-boundary resume flag is off. */
  { exit: 1, name: 'resumeFeatureEnabled', reason: 'resume_feature_disabled' },
  /**
   * Exit 1a (maka's own, numbered between the spec's so theirs stay): startup recovery could not write
   * a repair the session needs. After the flag, which is about this host and says nothing of the data;
   * before every exit that reads the session, since each of them reads files recovery would have
   * changed: an unrepaired header can make the "latest" candidate a completed run, or a source `running`.
   */
  { exit: 1.5, name: 'recoveryWritten', reason: 'recovery_unwritable' },
  /** The "latest" entry found no top-level run, or the newest one completed. */
  { exit: 2, name: 'latestCandidate', reason: 'resume_candidate_missing' },
  /** Another live process owns the session. */
  { exit: 3, name: 'sessionOwnerNotAlive', reason: 'session_owner_alive' },
  /** The host could not produce its facts. */
  { exit: 4, name: 'hostFactsObserved', reason: 'safety_observation_unavailable' },
  /** The source `run.json` is missing or invalid. */
  { exit: 5, name: 'sourceRunReadable', reason: 'source_run_unreadable' },
  /** The source header has no workspace identity. */
  { exit: 6, name: 'workspaceIdentityRecorded', reason: 'workspace_identity_missing' },
  /** A ledger (or an ancestor's) is unreadable, or the ancestor chain is broken. */
  { exit: 7, name: 'ledgerChainReadable', reason: 'runtime_ledger_unreadable' },
  /** A ledger row belongs to another session or run. */
  { exit: 8, name: 'ledgerRowsOwned', reason: 'runtime_identity_mismatch' },
  /** Exit 8a (Phase 2): a link of the chain recorded a prefix digest its ancestor no longer hashes to. */
  { exit: 8.5, name: 'chainDigestsHold', reason: 'source_prefix_digest_mismatch' },
  /** A run or a claim already holds the boundary. */
  { exit: 9, name: 'boundaryUnclaimed', reason: 'continuation_already_exists' },
] as const satisfies ReadonlyArray<{ exit: number; name: string; reason: ParkReason }>

/**
 * The gates in the spec's order; all are evaluated and every failure is collected.
 * @category models
 */
export const GateTable = [
  /**
   * Phase 0 on the source prefix, against the checkpoint's (else the caller's) expected high-water;
   * for a chain with a tool journal, the Phase 2 projection and the decision per open operation.
   */
  {
    gate: 0,
    name: 'phase0Replayable',
    reasons: [
      'runtime_offset_mismatch',
      'dangling_tool_state',
      'tool_journal_corrupt',
      'tool_outcome_unknown',
      'tool_still_running',
      'reconcile_diverged',
      'reconcile_unreadable',
      'operator_decision_required',
      'tool_recovery_mode_changed',
    ],
  },
  /** Every permission request has a later decision. */
  { gate: 1, name: 'permissionsDecided', reasons: ['pending_permission'] },
  /** The ledger holds at least one event. */
  { gate: 2, name: 'ledgerNotEmpty', reasons: ['runtime_ledger_empty'] },
  /** Every event carries the header's session/invocation/run/turn ids. */
  { gate: 3, name: 'eventIdentityConsistent', reasons: ['runtime_identity_mismatch'] },
  /** The new invocation/run/turn ids differ from the source's. */
  { gate: 4, name: 'continuationIdsFresh', reasons: ['continuation_identity_reused'] },
  /** The header's terminal status matches exactly one non-partial terminal event. */
  { gate: 5, name: 'terminalStatusConsistent', reasons: ['terminal_repair_failed'] },
  /** Source cwd equals current cwd after normalisation. */
  { gate: 6, name: 'cwdUnchanged', reasons: ['workspace_cwd_mismatch'] },
  /** Source workspace identity equals the current one. */
  { gate: 7, name: 'workspaceIdentityUnchanged', reasons: ['workspace_identity_mismatch'] },
  /** No background or child operation is unsettled. */
  { gate: 8, name: 'backgroundSettled', reasons: ['background_operation_pending'] },
  /** A given checkpoint has a ref. */
  { gate: 9, name: 'checkpointHasRef', reasons: ['workspace_ref_missing'] },
  /** A given checkpoint was restored. */
  { gate: 10, name: 'checkpointRestored', reasons: ['checkpoint_restore_failed'] },
  /** Every tool called in the runtime context is available now. */
  { gate: 11, name: 'toolCatalogCovers', reasons: ['tool_catalog_mismatch'] },
  /** The runtime context's first model-visible event is a user event. */
  { gate: 12, name: 'historyStartsWithUser', reasons: ['provider_resume_head_unsupported'] },
  /** The runtime context's last model-visible event is a user or tool event. */
  { gate: 13, name: 'historyEndsAtBoundary', reasons: ['provider_resume_boundary_unsupported'] },
] as const satisfies ReadonlyArray<{ gate: number; name: string; reasons: ReadonlyArray<ParkReason> }>

// -------------------------------------------------------------------------------------
// combinators
// -------------------------------------------------------------------------------------

// Gate reasons rank by their gate; a reason only an early exit produces ranks before every gate.
// `runtime_identity_mismatch` is both exit 8 and gate 3: exits never mix with gates, so it takes
// the gate's rank.
const RANK: ReadonlyMap<ParkReason, number> = new Map<ParkReason, number>([
  ...EarlyExitTable.map((row): [ParkReason, number] => [row.reason, row.exit]),
  ...GateTable.flatMap((row) =>
    row.reasons.map((reason, i): [ParkReason, number] => [reason, 100 + row.gate * 10 + i]),
  ),
])

const rankOf = (code: ParkReason): number => RANK.get(code) ?? Number.MAX_SAFE_INTEGER

/**
 * Sorts findings by the fixed order tables; findings of one code keep their relative order.
 * @category constructors
 */
export const sortFindings = <F extends ParkFinding>(findings: ReadonlyArray<F>): ReadonlyArray<F> =>
  findings
    .map((finding, index) => ({ finding, index }))
    .sort((a, b) => rankOf(a.finding.code) - rankOf(b.finding.code) || a.index - b.index)
    .map(({ finding }) => finding)

/**
 * The distinct reasons of some findings, in the fixed order.
 * @category constructors
 */
export const rejectionReasonsOf = (findings: ReadonlyArray<ParkFinding>): ReadonlyArray<ParkReason> => [
  ...new Set(sortFindings(findings).map((finding) => finding.code)),
]
