/**
 * One tool call of a protocol run (Phase 2), in the journal's write order: preflight (the tool, the
 * cancel, the permission), the basis of a `reconcile` tool, the durable dispatch row (T1), the
 * implementation, and the durable response that carries its outcome (T2). The implementation starts
 * only after T1 resolved, so a committed call with no dispatch row proves the tool never started.
 * A refusal before T1 is a durable error response (`pre_t1_synthetic`) and runs nothing.
 *
 * The same steps serve a continuation's reissue of an earlier run's call: another attempt, another
 * permission request id, and `reissue_t2` as the origin.
 */
import { hash } from 'node:crypto'
import {
  type NonEmptyString,
  type SettlementOrigin,
  argsDigestWith,
  makeDispatchEvent,
  makeNonEmptyStringUnsafe,
  makeToolOutcome,
} from '@maka/events'
import { type Tool, type ToolOutcome, computeReconcileBasis, recoveryModeOf } from '@maka/tools'
import * as E from 'fp-ts/lib/Either.js'
import type { CrashPoint } from './RuntimeDeps.js'
import type { RunWriteFailure, RunWriter } from './runWriter.js'
import { type PermissionContext, authorise } from './toolPermission.js'

/**
 * Which attempt of which operation a call is, and what its rows say.
 * @category models
 */
export interface JournaledAttempt {
  readonly operationId: string
  /** The dispatch's attempt: 1 in the call's own run, the last attempt + 1 for a reissue. */
  readonly attempt: number
  /** `normal_t2` in the call's own run, `reissue_t2` for a reissue. */
  readonly origin: Extract<SettlementOrigin, 'normal_t2' | 'reissue_t2'>
  /** `perm-<toolCallId>`, or `perm-<toolCallId>-r<n>` for the n-th adoption of a reissue. */
  readonly requestId: string
  /** Present when a probe chose this reissue. */
  readonly priorVerdict?: 'not_applied'
  /**
   * A reissue a probe chose: makes that probe again right before the dispatch — after preflight, which
   * may have waited for a person, and after the basis — and answers whether it still reads
   * `not_applied`. When it does not, the call stops there: no dispatch, no response.
   */
  readonly stillNotApplied?: () => Promise<boolean>
  /** The crash point after the response: `after_tool_response`, or `after_settlement_committed`. */
  readonly afterResponse: CrashPoint
}

/**
 * What a journaled call needs of the run it belongs to: its writer, the permission settings, the
 * workspace, the cancel signal and the crash points (the loop's input has them all).
 * @category models
 */
export interface JournaledCallContext extends PermissionContext {
  readonly cwd: string
  readonly crashPoint: (point: CrashPoint) => Promise<void>
}

/**
 * A call as the loop (or a reissue) hands it over.
 * @category models
 */
export interface JournaledCallInput {
  readonly id: NonEmptyString
  readonly name: NonEmptyString
  readonly args: unknown
}

/**
 * Appends a tool's response row. With `journal` (a protocol run) the outcome rides on the row the
 * model sees, with the operation id; without, it is Phase 1's response row.
 *
 * The response of an implementation that ran (`normal_t2`, `reissue_t2`) is not fsynced on its own:
 * the run's next durable append — the next call's dispatch, a settlement, the terminal row — makes
 * it durable with every row before it, so the journal costs one durable append per call (decision
 * 154). A process crash loses nothing written; a power loss that takes the response leaves the
 * operation dispatched with no response, which planning decides by its recovery mode. A refusal
 * before T1 and a settlement that ran nothing stay durable at once.
 * @category constructors
 */
export const appendToolResponse = async (
  writer: RunWriter,
  call: { readonly id: NonEmptyString; readonly name: NonEmptyString },
  outcome: ToolOutcome,
  journal?: { readonly operationId: string; readonly origin: SettlementOrigin; readonly attempt?: number },
): Promise<E.Either<RunWriteFailure, void>> => {
  const toolOutcome =
    journal === undefined
      ? undefined
      : makeToolOutcome({
          operationId: journal.operationId,
          settlementOrigin: journal.origin,
          ...(journal.attempt === undefined ? {} : { attempt: journal.attempt }),
        })
  // Built from values this module chose; a Left is a bug here, never the user's input.
  if (toolOutcome !== undefined && E.isLeft(toolOutcome)) throw new TypeError(`tool outcome: ${toolOutcome.left}`)
  const appended = await writer.append(
    {
      role: 'tool',
      author: 'tool',
      content: {
        kind: 'function_response',
        id: call.id,
        name: call.name,
        result: outcome.result,
        ...(outcome.isError ? { isError: true } : {}),
      },
      ...(toolOutcome === undefined ? {} : { actions: { toolOutcome: toolOutcome.right } }),
      refs:
        journal === undefined
          ? { toolCallId: call.id }
          : { toolCallId: call.id, operationId: makeNonEmptyStringUnsafe(journal.operationId) },
    },
    { durable: journal !== undefined && journal.origin !== 'normal_t2' && journal.origin !== 'reissue_t2' },
  )()
  return E.map(() => undefined)(appended)
}

/**
 * A call's `argsDigest`, hashed by node: the same digest as the projection's pure one, at a fraction
 * of a cold process's cost per call (decision 169). The one-shot `hash` skips the `Hash` object and
 * its stream machinery that `createHash` builds for every call.
 * @category constructors
 */
export const nativeArgsDigest = argsDigestWith((text) => hash('sha256', text, 'hex'))

const refused = (message: string): ToolOutcome => ({ result: { error: message }, isError: true })

/**
 * Runs one call of a protocol run through the journal; a write the store refused stops the run.
 * Answers the origin of the response it wrote, or null when `stillNotApplied` stopped it before its
 * dispatch (nothing was dispatched and no response written).
 * @category constructors
 */
export const runJournaledCall = async (
  input: JournaledCallContext,
  tool: Tool | undefined,
  call: JournaledCallInput,
  journal: JournaledAttempt,
  run: (tool: Tool, context: { readonly operationId: string; readonly attempt: number }) => Promise<ToolOutcome>,
): Promise<E.Either<RunWriteFailure, SettlementOrigin | null>> => {
  const { writer } = input
  const refuse = async (outcome: ToolOutcome): Promise<E.Either<RunWriteFailure, SettlementOrigin>> => {
    const answered = await appendToolResponse(input.writer, call, outcome, {
      operationId: journal.operationId,
      origin: 'pre_t1_synthetic',
    })
    if (E.isLeft(answered)) return answered
    await input.crashPoint(journal.afterResponse)
    return E.right('pre_t1_synthetic')
  }
  // 1. Preflight: the tool, the cancel, the permission.
  if (tool === undefined) return refuse(refused(`There is no tool named ${call.name}.`))
  if (input.signal?.aborted === true) return refuse(refused('The run was cancelled before this tool ran.'))
  const decision = await authorise(input, tool, call, {
    requestId: journal.requestId,
    afterRequest: () => input.crashPoint('after_permission_request_committed'),
  })()
  if (E.isLeft(decision)) return decision
  if (decision.right === 'deny') return refuse(refused('Permission denied.'))
  // 2. The pre-image of a `reconcile` tool, read before anything can change it.
  const recoveryMode = recoveryModeOf(tool, call.args)
  let reconcileBasis: string | undefined
  if (recoveryMode === 'reconcile') {
    const header = writer.header()
    const basis = await computeReconcileBasis(tool, call.args, {
      cwd: input.cwd,
      sessionId: header.sessionId,
      ...(input.signal === undefined ? {} : { signal: input.signal }),
    })
    if (E.isLeft(basis)) return refuse(refused(basis.left.message))
    reconcileBasis = basis.right
  }
  // A probe's `not_applied` may have gone stale since revalidation (an effect that landed late): the
  // last moment to find out is now, before T1 makes another attempt possible.
  if (journal.stillNotApplied !== undefined && !(await journal.stillNotApplied())) return E.right(null)
  // 3. T1, durable: only after it resolved may the implementation start.
  const header = writer.header()
  const stamp = writer.stamp()
  const dispatch = makeDispatchEvent(header, stamp, {
    operationId: journal.operationId,
    toolCallId: call.id,
    toolName: call.name,
    argsDigest: nativeArgsDigest(call.args),
    recoveryMode,
    attempt: journal.attempt,
    reconcileBasis,
    priorVerdict: journal.priorVerdict,
  })
  if (E.isLeft(dispatch)) throw new TypeError(`tool dispatch: ${dispatch.left}`)
  const dispatched = await writer.appendRow(dispatch.right, { durable: true })()
  if (E.isLeft(dispatched)) return dispatched
  // The run already has its terminal event: nothing more may happen in it, the tool least of all.
  if (dispatched.right === null) return E.right(journal.origin)
  await input.crashPoint('after_tool_dispatch_committed')
  // 4. The implementation.
  const outcome = await run(tool, { operationId: journal.operationId, attempt: journal.attempt })
  // 5. T2, durable.
  const answered = await appendToolResponse(input.writer, call, outcome, {
    operationId: journal.operationId,
    origin: journal.origin,
    attempt: journal.attempt,
  })
  if (E.isLeft(answered)) return answered
  await input.crashPoint(journal.afterResponse)
  return E.right(journal.origin)
}
