/**
 * The one place the chat reaches the runtime's `resolve` (a person's verdict on an open tool call,
 * recorded as an adjudication run), and the lines the chat shows for its result.
 */
import type { ResolveRequest, ResolveResult, Runtime } from '@maka/executor'
import type { Notice } from './transcriptEntry.js'

/**
 * Asks the runtime to record the verdict.
 * @category constructors
 */
export const resolveThrough = (runtime: Runtime, request: ResolveRequest): Promise<ResolveResult> =>
  runtime.resolve(request)

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
