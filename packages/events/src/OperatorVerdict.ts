/**
 * The words every host uses when a person settles a tool call the runtime cannot judge (`maka
 * resolve`, the chat's `/resolve`, the banner's Resolve…): the three verdicts, what each one means
 * before the person commits to it, and which park reasons a person may settle. One table, so the
 * CLI, the chat and the window say the same thing.
 */
import type { ParkReason } from './ParkReason.js'

// -------------------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------------------

/**
 * The verdicts a person may record, in the order hosts offer them.
 * @category models
 */
export const OPERATOR_VERDICTS = ['applied', 'not_applied', 'failed'] as const

/**
 * A verdict a person may record for an open tool call.
 * @category models
 */
export type OperatorVerdict = (typeof OPERATOR_VERDICTS)[number]

/**
 * What recording each verdict means, said to the person before they confirm it. Nothing is run by
 * any of them: the record is evidence about the past, and the model decides what to do next.
 * @category models
 */
export const OperatorVerdictMeanings: { readonly [V in OperatorVerdict]: string } = {
  /** The effect happened. */
  applied:
    'It took effect: the call is recorded as succeeded, with your text (or a note that its output was not recorded) as its result. Nothing is run.',
  /** The effect did not happen, and will not. */
  not_applied:
    'It did not take effect: the call is recorded as not done and is not run again; the model decides whether to call it again, with fresh permission.',
  /** It ran and failed. */
  failed: 'It failed: the call is recorded as failed, with your text (or a note) as its error. Nothing is run again.',
}

/**
 * The park reasons of an open tool call that a person may settle with a verdict: the runtime cannot
 * judge the call's effect by itself. `tool_still_running` is not one (the command's end will be
 * recorded), nor are the reasons about the catalog or the journal's integrity.
 * @category models
 */
export const RESOLVABLE_PARK_REASONS: ReadonlyArray<ParkReason> = [
  'tool_outcome_unknown',
  'reconcile_diverged',
  'reconcile_unreadable',
  'operator_decision_required',
  'tool_recovery_mode_changed',
  'dangling_tool_state',
]

// -------------------------------------------------------------------------------------------------
// guards
// -------------------------------------------------------------------------------------------------

/**
 * True when `value` is a verdict a person may record.
 * @category guards
 */
export const isOperatorVerdict = (value: unknown): value is OperatorVerdict =>
  typeof value === 'string' && (OPERATOR_VERDICTS as ReadonlyArray<string>).includes(value)

/**
 * True when an open tool call parked for `reason` may be settled by a person's verdict.
 * @category guards
 */
export const isResolvableParkReason = (reason: string | null | undefined): boolean =>
  typeof reason === 'string' && (RESOLVABLE_PARK_REASONS as ReadonlyArray<string>).includes(reason)
