/**
 * The one place the window's hosts reach the runtime's `resolve` (a person's verdict on an open
 * tool call, recorded as an adjudication run), and the mapping of its result to the answer of
 * `sessions:resolveCall`. The request carries what the renderer sent (session, operation, verdict,
 * output) plus the actor the host names for itself.
 */
import type { Runtime } from '@maka/executor'
import type { ResolveCallResult } from '../hostContract/api.js'

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
 * The channel's answer for a runtime result: a refusal keeps every code with its sentence.
 * @category constructors
 */
export const resolveCallResultOf = (result: ResolveResult): ResolveCallResult => {
  switch (result._tag) {
    case 'Resolved':
      return { disposition: 'resolved', runId: result.targetRunId }
    case 'Unavailable':
    case 'Invalid':
      return { disposition: 'refused', codes: [result.code], messages: [result.message] }
    case 'Refused':
      return { disposition: 'refused', codes: [...result.codes], messages: [...result.messages] }
    case 'Failed':
      return { disposition: 'failed', message: result.message }
  }
}
