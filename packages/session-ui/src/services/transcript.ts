/**
 * A committed ledger event as a transcript row. Tool arguments and results stay in the host: the
 * row names the tool and, in a session view, the operation's status.
 */
import { type RuntimeEvent, isContinuationStartEvent, isTerminalEvent } from '@maka/events'
import type { TranscriptItem } from '../hostContract/api.js'

const base = (event: RuntimeEvent): Pick<TranscriptItem, 'eventId' | 'runId' | 'turnId' | 'role'> => ({
  eventId: event.id,
  runId: event.runId,
  turnId: event.turnId,
  role: event.role,
})

/**
 * The transcript row of one committed event.
 * @category constructors
 */
export const transcriptItemOf = (event: RuntimeEvent): TranscriptItem => {
  const row = base(event)
  if (isContinuationStartEvent(event)) {
    return {
      ...row,
      kind: 'continuation_start',
      text: `Resumed from the latest safe boundary of run ${event.refs?.sourceRunId ?? '?'}.`,
    }
  }
  const content = event.content
  const request = event.actions?.permissionRequest
  const decision = event.actions?.permissionDecision
  if (request !== undefined) {
    return {
      ...row,
      kind: 'permission_request',
      text: `Permission asked to run ${request.toolName}.`,
      toolName: request.toolName,
      ...(request.toolCallId === undefined ? {} : { toolCallId: request.toolCallId }),
    }
  }
  if (decision !== undefined) {
    return {
      ...row,
      kind: 'permission_decision',
      text: `Permission ${decision.decision === 'allow' ? 'given' : 'refused'}.`,
    }
  }
  switch (content?.kind) {
    case 'text':
      return { ...row, kind: 'text', text: content.text }
    case 'thinking':
      return { ...row, kind: 'thinking', text: content.text }
    case 'function_call':
      return {
        ...row,
        kind: 'tool_call',
        text: `Calls ${content.name}.`,
        toolName: content.name,
        toolCallId: content.id,
      }
    case 'function_response':
      return {
        ...row,
        kind: 'tool_result',
        text: `${content.name} answered.`,
        toolName: content.name,
        toolCallId: content.id,
      }
    case 'error':
      return { ...row, kind: 'error', text: content.message }
    case undefined:
      break
  }
  if (isTerminalEvent(event))
    return { ...row, kind: 'terminal', text: `The run ended: ${event.status}.`, status: event.status }
  return { ...row, kind: 'other', text: '' }
}
