/**
 * The executor's rejection codes (the in-process guard and revalidation before a continuation
 * starts) and the failure classes recovery writes. Stable codes, never renamed or reused.
 */

/**
 * Every execution rejection code with the sentence a person reads.
 * @category models
 */
export const ExecutionRejectionSentences = {
  /** Another run is active in this runtime. */
  another_run_active: 'Another turn is running in this process.',
  /** A claim for the same boundary or session is already in flight in this process. */
  continuation_in_progress: 'A resume of this session is already in progress.',
  /** The source header's identity changed after planning. */
  source_identity_changed: 'The interrupted run’s identity changed after the plan was made.',
  /** The source terminal status or terminal event changed after planning. */
  source_terminal_changed: 'The interrupted run’s ending changed after the plan was made.',
  /** The source cwd changed after planning. */
  source_cwd_changed: 'The working directory changed after the plan was made.',
  /** The ledger's committed row count differs from the planned high-water. */
  source_high_water_changed: 'The interrupted run’s ledger grew or shrank after the plan was made.',
  /** The ledger has as many rows as planned, but their bytes no longer hash to the planned prefix digest. */
  source_prefix_digest_changed: 'The interrupted run’s ledger was rewritten after the plan was made.',
  /** A ledger row's identity differs from the source's. */
  source_ledger_identity_changed: 'The interrupted run’s ledger now holds rows of another run.',
  /** The replay projection is no longer safe or differs from the planned context. */
  source_replay_changed: 'The history to replay changed after the plan was made.',
  /** A new probe of an operation gives another verdict than the plan's. */
  reconcile_verdict_changed: 'A tool call’s effect reads differently than when the plan was made.',
  /** The workspace identity differs from the plan's snapshot. */
  workspace_identity_changed: 'The workspace directory changed after the plan was made.',
  /** A background or child operation is now unsettled. */
  background_operation_started: 'A background command or sub-agent started after the plan was made.',
  /** A tool in the plan's snapshot is no longer available. */
  tool_catalog_changed: 'A tool the plan relies on is no longer available.',
  /** The checkpoint ref, high-water or restored flag changed. */
  workspace_checkpoint_changed: 'The workspace checkpoint changed after the plan was made.',
  /** A run or claim already holds this boundary. */
  continuation_claim_conflict: 'Another process already resumed this interruption.',
  /** The target run id already exists. */
  target_run_conflict: 'A run with the continuation’s id already exists.',
  /** An earlier run of the session cannot be read, so the history the model would see is unknown. */
  session_history_unreadable: 'An earlier run of the session cannot be read, so its history cannot be replayed.',
} as const

/**
 * A stable execution rejection code.
 * @category models
 */
export type ExecutionRejection = keyof typeof ExecutionRejectionSentences

/**
 * True when `code` is a known execution rejection code.
 * @category guards
 */
export const isExecutionRejection = (code: string): code is ExecutionRejection =>
  Object.hasOwn(ExecutionRejectionSentences, code)

/**
 * Failure classes written into failed terminal events and headers.
 * @category models
 */
export const FailureClass = {
  /** The process died mid-run; recovery ended the run. */
  app_restarted: 'app_restarted',
  /** A terminal header existed without a terminal event; recovery repaired the header. */
  missing_terminal_event: 'missing_terminal_event',
  /** A claim was written but its target run never started; recovery closed it. */
  continuation_abandoned_before_start: 'continuation_abandoned_before_start',
  /** The model provider failed in a way no narrower class names (e.g. a scripted `error` step). */
  provider_error: 'provider_error',
  /** The endpoint answered with an HTTP error status other than 401/403; the status is recorded as `httpStatus`. */
  provider_http_error: 'provider_http_error',
  /** The endpoint refused the credentials (HTTP 401 or 403); the status is recorded as `httpStatus`. */
  provider_auth_error: 'provider_auth_error',
  /** No connection could be made to the endpoint (refused, unknown host, bad address). */
  provider_unreachable: 'provider_unreachable',
  /** The connection broke after the endpoint had started to answer. */
  provider_connection_lost: 'provider_connection_lost',
  /** The endpoint sent nothing for longer than the provider timeout (no answer, or a stalled stream). */
  provider_timeout: 'provider_timeout',
  /** The endpoint's answer is not a valid chat completion (bad chunk, bad tool-call arguments, a cut-off stream). */
  provider_protocol_error: 'provider_protocol_error',
  /** The runtime itself failed (a bug or an I/O error). */
  runtime_error: 'runtime_error',
  /** The person running the turn interrupted it (Ctrl+C, SIGINT or SIGTERM); the run is `cancelled`. */
  user_interrupted: 'user_interrupted',
  /**
   * An adjudication run (`maka resolve`): a person recorded what became of an open tool call. The run
   * never calls a model; resuming continues from it.
   */
  operator_resolved: 'operator_resolved',
} as const

/**
 * A failure class code.
 * @category models
 */
export type FailureClass = (typeof FailureClass)[keyof typeof FailureClass]
