/**
 * Turns a run's committed ledger rows into provider history. This is the only place that decides
 * what a model sees of the past, so a continuation (whose history is the replayed runtimeContext,
 * with no new user message) and a normal turn feed the provider the same way.
 */
import { isModelVisible, type RuntimeEvent } from '@maka/events'
import type { ProviderMessage } from './ModelProvider.js'

type AssistantMessage = Extract<ProviderMessage, { readonly role: 'assistant' }>
type ToolCall = AssistantMessage['toolCalls'][number]

// A mutable accumulator for the assistant message being built: one model step may be stored as a
// text row plus several function_call rows, and providers expect them as one assistant message.
interface PendingAssistant {
  text: string
  readonly toolCalls: Array<ToolCall>
}

/**
 * Builds provider history from ledger rows: only model-visible rows count, `thinking` is dropped,
 * and consecutive model text/function_call rows merge into one assistant message.
 * @category constructors
 */
export const materializeHistory = (events: ReadonlyArray<RuntimeEvent>): ReadonlyArray<ProviderMessage> => {
  const messages: Array<ProviderMessage> = []
  let pending: PendingAssistant | undefined
  const flush = (): void => {
    if (pending !== undefined) messages.push({ role: 'assistant', text: pending.text, toolCalls: pending.toolCalls })
    pending = undefined
  }
  // Rows a model cannot see (partials, error facts, permission rows without content, thinking) are
  // skipped before merging, so they never split one model step into two assistant messages.
  for (const event of events) {
    if (!isModelVisible(event)) continue
    const content = event.content
    switch (content.kind) {
      case 'thinking':
        break
      case 'text':
        if (event.role === 'model') {
          pending ??= { text: '', toolCalls: [] }
          pending.text += content.text
        } else if (event.role === 'user') {
          flush()
          messages.push({ role: 'user', text: content.text })
        }
        // System and tool text rows are host notes, not conversation: the system prompt is rebuilt
        // for every call, so replaying them would duplicate or contradict it.
        break
      case 'function_call':
        pending ??= { text: '', toolCalls: [] }
        pending.toolCalls.push({ id: content.id, name: content.name, args: content.args })
        break
      case 'function_response':
        flush()
        messages.push({
          role: 'tool',
          toolCallId: content.id,
          name: content.name,
          result: content.result,
          isError: content.isError ?? false,
        })
        break
    }
  }
  flush()
  return messages
}
