/**
 * A person's adjudication of an open tool call (`resolve`), decided as data: the input checks that
 * need nothing read, the refusals in the contract's order once the session was planned and its
 * source re-read under the owner lock, and the adjudication run's writes — the claim and header, the
 * continuation-start row naming the operation, the call's one response, and the terminal rows.
 * Pure: the time, the ids and everything read come in as data; the runtime performs what this decides.
 */
import {
  type AgentRun,
  type IsoTimestamp,
  type RuntimeEvent,
  type SettlementPlan,
  type Sha256Digest,
  FailureClass,
  makeNonEmptyStringUnsafe,
  makeNonNegativeIntUnsafe,
  makeToolOutcome,
} from '@maka/events'
import { EARLY_EXIT_REASONS, type ContinuationPlan, ResolveRefusalSentences } from '@maka/planner'
import { type ChainProjection, type OpenOperation, projectResumePlan } from '@maka/projection'
import * as E from 'fp-ts/lib/Either.js'
import { type ContinuationStart, decideContinuation } from './decideContinuation.js'
import { type RunTerminal, decideTerminal } from './decideTerminal.js'
import type { ProviderIdentity } from './decideTurnStart.js'
import type { ResolveActor, ResolveRequest, ResolveResult, ResolveTarget, ResolveVerdict } from './Runtime.js'
import { rowStamp } from './runWriter.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/** The most bytes (UTF-8) an operator's `output` may hold. */
export const MAX_RESOLVE_OUTPUT_BYTES = 64 * 1024

/**
 * What this host is: whether a run it starts writes the tool journal, condition by condition.
 * @category models
 */
export interface ResolveConditions {
  readonly safeBoundaryResumeEnabled: boolean
  readonly toolJournal: boolean
  readonly durableAppend: boolean
}

/**
 * A refusal: its codes (the first is the reason), and what it names.
 * @category models
 */
export interface ResolveRefusal {
  readonly codes: ReadonlyArray<string>
  readonly detail?: unknown
}

/**
 * One `function_call` row of the chain, settled or not.
 * @category models
 */
export interface ChainCall {
  readonly operationId: string
  readonly toolCallId: string
  readonly toolName: string
  readonly runId: string
}

/**
 * What the refusals are judged on: the plan made before the owner lock, and what was re-read under it.
 * @category models
 */
export interface ResolveJudgement {
  readonly plan: ContinuationPlan
  /** Every call of the chain, oldest first. */
  readonly calls: ReadonlyArray<ChainCall>
  /** The Phase 2 projection of the chain as re-read. */
  readonly projection: ChainProjection
  /** The source's committed rows as re-read (a legacy source's Phase 0 corruptions are judged on them). */
  readonly sourceEvents: ReadonlyArray<RuntimeEvent>
  /** The source run carries the protocol marker. */
  readonly sourceProtocol: boolean
}

/**
 * The verdict's result text when the person gave none (C6).
 * @category models
 */
export const AdjudicationResults: { readonly [V in ResolveVerdict]: string } = {
  applied: 'An operator confirmed that this call took effect; its output was not recorded.',
  not_applied: 'An operator confirmed that this call did not take effect. It was not run again.',
  failed: 'An operator recorded that this call failed.',
}

const TERMINAL_MESSAGE = 'An operator recorded the outcome of an interrupted tool call; resume to continue the turn.'

// -------------------------------------------------------------------------------------
// input
// -------------------------------------------------------------------------------------

const VERDICTS: ReadonlyArray<string> = ['applied', 'not_applied', 'failed']
const ACTORS: ReadonlyArray<string> = ['cli', 'tui', 'desktop', 'browser']

// A lone surrogate has no UTF-8 encoding.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

const utf8Length = (text: string): number => {
  let bytes = 0
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4
  }
  return bytes
}

const missingConditions = (conditions: ResolveConditions): ReadonlyArray<string> => [
  ...(conditions.safeBoundaryResumeEnabled ? [] : ['safe resume is off (MAKA_RUNTIME_SAFE_BOUNDARY_RESUME=1)']),
  ...(conditions.toolJournal ? [] : ['the tool journal is switched off (MAKA_RUNTIME_TOOL_JOURNAL=0)']),
  ...(conditions.durableAppend ? [] : ['the store does not make appends durable']),
]

/**
 * A resolve request as a host received it, before it is checked: any verdict or actor text, and
 * zero, one or two targets.
 * @category models
 */
export interface UncheckedResolveRequest {
  readonly sessionId: string
  readonly target: { readonly callId?: string | undefined; readonly operationId?: string | undefined }
  readonly verdict: string
  readonly output?: string | undefined
  readonly actor: string
}

const isVerdict = (v: string): v is ResolveVerdict => VERDICTS.includes(v)
const isActor = (a: string): a is ResolveActor => ACTORS.includes(a)

/**
 * The checks that need nothing read, in the contract's order: `resolve_unavailable` (naming each
 * missing condition), the verdict, exactly one target, the actor, the output (well-formed, at most
 * 64 KiB). Right: the request, typed.
 * @category constructors
 */
export const checkResolveRequest = (
  request: UncheckedResolveRequest,
  conditions: ResolveConditions,
): E.Either<Extract<ResolveResult, { _tag: 'Unavailable' | 'Invalid' }>, ResolveRequest> => {
  const missing = missingConditions(conditions)
  if (missing.length > 0) {
    return E.left({
      _tag: 'Unavailable',
      code: 'resolve_unavailable',
      message: `${ResolveRefusalSentences.resolve_unavailable} Here ${missing.join(', and ')}.`,
    })
  }
  const { verdict, actor, output } = request
  if (!isVerdict(verdict)) {
    return E.left({
      _tag: 'Invalid',
      code: 'invalid_verdict',
      message: 'The verdict (--as) must be applied, not_applied or failed.',
    })
  }
  const { callId, operationId } = request.target
  const target: ResolveTarget | null =
    callId !== undefined && operationId === undefined && callId !== ''
      ? { callId }
      : operationId !== undefined && callId === undefined && operationId !== ''
        ? { operationId }
        : null
  if (target === null) {
    return E.left({
      _tag: 'Invalid',
      code: 'invalid_target',
      message: 'Name exactly one call: a tool call id (--call) or an operation id (--operation).',
    })
  }
  if (!isActor(actor)) {
    return E.left({
      _tag: 'Invalid',
      code: 'invalid_actor',
      message: 'The actor must be cli, tui, desktop or browser.',
    })
  }
  if (output !== undefined && (LONE_SURROGATE.test(output) || utf8Length(output) > MAX_RESOLVE_OUTPUT_BYTES)) {
    return E.left({
      _tag: 'Invalid',
      code: 'invalid_output',
      message: `The output must be valid UTF-8 of at most ${MAX_RESOLVE_OUTPUT_BYTES} bytes.`,
    })
  }
  return E.right({
    sessionId: request.sessionId,
    target,
    verdict,
    ...(output === undefined ? {} : { output }),
    actor,
  })
}

// -------------------------------------------------------------------------------------
// refusals
// -------------------------------------------------------------------------------------

const PHASE0_CORRUPTIONS: ReadonlySet<string> = new Set([
  'unmatched_tool_result',
  'tool_name_mismatch',
  'tool_recovery_corruption',
])

/**
 * Refusal 1: an early exit of the plan (the session cannot be judged, or a live owner may still run
 * the tool), with its codes.
 * @category gates
 */
export const earlyExitRefusal = (plan: ContinuationPlan): ResolveRefusal | null => {
  const codes = plan.rejectionReasons.filter((code) => EARLY_EXIT_REASONS.includes(code))
  return codes.length === 0 ? null : { codes }
}

const refuse = (code: string, detail?: unknown): E.Either<ResolveRefusal, never> =>
  E.left(detail === undefined ? { codes: [code] } : { codes: [code], detail })

/**
 * Refusals 2–7 in the contract's order, and the open operation the verdict is for: a corrupt
 * journal, an unknown call, an ambiguous tool call id, a settled call, a command that may still run,
 * and a verdict the journal contradicts.
 * @category gates
 */
export const selectResolveOperation = (
  judgement: ResolveJudgement,
  request: Pick<ResolveRequest, 'target' | 'verdict'>,
): E.Either<ResolveRefusal, OpenOperation> => {
  const { plan, projection, calls } = judgement
  // 2. The journal contradicts itself, or a legacy source breaks Phase 0's pairing rules.
  if (projection.corruptions.length > 0) {
    return refuse('tool_journal_corrupt', {
      corruptions: projection.corruptions
        .slice(0, 20)
        .map((c) => ({ kind: c.kind, runId: c.runId, operationId: c.operationId })),
    })
  }
  if (!judgement.sourceProtocol) {
    const broken = projectResumePlan(judgement.sourceEvents).diagnostics.filter((d) => PHASE0_CORRUPTIONS.has(d.code))
    if (broken.length > 0) {
      return refuse('dangling_tool_state', {
        diagnostics: broken.slice(0, 20).map((d) => ({ code: d.code, toolCallId: d.toolCallId ?? null })),
      })
    }
  }
  // 3–4. The call, named once.
  const target = request.target
  const matching =
    'operationId' in target
      ? calls.filter((call) => call.operationId === target.operationId)
      : calls.filter((call) => call.toolCallId === target.callId)
  const only = matching[0]
  if (only === undefined) return refuse('resolve_call_unknown')
  if (matching.length > 1) {
    return refuse('resolve_call_ambiguous', {
      operations: matching.map((call) => ({
        operationId: call.operationId,
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        runId: call.runId,
      })),
    })
  }
  // 5. It already has its one response.
  const operation = projection.openOperations.find((op) => op.operationId === only.operationId)
  if (operation === undefined) return refuse('resolve_call_settled', { operationId: only.operationId })
  // 6. A command that may still run: any unsettled shell run of the session, or this `reattach`
  // command observed running — or not observed at all (another host or workspace).
  if (plan.rejectionReasons.includes('background_operation_pending')) {
    return refuse('resolve_call_running', { operationId: operation.operationId })
  }
  if (operation.recordedMode === 'reattach') {
    const planned = plan.openToolOperations?.find((op) => op.operationId === operation.operationId)
    const unobserved =
      planned === undefined ||
      (planned.action === null && planned.reason === null) ||
      plan.rejectionReasons.includes('workspace_identity_mismatch') ||
      plan.rejectionReasons.includes('workspace_cwd_mismatch')
    if (unobserved || planned?.reason === 'tool_still_running') {
      return refuse('resolve_call_running', { operationId: operation.operationId })
    }
  }
  // 7. The journal proves the call never started.
  if (request.verdict === 'applied' && operation.status === 'definitely_not_dispatched') {
    return refuse('resolve_verdict_contradicts_journal', { operationId: operation.operationId })
  }
  return E.right(operation)
}

// -------------------------------------------------------------------------------------
// writes
// -------------------------------------------------------------------------------------

/**
 * What the adjudication run's writes are decided from.
 * @category models
 */
export interface AdjudicationInput {
  readonly ids: {
    readonly runId: ContinuationStart['header']['runId']
    readonly turnId: ContinuationStart['header']['turnId']
    readonly invocationId: ContinuationStart['header']['invocationId']
  }
  readonly sourceHeader: AgentRun
  readonly sourceRuntimeEventHighWater: number
  readonly prefixDigest: Sha256Digest
  readonly operation: Pick<OpenOperation, 'operationId' | 'toolCallId' | 'toolName'>
  readonly verdict: ResolveVerdict
  readonly actor: ResolveActor
  readonly output?: string
  readonly createdAt: IsoTimestamp
  /** The time stamped on its rows. */
  readonly ts: number
}

/**
 * The adjudication run's writes, in order.
 * @category models
 */
export interface Adjudication {
  readonly start: ContinuationStart
  readonly response: RuntimeEvent
  readonly terminal: RunTerminal
}

/**
 * Decides the adjudication run: a continuation of the source boundary (its cwd, model and workspace
 * identity copied from the source header) whose start row lists the one `adjudicate` entry, whose
 * row 2 is the call's response recorded by the person, and which ends `failed` with
 * `operator_resolved` — resumable, and never calling a model itself.
 * @category constructors
 */
export const decideAdjudication = (input: AdjudicationInput): Adjudication => {
  const source = input.sourceHeader
  const provider: ProviderIdentity = {
    providerId: source.providerId,
    modelId: source.modelId,
    ...(source.providerBaseUrl === undefined ? {} : { providerBaseUrl: source.providerBaseUrl }),
  }
  const op = input.operation
  const settlementPlan = [
    {
      operationId: makeNonEmptyStringUnsafe(op.operationId),
      toolCallId: makeNonEmptyStringUnsafe(op.toolCallId),
      action: 'adjudicate' as const,
    },
  ] as unknown as SettlementPlan
  const start = decideContinuation({
    continuation: {
      sessionId: source.sessionId,
      invocationId: input.ids.invocationId,
      runId: input.ids.runId,
      turnId: input.ids.turnId,
      sourceInvocationId: source.invocationId,
      sourceRunId: source.runId,
      sourceTurnId: source.turnId,
      sourceRuntimeEventHighWater: makeNonNegativeIntUnsafe(input.sourceRuntimeEventHighWater),
      runtimeContext: [],
      sourceRuntimeContext: [],
      safetySnapshot: {
        // The source recorded it: planning refused a source without one (early exit 6).
        workspaceIdentity: source.workspaceIdentity ?? makeNonEmptyStringUnsafe('unknown'),
        backgroundOperationsSettled: true,
        availableToolNames: [],
      },
    },
    sourceHeader: source,
    provider,
    ...(source.permissionMode === undefined ? {} : { permissionMode: source.permissionMode }),
    createdAt: input.createdAt,
    stamp: rowStamp(input.ids.runId, 1, input.ts),
    journal: { prefixDigest: input.prefixDigest, settlementPlan },
  })
  const header = start.header
  const outcome = makeToolOutcome({
    operationId: op.operationId,
    settlementOrigin: 'operator_adjudication',
    adjudication: { verdict: input.verdict, actor: input.actor },
  })
  // Built from checked values: a Left is a bug here.
  if (E.isLeft(outcome)) throw new TypeError(`adjudication outcome: ${outcome.left}`)
  const stamp2 = rowStamp(header.runId, 2, input.ts)
  const response: RuntimeEvent = {
    id: stamp2.eventId,
    sessionId: header.sessionId,
    invocationId: header.invocationId,
    runId: header.runId,
    turnId: header.turnId,
    ts: stamp2.ts,
    partial: false,
    role: 'tool',
    author: 'user',
    content: {
      kind: 'function_response',
      id: makeNonEmptyStringUnsafe(op.toolCallId),
      name: makeNonEmptyStringUnsafe(op.toolName),
      result: input.output ?? AdjudicationResults[input.verdict],
      ...(input.verdict === 'applied' ? {} : { isError: true }),
    },
    actions: { toolOutcome: outcome.right },
    refs: {
      toolCallId: makeNonEmptyStringUnsafe(op.toolCallId),
      operationId: makeNonEmptyStringUnsafe(op.operationId),
    },
  }
  const terminal = decideTerminal(
    header,
    { _tag: 'Failed', failureClass: FailureClass.operator_resolved, message: TERMINAL_MESSAGE },
    rowStamp(header.runId, 3, input.ts),
    input.createdAt,
  )
  return { start, response, terminal }
}

/**
 * True when a run's first row is an adjudication run's start (its settlement plan holds an
 * `adjudicate` entry): start-up auto-continuation never continues such a run.
 * @category guards
 */
export const isAdjudicationStart = (first: RuntimeEvent | undefined): boolean =>
  first?.actions?.settlementPlan?.some((entry) => entry.action === 'adjudicate') === true
