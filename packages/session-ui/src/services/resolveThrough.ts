/**
 * The one place the window's hosts reach the runtime's `resolve` (a person's verdict on an open
 * tool call, recorded as an adjudication run), and the mapping of its result to the answer of
 * `sessions:resolveCall`. The request carries what the renderer sent (session, operation, verdict,
 * output) plus the actor the host names for itself.
 */
import type { ResolveRequest, ResolveResult, Runtime } from '@maka/executor'
import type { ResolveCallResult } from '../hostContract/api.js'

/**
 * Asks the runtime to record the verdict.
 * @category constructors
 */
export const resolveThrough = (runtime: Runtime, request: ResolveRequest): Promise<ResolveResult> =>
  runtime.resolve(request)

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
