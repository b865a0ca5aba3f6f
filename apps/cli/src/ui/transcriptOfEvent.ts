/**
 * A committed RuntimeEvent as a line of the chat transcript — the same rendering for the live turn
 * and for a session's earlier turns shown when the chat reopens it. Tool lines carry what ran (the
 * command line, the path) and a few lines of output: they are drawn on the terminal only.
 */
import { type RuntimeEvent, isContinuationStartEvent, isTerminalEvent } from '@maka/events'
import type { EventNarrator } from '../eventSummary.js'
import { toolCallLine, toolOutputPreview } from '../toolActivity.js'
import type { TranscriptEntry } from './transcriptEntry.js'

/**
 * Which events become lines: `history` also shows the user's prompts (the live screen shows a prompt
 * when it is typed) and leaves out the notices of runs that completed.
 * @category models
 */
export interface TranscriptOptions {
  readonly history?: boolean
}

/**
 * The transcript line of one event, or null when it has none.
 * @category constructors
 */
export const transcriptOfEvent = (
  event: RuntimeEvent,
  narrator: EventNarrator,
  options: TranscriptOptions = {},
): TranscriptEntry | null => {
  const history = options.history === true
  const summary = narrator.summarize(event)
  if (isContinuationStartEvent(event)) {
    return history
      ? { kind: 'notice', notice: { tone: 'info', text: `(continued from a safe boundary, run ${event.runId})` } }
      : { kind: 'notice', notice: { tone: 'info', text: `Continuation run ${event.runId} started ${summary.text}.` } }
  }
  if (isTerminalEvent(event)) {
    const ok = event.status === 'completed'
    if (history && ok) return null
    return { kind: 'notice', notice: { tone: ok ? 'ok' : 'error', text: `Run ${event.runId} ended: ${summary.text}.` } }
  }
  const content = event.content
  switch (summary.kind) {
    case 'text':
      if (content?.kind !== 'text') return null
      if (event.role === 'model') return { kind: 'model', text: content.text }
      return history && event.role === 'user' ? { kind: 'user', text: content.text } : null
    case 'function_call': {
      const detail = content?.kind === 'function_call' ? toolCallLine(content.name, content.args) : null
      return { kind: 'tool', text: `⚙ ${summary.text}`, failed: false, ...(detail === null ? {} : { detail }) }
    }
    case 'function_response': {
      const failed = summary.denied === true || summary.text.endsWith(' error')
      const preview =
        content?.kind === 'function_response' && summary.denied !== true ? toolOutputPreview(content.result) : []
      return {
        kind: 'tool',
        text: `${failed ? '✗' : '✓'} ${summary.text}${summary.denied === true ? ' — the tool did not run' : ''}`,
        failed,
        ...(preview.length === 0 ? {} : { preview }),
      }
    }
    case 'permission_decision':
      return {
        kind: 'tool',
        text: summary.text === 'deny' ? 'permission denied' : 'permission allowed',
        failed: summary.text === 'deny',
      }
    default:
      return null
  }
}
