/**
 * The planner's park reasons: stable codes, never renamed or reused. Each has a one-line doc and a
 * human sentence for UIs, which never show a raw code alone. Key order is the order the planner
 * evaluates them in: the spec's, with maka's own `recovery_unwritable` after the flag (early exit 1a).
 */

/**
 * Every park reason with the sentence a person reads.
 * @category models
 */
export const ParkReasonSentences = {
  /** The safe-boundary resume flag is not set to 1. */
  resume_feature_disabled: 'Safe resume is turned off (set MAKA_RUNTIME_SAFE_BOUNDARY_RESUME=1 to enable it).',
  /**
   * maka's own early exit, between the spec's 1 and 2: startup recovery could not repair the session because the
   * data directory refused it (read-only, permission denied, or a link or a file where maka keeps its own).
   */
  recovery_unwritable:
    'Recovery could not repair this session because its data directory refused it (read-only, permission denied, or a link or file where maka keeps its own); fix that, run maka recover, then resume.',
  /** The session has no top-level run to resume, or its newest one completed. */
  resume_candidate_missing: 'There is nothing to resume: the latest turn of this session completed or none exists.',
  /** Another live process owns the session (`owner.lock`). */
  session_owner_alive: 'Another running process owns this session; resume it there or wait for it to exit.',
  /** The host could not observe the facts a plan needs (cwd, workspace, tools, background work). */
  safety_observation_unavailable:
    'The host could not check the workspace, tools or background work, so resuming is not safe.',
  /** The source `run.json` is missing or invalid. */
  source_run_unreadable: 'The interrupted run’s header is missing or unreadable.',
  /** The source header has no recorded workspace identity. */
  workspace_identity_missing: 'The interrupted run did not record which workspace it ran in.',
  /** A ledger (or an ancestor's) is unreadable, or the ancestor chain is broken. */
  runtime_ledger_unreadable: 'The run’s event ledger is unreadable or its history chain is broken.',
  /** A ledger row belongs to another session, invocation, run or turn. */
  runtime_identity_mismatch: 'The run’s event ledger holds rows that belong to another run.',
  /** A run or claim already continues this boundary. */
  continuation_already_exists: 'This interruption has already been resumed once; it will not be resumed twice.',
  /** The ledger's length differs from the expected high-water. */
  runtime_offset_mismatch: 'The ledger’s length differs from the recorded checkpoint or expected position.',
  /** A tool call has no committed outcome: its side effect may or may not have happened. */
  dangling_tool_state:
    'A tool call was interrupted before its result was recorded; it may or may not have taken effect.',
  /** A permission request has no recorded decision. */
  pending_permission: 'A permission request was never answered.',
  /** The ledger holds no event. */
  runtime_ledger_empty: 'The interrupted run recorded no events.',
  /** A new id of the continuation equals one of the source's. */
  continuation_identity_reused: 'The continuation would reuse an id of the interrupted run.',
  /** The header's terminal status does not match exactly one terminal event. */
  terminal_repair_failed: 'The run’s header and its recorded ending disagree.',
  /** The session cwd differs from the source run's. */
  workspace_cwd_mismatch: 'The working directory differs from the one the run started in.',
  /** The workspace directory is not the same one (device, inode or path changed). */
  workspace_identity_mismatch: 'The workspace directory is not the same one the run used.',
  /** A background shell or child run is still unsettled. */
  background_operation_pending: 'A background command or sub-agent is still running.',
  /** A checkpoint was given without a ref. */
  workspace_ref_missing: 'The workspace checkpoint has no reference.',
  /** A checkpoint was given but not restored. */
  checkpoint_restore_failed: 'The workspace checkpoint was not restored.',
  /** A tool the history used is not available now. */
  tool_catalog_mismatch: 'A tool used earlier in this turn is no longer available.',
  /** The replay history does not start with a user message. */
  provider_resume_head_unsupported: 'The history to replay does not start with a user message.',
  /** The replay history does not end at a user or tool boundary. */
  provider_resume_boundary_unsupported: 'The history to replay does not end at a user message or a tool result.',
  // Phase 2, the tool journal: added at the end, as codes are never renumbered.
  /** A dispatched call's effect cannot be judged (a tool that cannot be retried, or a command whose record is lost). */
  tool_outcome_unknown:
    'A tool call may have taken effect and cannot be checked automatically; record what happened with `maka resolve`.',
  /** A command the interrupted turn started is still running; its end will be recorded when it exits. */
  tool_still_running: 'A command the interrupted turn started is still running; resume once it has finished.',
  /** A probe found the target neither as it was before the call nor as the call would leave it. */
  reconcile_diverged: 'A tool call was interrupted and what it changed now matches neither its start nor its end.',
  /** A probe could not tell whether the call took effect. */
  reconcile_unreadable: 'A tool call was interrupted and whether it took effect cannot be read back.',
  /** Automatic recovery of an operation was tried too often, or too many operations are open. */
  operator_decision_required:
    'Automatic recovery of a tool call was tried too often; a person must decide what happened.',
  /** The tool's recovery mode differs from the one recorded when the call was dispatched. */
  tool_recovery_mode_changed: 'A tool changed how it can be recovered since the call was made.',
  /** The tool journal contradicts itself (an orphan, a duplicate, a gap or a mismatched identity). */
  tool_journal_corrupt: 'The record of tool calls contradicts itself.',
  /** A link of the history chain no longer hashes to the digest its continuation recorded. */
  source_prefix_digest_mismatch: 'An earlier part of this session’s history changed after it was continued.',
} as const

/**
 * A stable park reason code.
 * @category models
 */
export type ParkReason = keyof typeof ParkReasonSentences

/**
 * Every park reason code, in evaluation order (the spec's table order, plus `recovery_unwritable` as exit 1a).
 * @category models
 */
export const PARK_REASONS: ReadonlyArray<ParkReason> = Object.keys(ParkReasonSentences) as Array<ParkReason>

/**
 * True when `code` is a known park reason.
 * @category guards
 */
export const isParkReason = (code: string): code is ParkReason => Object.hasOwn(ParkReasonSentences, code)

/**
 * The human sentence for a park reason; an unknown code gets a generic sentence.
 * @category combinators
 */
export const describeParkReason = (code: string): string =>
  isParkReason(code) ? ParkReasonSentences[code] : 'Resuming was refused for a reason this version does not know.'

// A new turn works whenever the session's history reads: it is told what the interrupted turn left
// open (decision 171), so "start a new turn" is the way on for every park that is not about reading.
const NEW_TURN =
  'start a new turn in this session: the model keeps the conversation and is told the interrupted call’s outcome is unknown.'
// A call whose effect cannot be judged is settled by the person who knows: `maka resolve` records
// what happened once, and resuming then continues the turn with that record (Phase 2).
const RESOLVE =
  'record what you found with `maka resolve` (Resolve… in the window, /resolve in the chat) and resume; or '
const UNREADABLE =
  'Inspect the session with `show`; this turn cannot be continued, so carry the work on in a new session.'

/**
 * What a person can do about each park reason, in words every host can show (decision 172). A host
 * names its own command or button for "resume" and "a new turn".
 * @category models
 */
export const ParkReasonNextSteps: { readonly [R in ParkReason]: string } = {
  resume_feature_disabled: 'Turn safe resume on, then resume again.',
  recovery_unwritable: 'Make the data directory writable again, run recovery, then resume.',
  resume_candidate_missing: 'Nothing is interrupted here: start a new turn, or resume another session.',
  session_owner_alive: 'Wait for the other process to finish, or continue the session there.',
  safety_observation_unavailable: 'Check that the workspace folder exists and can be read, then resume again.',
  source_run_unreadable: UNREADABLE,
  workspace_identity_missing: `This turn ran without safe resume, so it cannot be continued; ${NEW_TURN}`,
  runtime_ledger_unreadable: UNREADABLE,
  runtime_identity_mismatch: UNREADABLE,
  continuation_already_exists:
    'It was resumed already: look at the session with `show` and go on from its latest turn.',
  runtime_offset_mismatch: UNREADABLE,
  dangling_tool_state: `Check whether the call took effect (look at what it would change), then ${RESOLVE}${NEW_TURN}`,
  pending_permission: `Resume again to be asked once more, or ${NEW_TURN}`,
  runtime_ledger_empty: 'Nothing was recorded: send the prompt again.',
  continuation_identity_reused: 'Resume again: a new continuation gets new ids.',
  terminal_repair_failed: UNREADABLE,
  workspace_cwd_mismatch: 'Resume from the folder the turn started in.',
  workspace_identity_mismatch: `The folder was replaced since the turn ran; check it, then ${NEW_TURN}`,
  background_operation_pending: 'Wait for the background command or sub-agent to finish, then resume again.',
  workspace_ref_missing: 'Restore the workspace checkpoint, then resume again.',
  checkpoint_restore_failed: 'Restore the workspace checkpoint, then resume again.',
  tool_catalog_mismatch: `Make the tool available again (the same maka version or tool server), then resume; or ${NEW_TURN}`,
  provider_resume_head_unsupported: `The history cannot be replayed as it is; ${NEW_TURN}`,
  provider_resume_boundary_unsupported: `The history cannot be replayed as it is; ${NEW_TURN}`,
  tool_outcome_unknown: `Check whether the call took effect, then ${RESOLVE}${NEW_TURN}`,
  tool_still_running: 'Resume again: resuming waits for the command to finish and then continues.',
  reconcile_diverged: `Look at what the call changed and put it right, then ${RESOLVE}${NEW_TURN}`,
  reconcile_unreadable: `Check whether the call took effect, then ${RESOLVE}${NEW_TURN}`,
  operator_decision_required: `Check whether the call took effect, then ${RESOLVE}${NEW_TURN}`,
  tool_recovery_mode_changed: `Resume with the maka version the turn ran with; or check whether the call took effect, ${RESOLVE}${NEW_TURN}`,
  tool_journal_corrupt: `This turn cannot be continued safely; ${NEW_TURN}`,
  source_prefix_digest_mismatch: UNREADABLE,
}

/**
 * The next step for a park reason; an unknown code gets a generic one.
 * @category combinators
 */
export const nextStepForPark = (code: string): string =>
  isParkReason(code) ? ParkReasonNextSteps[code] : 'Update maka, then resume again.'
