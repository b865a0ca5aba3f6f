/**
 * The one place the chat reaches the runtime's `resolve` (a person's verdict on an open tool call,
 * recorded as an adjudication run), and the lines the chat shows for its result.
 */
import type { Runtime } from '@maka/executor'
import type { Notice } from './transcriptEntry.js'

// MERGE: these mirror `@maka/executor`'s resolve API (issue 25's core) exactly; once it is on main,
// import them from there and call `runtime.resolve(request)` directly.
/** @category models */
export type ResolveVerdict = 'applied' | 'not_applied' | 'failed'
/** @category models */
export type ResolveActor = 'cli' | 'tui' | 'desktop' | 'browser'
/** @category models */
export type ResolveTarget = { readonly callId: string } | { readonly operationId: string }
/** @category models */
export interface ResolveRequest {
  readonly sessionId: string
  readonly target: ResolveTarget
  readonly verdict: ResolveVerdict
  readonly output?: string
  readonly actor: ResolveActor
}
/** @category models */
export type ResolveResult =
  | {
      readonly _tag: 'Resolved'
      readonly sessionId: string
      readonly sourceRunId: string
      readonly targetRunId: string
      readonly operationId: string
      readonly toolCallId: string
      readonly verdict: ResolveVerdict
    }
  | { readonly _tag: 'Unavailable'; readonly code: 'resolve_unavailable'; readonly message: string }
  | { readonly _tag: 'Invalid'; readonly code: string; readonly message: string }
  | {
      readonly _tag: 'Refused'
      readonly codes: ReadonlyArray<string>
      readonly messages: ReadonlyArray<string>
      readonly detail?: unknown
    }
  | { readonly _tag: 'Failed'; readonly stage: string; readonly message: string; readonly error?: unknown }

/**
 * Asks the runtime to record the verdict.
 * @category constructors
 */
export const resolveThrough = (runtime: Runtime, request: ResolveRequest): Promise<ResolveResult> => {
  const resolve = (runtime as Runtime & { resolve?: (r: ResolveRequest) => Promise<ResolveResult> }).resolve
  return typeof resolve === 'function'
    ? resolve.call(runtime, request)
    : Promise.resolve({
        _tag: 'Unavailable',
        code: 'resolve_unavailable',
        message: 'This build of the runtime cannot record a verdict.',
      })
}

/**
 * What the chat says about a resolve: what was recorded and that `/resume` goes on from it, or every
 * refusal with its code.
 * @category constructors
 */
export const resolveNotices = (result: ResolveResult): ReadonlyArray<Notice> => {
  switch (result._tag) {
    case 'Resolved':
      return [
        {
          tone: 'ok',
          text: `Recorded ${result.verdict} for call ${result.toolCallId} (operation ${result.operationId}) in run ${result.targetRunId}; nothing was run.`,
        },
        { tone: 'info', text: '/resume continues the turn from this record.' },
      ]
    case 'Unavailable':
    case 'Invalid':
      return [{ tone: 'warn', text: `Not recorded: ${result.message} (${result.code})` }]
    case 'Refused':
      return [
        { tone: 'warn', text: 'Not recorded:' },
        ...result.codes.map((code, i): Notice => ({ tone: 'warn', text: `- ${result.messages[i] ?? code} (${code})` })),
      ]
    case 'Failed':
      return [{ tone: 'error', text: `The verdict could not be recorded (${result.stage}): ${result.message}` }]
  }
}
