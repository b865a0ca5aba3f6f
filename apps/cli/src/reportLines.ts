/**
 * Readable lines for the results the CLI and TUI print: recovery repairs, plans and continuation
 * results. Every park reason and rejection is shown with its human sentence (never a raw code
 * alone); the sentences come from `@maka/events`, not from here.
 */
import {
  OPERATOR_VERDICTS,
  OperatorVerdictMeanings,
  describeCode,
  describeParkReason,
  isResolvableParkReason,
  nextStepForPark,
} from '@maka/events'
import type { ContinuationResult, RecoveryAction } from '@maka/executor'
import type {
  Continuation,
  ContinuationOutline,
  ContinuationPlan,
  OpenToolOperation,
  OutlinedPlan,
} from '@maka/planner'
import type { Style } from './Style.js'
import { failedWriteSentence } from './writeFailure.js'

/**
 * One recovery action as a line.
 * @category constructors
 */
export const recoveryLine = (action: RecoveryAction): string => {
  const target = action.runId ?? action.shellRunId
  const failed = failedWriteSentence(action.error)
  return `${action.action}: session ${action.sessionId}${target === undefined ? '' : ` ${action.runId === undefined ? 'shell run' : 'run'} ${target}`} — ${action.detail}${failed === null ? '' : ` (${failed})`}`
}

// How many events a continuation replays, and how many of them are the source run's own.
const historySize = (c: Continuation | ContinuationOutline): { readonly all: number; readonly own: number } =>
  'replay' in c
    ? { all: c.replay.reduce((sum, segment) => sum + segment.count, 0), own: c.replay.at(-1)?.count ?? 0 }
    : { all: c.runtimeContext.length, own: c.sourceRuntimeContext.length }

// The park reasons a person settles with `maka resolve`: a call whose effect cannot be judged.
const RESOLVABLE: ReadonlySet<string> = new Set([
  'dangling_tool_state',
  'tool_outcome_unknown',
  'reconcile_diverged',
  'reconcile_unreadable',
  'operator_decision_required',
  'tool_recovery_mode_changed',
])

/**
 * The calls a person may resolve in a parked plan: its open operations that park for a reason
 * `resolve` settles, else (a legacy session) the tool call ids of its `dangling_tool_state` finding.
 * @category constructors
 */
export const resolvableCalls = (
  plan: ContinuationPlan | OutlinedPlan,
): ReadonlyArray<{ readonly toolCallId: string; readonly toolName: string | null }> => {
  const open = (plan.openToolOperations ?? []).filter((op) => op.reason !== null && RESOLVABLE.has(op.reason))
  if (open.length > 0) return open.map((op) => ({ toolCallId: op.toolCallId, toolName: op.toolName }))
  const ids = plan.diagnostics.flatMap((d) =>
    d.code === 'dangling_tool_state' && Array.isArray(d.detail['toolCallIds'])
      ? (d.detail['toolCallIds'] as ReadonlyArray<unknown>).filter((id): id is string => typeof id === 'string')
      : [],
  )
  return [...new Set(ids)].map((toolCallId) => ({ toolCallId, toolName: null }))
}

/**
 * The next step of a plan that parks on calls a person can settle, as commands with their flags:
 * one `maka resolve` per call, then `maka resume`. Null when the first reason is not one of those.
 * @category constructors
 */
export const resolveStepLines = (
  plan: ContinuationPlan | OutlinedPlan,
  sessionId: string,
): ReadonlyArray<string> | null => {
  const first = plan.rejectionReasons[0]
  if (first === undefined || !RESOLVABLE.has(first)) return null
  const calls = resolvableCalls(plan)
  if (calls.length === 0) return null
  return [
    `next: ${nextStepForPark(first)}`,
    'record what happened to each call, then resume:',
    ...calls.map(
      (call) =>
        `  maka resolve ${sessionId} --call ${call.toolCallId} --as applied|not_applied|failed${call.toolName === null ? '' : `   # ${call.toolName}`}`,
    ),
    `  maka resume --session ${sessionId}`,
  ]
}

// What the plan does with an operation it does not park on.
const ACTION_WORDS: { readonly [A in NonNullable<OpenToolOperation['action']>]: string } = {
  reissue: 'a resume runs it again (it never took effect, or may safely run twice)',
  settle_applied: 'a resume records the effect it found',
  settle_reattached: 'a resume records how the command ended',
}

/**
 * How a person names an operation to `maka resolve` (or `/resolve`): its tool call id, unless that id
 * names more than one operation of the plan, then its operation id.
 * @category constructors
 */
export const resolveTarget = (
  op: OpenToolOperation,
  all: ReadonlyArray<OpenToolOperation>,
): { readonly flag: '--call' | '--operation'; readonly id: string } =>
  all.filter((other) => other.toolCallId === op.toolCallId).length > 1
    ? { flag: '--operation', id: op.operationId }
    : { flag: '--call', id: op.toolCallId }

/**
 * The command a host prints for settling one operation.
 * @category models
 */
export type ResolveCommandOf = (target: ReturnType<typeof resolveTarget>) => string

/**
 * `maka resolve SESSION --call ID --as …` (the CLI's wording).
 * @category constructors
 */
export const cliResolveCommand =
  (sessionId: string | null): ResolveCommandOf =>
  (target) =>
    `maka resolve ${sessionId ?? 'SESSION'} ${target.flag} ${target.id} --as ${OPERATOR_VERDICTS.join('|')} [--output TEXT]`

/**
 * `/resolve ID …` (the chat's wording).
 * @category constructors
 */
export const chatResolveCommand: ResolveCommandOf = (target) =>
  `/resolve ${target.flag === '--operation' ? `--operation ${target.id}` : target.id} ${OPERATOR_VERDICTS.join('|')} [text]`

/**
 * A parked plan's open tool operations as lines: for each, the tool, its status and recovery mode,
 * why it parked (with the sentence), and — when a person may settle it — what each verdict would
 * mean and the command that records it (left out when `resolveCommand` is null: the next step
 * already names it). Never the call's args: a plan holds none.
 * @category constructors
 */
export const openOperationLines = (
  plan: ContinuationPlan | OutlinedPlan,
  style: Style,
  resolveCommand: ResolveCommandOf | null,
): ReadonlyArray<string> => {
  const ops = plan.openToolOperations ?? []
  if (plan.disposition === 'continue' || ops.length === 0) return []
  const lines: Array<string> = [`open tool call${ops.length === 1 ? '' : 's'}:`]
  for (const op of ops) {
    lines.push(
      `- ${op.toolName} (call ${op.toolCallId}, operation ${op.operationId}): ${op.status}, mode ${op.recoveryMode ?? 'unknown'}`,
    )
    if (op.reason !== null) lines.push(`  why: ${describeParkReason(op.reason)} ${style.dim(`(${op.reason})`)}`)
    else if (op.action !== null) lines.push(`  ${ACTION_WORDS[op.action]}`)
    if (!isResolvableParkReason(op.reason)) continue
    lines.push('  what happened? each answer records the call once and runs nothing:')
    for (const verdict of OPERATOR_VERDICTS) lines.push(`    ${verdict}: ${OperatorVerdictMeanings[verdict]}`)
    if (resolveCommand !== null) lines.push(`  record it: ${resolveCommand(resolveTarget(op, ops))}`)
  }
  return lines
}

/**
 * A plan as a few lines: the disposition, the boundary, and every reason with its sentence; a parked
 * plan then lists its open tool operations (`openOperationLines`). With the session's id, a park on
 * calls a person can settle names the `maka resolve` commands to run in its next step; without it,
 * each settleable call names its command in `resolveCommand`'s wording (the chat's `/resolve`).
 * @category constructors
 */
export const planLines = (
  plan: ContinuationPlan | OutlinedPlan,
  style: Style,
  sessionId?: string,
  resolveCommand?: ResolveCommandOf,
): ReadonlyArray<string> => {
  const lines: Array<string> = []
  // A plan that stopped before it chose a run (the flag is off, another process owns the session…)
  // says so, rather than "no source run" of a session that has runs; a run whose ledger was never
  // read has no high-water to show.
  const boundary =
    plan.sourceRunId === null
      ? plan.rejectionReasons.includes('resume_candidate_missing')
        ? 'no run to resume'
        : 'stopped before choosing a run'
      : plan.sourceRuntimeEventHighWater === null
        ? `source run ${plan.sourceRunId}`
        : `source run ${plan.sourceRunId} at high-water ${plan.sourceRuntimeEventHighWater}`
  if (plan.disposition === 'continue' && plan.continuation !== undefined) {
    const c = plan.continuation
    lines.push(`${style.green('continue')} — ${boundary}`)
    lines.push(`continuation run ${c.runId} (turn ${c.turnId}, invocation ${c.invocationId})`)
    const size = historySize(c)
    lines.push(`replay history: ${size.all} events (${size.own} from the source run)`)
    lines.push(`workspace: ${c.safetySnapshot.workspaceIdentity}`)
    lines.push(`tools: ${c.safetySnapshot.availableToolNames.join(', ')}`)
  } else {
    lines.push(`${style.yellow('park')} — ${boundary}`)
    for (const code of plan.rejectionReasons) lines.push(`- ${describeParkReason(code)} ${style.dim(`(${code})`)}`)
    // The reasons come ranked: the first one's way on is the one that matters (decision 172).
    const first = plan.rejectionReasons[0]
    const resolving = sessionId === undefined ? null : resolveStepLines(plan, sessionId)
    if (resolving !== null) lines.push(...resolving)
    else if (first !== undefined) lines.push(`next: ${nextStepForPark(first)}`)
    lines.push(
      ...openOperationLines(
        plan,
        style,
        resolving !== null ? null : (resolveCommand ?? cliResolveCommand(sessionId ?? null)),
      ),
    )
  }
  for (const d of plan.diagnostics)
    if (d.severity === 'warning') lines.push(`warning: ${d.message} ${style.dim(`(${d.code})`)}`)
  return lines
}

/**
 * How a continuation ended, as lines (every reason with its sentence).
 * @category constructors
 */
export const continuationResultLines = (
  result: ContinuationResult,
  style: Style,
  sessionId?: string,
  resolveCommand?: ResolveCommandOf,
): ReadonlyArray<string> => {
  switch (result._tag) {
    case 'Parked':
      return planLines(result.plan, style, sessionId, resolveCommand)
    case 'Rejected':
      return [
        `${style.yellow('rejected')} — the plan was not executed:`,
        ...result.codes.map((code) => `- ${describeCode(code)} ${style.dim(`(${code})`)}`),
      ]
    case 'ProviderUnavailable':
      return [`Cannot resume: ${result.message}`]
    case 'Failed':
      return [
        `${style.red('failed')} at ${result.stage} (${result.errorClass}): ${result.message} Target run ${result.targetRunId}.`,
      ]
    case 'Finished':
      return [
        `${result.status === 'completed' ? style.green(result.status) : style.red(result.status)}${
          result.failureClass === undefined ? '' : ` (${result.failureClass})`
        } — continuation run ${result.targetRunId} of source run ${result.sourceRunId}`,
      ]
  }
}
