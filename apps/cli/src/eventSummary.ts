/**
 * One committed RuntimeEvent as one short line: role, kind and a short text. Tool calls and results
 * are shown by tool name and outcome only — never their arguments or results — so streamed output
 * and timelines cannot leak file contents or secrets a tool touched.
 */
import { type RuntimeEvent, isContinuationStartEvent, isTerminalEvent } from '@maka/events'

/**
 * What a line says about one event.
 * @category models
 */
export interface EventSummary {
  readonly role: RuntimeEvent['role']
  readonly kind: string
  readonly text: string
  readonly toolName?: string
  readonly toolCallId?: string
}

const MAX_TEXT = 160

/**
 * Collapses whitespace and cuts long text, so one event stays one line.
 * @category combinators
 */
export const oneLine = (text: string, max: number = MAX_TEXT): string => {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}

const failureClassOf = (event: RuntimeEvent): string | undefined => {
  const fromDelta = event.actions?.stateDelta?.['failureClass']
  if (typeof fromDelta === 'string') return fromDelta
  return event.content?.kind === 'error' ? event.content.code : undefined
}

/**
 * Summarises one event.
 * @category constructors
 */
export const summarizeEvent = (event: RuntimeEvent): EventSummary => {
  const { role } = event
  if (isContinuationStartEvent(event)) {
    const refs = event.refs
    return {
      role,
      kind: 'continuation_start',
      text: `from ${refs?.sourceRunId ?? '?'} @ ${refs?.sourceRuntimeEventHighWater ?? '?'}`,
    }
  }
  if (isTerminalEvent(event)) {
    const failureClass = failureClassOf(event)
    const recovered = event.actions?.stateDelta?.['recovered'] === true ? ', recovered' : ''
    return {
      role,
      kind: 'terminal',
      text: `${event.status ?? '?'}${failureClass === undefined ? '' : ` (${failureClass}${recovered})`}`,
    }
  }
  const permissionRequest = event.actions?.permissionRequest
  if (permissionRequest !== undefined) {
    return {
      role,
      kind: 'permission_request',
      text: permissionRequest.toolName,
      toolName: permissionRequest.toolName,
      ...(permissionRequest.toolCallId === undefined ? {} : { toolCallId: permissionRequest.toolCallId }),
    }
  }
  const permissionDecision = event.actions?.permissionDecision
  if (permissionDecision !== undefined) return { role, kind: 'permission_decision', text: permissionDecision.decision }
  const content = event.content
  if (content === undefined) return { role, kind: 'note', text: '' }
  switch (content.kind) {
    case 'text':
      return { role, kind: 'text', text: oneLine(content.text) }
    case 'thinking':
      return { role, kind: 'thinking', text: '' }
    case 'function_call':
      return { role, kind: 'function_call', text: content.name, toolName: content.name, toolCallId: content.id }
    case 'function_response':
      return {
        role,
        kind: 'function_response',
        text: `${content.name} ${content.isError === true ? 'error' : 'ok'}`,
        toolName: content.name,
        toolCallId: content.id,
      }
    case 'error':
      return { role, kind: 'error', text: content.code ?? '' }
  }
}

/**
 * `role kind text`, padded into columns.
 * @category combinators
 */
export const formatSummary = (summary: EventSummary): string =>
  `${summary.role.padEnd(6)} ${summary.kind.padEnd(19)} ${summary.text}`.trimEnd()
