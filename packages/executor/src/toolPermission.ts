/**
 * Permission for a tool call: the request and the decision are system facts in the ledger, the
 * question (with the call's preview) goes to the person only, and a cancel denies a pending question.
 */
import { type NonEmptyString, makeNonEmptyStringUnsafe } from '@maka/events'
import type { Tool } from '@maka/tools'
import * as E from 'fp-ts/lib/Either.js'
import type * as TE from 'fp-ts/lib/TaskEither.js'
import type { PermissionMode, PermissionQuestion } from './RuntimeDeps.js'
import type { RunWriteFailure, RunWriter } from './runWriter.js'

/**
 * What the permission step needs from the loop.
 * @category models
 */
export interface PermissionContext {
  readonly writer: RunWriter
  readonly permissionMode: PermissionMode
  readonly askPermission?: (question: PermissionQuestion) => Promise<'allow' | 'deny'>
  readonly signal?: AbortSignal
}

// The preview is for the person answering, in the terminal only: it is never written to the ledger.
const describeCall = (tool: Tool, args: unknown): string | undefined => {
  try {
    return tool.describeCall?.(args)
  } catch {
    return undefined
  }
}

// Resolves 'deny' as soon as the run is cancelled, so a pending question cannot hold a cancel open.
const untilAborted = (
  answer: Promise<'allow' | 'deny'>,
  signal: AbortSignal | undefined,
): Promise<'allow' | 'deny'> => {
  if (signal === undefined) return answer
  if (signal.aborted) return Promise.resolve('deny')
  return new Promise((resolve) => {
    const onAbort = () => resolve('deny')
    signal.addEventListener('abort', onAbort, { once: true })
    answer.then(
      (decision) => {
        signal.removeEventListener('abort', onAbort)
        resolve(signal.aborted ? 'deny' : decision)
      },
      () => {
        signal.removeEventListener('abort', onAbort)
        resolve('deny')
      },
    )
  })
}

/**
 * Asks for (or applies the configured) permission for one mutating tool call, recording the
 * request and the decision as system rows; a call of a non-mutating tool is allowed without a row.
 * @category constructors
 */
export const authorise =
  (
    input: PermissionContext,
    tool: Tool,
    call: { readonly id: NonEmptyString; readonly name: NonEmptyString; readonly args: unknown },
    options: AuthoriseOptions = {},
  ): TE.TaskEither<RunWriteFailure, 'allow' | 'deny'> =>
  () =>
    authorised(input, tool, call, options)

/**
 * How a protocol run asks (Phase 2): a reissue asks under its own request id, and a crash point
 * follows the committed request.
 * @category models
 */
export interface AuthoriseOptions {
  /** The request id; `perm-<toolCallId>` when absent. */
  readonly requestId?: string
  /** Called once the request row is committed, before the question is put. */
  readonly afterRequest?: () => Promise<void>
}

const authorised = async (
  input: PermissionContext,
  tool: Tool,
  call: { readonly id: NonEmptyString; readonly name: NonEmptyString; readonly args: unknown },
  options: AuthoriseOptions,
): Promise<E.Either<RunWriteFailure, 'allow' | 'deny'>> => {
  if (!tool.mutates) return E.right('allow')
  const { writer } = input
  const { id: toolCallId, args } = call
  // Never empty by construction.
  const requestId = makeNonEmptyStringUnsafe(options.requestId ?? `perm-${toolCallId}`)
  const requested = await writer.append({
    role: 'system',
    author: 'system',
    actions: {
      permissionRequest: {
        requestId,
        // The call's name: the loop found `tool` by it, so the two are the same string.
        toolName: call.name,
        toolCallId,
      },
    },
  })()
  if (E.isLeft(requested)) return requested
  await options.afterRequest?.()
  let decision: 'allow' | 'deny' = input.permissionMode === 'allow' ? 'allow' : 'deny'
  if (input.permissionMode === 'ask') {
    if (input.askPermission === undefined) {
      decision = 'deny'
    } else {
      const waiting = await writer.setStatus('waiting_permission')()
      if (E.isLeft(waiting)) return waiting
      const header = writer.header()
      const preview = describeCall(tool, args)
      decision = await untilAborted(
        input.askPermission({
          sessionId: header.sessionId,
          runId: header.runId,
          requestId,
          toolName: tool.name,
          toolCallId,
          ...(preview === undefined ? {} : { preview }),
        }),
        input.signal,
      )
      const resumed = await writer.setStatus('running')()
      if (E.isLeft(resumed)) return resumed
    }
  }
  // A cancelled question was answered by nobody: the runtime denies it, and says so.
  const answeredByUser =
    input.permissionMode === 'ask' && input.askPermission !== undefined && input.signal?.aborted !== true
  // A decision is a system fact, never a user message; `author` says who decided (the person under
  // `ask`, the configured mode otherwise).
  const decided = await writer.append({
    role: 'system',
    author: answeredByUser ? 'user' : 'system',
    actions: { permissionDecision: { requestId, decision } },
  })()
  return E.map(() => decision)(decided)
}
