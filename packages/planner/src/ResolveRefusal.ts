/**
 * The codes with which `resolve` (a person's adjudication of an open tool call) refuses, and the
 * sentence a person reads for each. They sit beside the planner's park reasons because a resolve is
 * judged on a plan: the planner's early exits refuse it first, with their own codes, then these.
 * Codes are stable: never renamed, never reused.
 */
import type { ParkReason } from '@maka/events'
import { EarlyExitTable } from './internal/GateTable.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * Every `resolve_*` code with its human sentence, in the order the checks run.
 * @category models
 */
export const ResolveRefusalSentences = {
  /** Runs here write no tool journal (safe resume off, the journal switched off, or a store whose appends are not durable). */
  resolve_unavailable:
    'Recording what became of a tool call needs safe resume, the tool journal and a store with durable appends.',
  /** The chain of the latest interrupted turn holds no such call or operation. */
  resolve_call_unknown: 'No tool call with that id was found in the interrupted turn.',
  /** The tool call id names more than one operation of the chain; `--operation` names one. */
  resolve_call_ambiguous: 'That tool call id names more than one call; name the one meant with --operation.',
  /** The operation already has its one response. */
  resolve_call_settled: 'That tool call already has a recorded outcome; it cannot be recorded again.',
  /** A command may still be running, or its process cannot be observed from here. */
  resolve_call_running:
    'A command of this session may still be running (or cannot be observed from here); wait for it to end, then try again.',
  /** `applied` for a call the journal proves never started. */
  resolve_verdict_contradicts_journal:
    'The record shows this call never started, so it cannot have taken effect; record not_applied or failed instead.',
} as const

/**
 * A `resolve_*` refusal code.
 * @category models
 */
export type ResolveRefusalCode = keyof typeof ResolveRefusalSentences

/**
 * True when `code` is a `resolve_*` refusal code.
 * @category guards
 */
export const isResolveRefusalCode = (code: string): code is ResolveRefusalCode =>
  Object.hasOwn(ResolveRefusalSentences, code)

/**
 * The park reasons only an early exit of the planner gives (exits 1–9 and 1a, 8a): a resolve refuses
 * with them first, because the session cannot be judged (or another process may still run the tool).
 * @category models
 */
export const EARLY_EXIT_REASONS: ReadonlyArray<ParkReason> = EarlyExitTable.map((row) => row.reason)
