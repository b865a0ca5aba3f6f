/**
 * The invariants `maka chaos` checks, as stable codes (never renamed or reused), and one violation
 * found on disk. A violation names what broke and where, never a prompt, tool argument or result.
 */

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * Every invariant the checker enforces.
 * @category models
 */
export const InvariantCode = {
  /** Two runs continue one boundary (their headers' `continuationSource`, or their start rows, name it). */
  duplicate_continuation: 'duplicate_continuation',
  /** A continuation run whose boundary has no claim file, or a claim that names another run. */
  continuation_without_claim: 'continuation_without_claim',
  /** A tool call's side effect happened more than once. */
  side_effect_repeated: 'side_effect_repeated',
  /** A succeeded tool call's response is committed, but its side effect never happened. */
  side_effect_missing: 'side_effect_missing',
  /** A terminal run header without the matching terminal event in its ledger. */
  terminal_header_without_event: 'terminal_header_without_event',
  /** A row committed before a kill or resume is gone or no longer byte-identical. */
  committed_row_changed: 'committed_row_changed',
  /** The ledger of a run that was already terminal changed. */
  terminal_ledger_changed: 'terminal_ledger_changed',
  /** A claim file changed or disappeared. */
  claim_changed: 'claim_changed',
  /** Planning the same state twice gave different plans. */
  plan_not_deterministic: 'plan_not_deterministic',
  /** Planning changed a file. */
  planning_wrote: 'planning_wrote',
  /** A child process neither ended nor reached its crash point within the ceiling. */
  child_timeout: 'child_timeout',
  /**
   * A ledger holds more than one terminal event appended by recovery (`stateDelta.recovered`): two
   * processes each took the dead owner's lock and repaired the same run.
   */
  duplicate_repair: 'duplicate_repair',
  /**
   * A ledger holds more than one terminal event, at least one of them the run's own: it ended twice,
   * or was repaired while or after it ended by itself (two recovered ones alone are `duplicate_repair`).
   */
  duplicate_terminal: 'duplicate_terminal',
  /** A row id appears more than once among a ledger's committed rows: two writers appended the same row. */
  duplicate_row_id: 'duplicate_row_id',
  /** A phase left a committed row that is not a JSON object in a ledger whose committed rows all parsed before it. */
  ledger_unreadable_after_phase: 'ledger_unreadable_after_phase',
  /**
   * A run's history (its sources' committed rows up to each pinned boundary, then its own rows)
   * holds more than one `function_response` for one tool call: the model saw a call answered twice.
   */
  response_repeated: 'response_repeated',
  /** A ledger committed before a resume (the source and its ancestors) is not byte-identical after it. */
  source_ledger_changed: 'source_ledger_changed',
  /**
   * An operation of a `reconcile`, `reattach` or `never_auto_retry` tool was dispatched again
   * without the probe's `priorVerdict: not_applied` on the new dispatch row: its effect may have run twice.
   */
  redispatch_without_not_applied: 'redispatch_without_not_applied',
  /** A `write_file` effect's file holds bytes other than the content the call wrote (half-written or foreign). */
  write_effect_wrong: 'write_effect_wrong',
} as const

/**
 * An invariant code.
 * @category models
 */
export type InvariantCode = (typeof InvariantCode)[keyof typeof InvariantCode]

/**
 * One broken invariant, where it was found.
 * @category models
 */
export interface Violation {
  readonly code: InvariantCode
  readonly sessionId: string
  readonly runId?: string
  /** One sentence: ids, counts and codes only. */
  readonly message: string
}
