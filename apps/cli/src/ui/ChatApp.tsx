/**
 * The chat screen: the transcript (finished entries printed once with ink's Static), the model's
 * streaming text, tool activity, permission prompts (y/n), slash commands and a spinner while the
 * runtime works. Startup recovery runs before the prompt accepts anything. All domain decisions
 * (plans, parks, permissions recorded in the ledger) happen behind the backend.
 */
import { Box, Static, Text, useApp, useInput } from 'ink'
import { useCallback, useEffect, useRef, useState } from 'react'
import { type RuntimeEvent, isContinuationStartEvent, isTerminalEvent } from '@maka/events'
import type { PermissionQuestion } from '@maka/executor'
import { summarizeEvent } from '../eventSummary.js'
import type { ChatBackend, Notice } from './chatBackend.js'
import { HELP_LINES, parseChatInput } from './chatInput.js'
import { Spinner } from './Spinner.js'
import { type TranscriptEntry, TranscriptItem } from './TranscriptItem.js'

interface Keyed {
  readonly id: number
  readonly entry: TranscriptEntry
}

interface PendingPermission {
  readonly question: PermissionQuestion
  readonly answer: (decision: 'allow' | 'deny') => void
}

const entryOfEvent = (event: RuntimeEvent): TranscriptEntry | null => {
  const summary = summarizeEvent(event)
  if (isContinuationStartEvent(event)) {
    return {
      kind: 'notice',
      notice: { tone: 'info', text: `Continuation run ${event.runId} started ${summary.text}.` },
    }
  }
  if (isTerminalEvent(event)) {
    const ok = event.status === 'completed'
    return { kind: 'notice', notice: { tone: ok ? 'ok' : 'error', text: `Run ${event.runId} ended: ${summary.text}.` } }
  }
  switch (summary.kind) {
    case 'text':
      return event.role === 'model' && event.content?.kind === 'text'
        ? { kind: 'model', text: event.content.text }
        : null
    case 'function_call':
      return { kind: 'tool', text: `⚙ ${summary.text}`, failed: false }
    case 'function_response':
      return {
        kind: 'tool',
        text: `${summary.text.endsWith(' error') ? '✗' : '✓'} ${summary.text}`,
        failed: summary.text.endsWith(' error'),
      }
    case 'permission_decision':
      return { kind: 'tool', text: `permission ${summary.text}`, failed: summary.text === 'deny' }
    default:
      return null
  }
}

/**
 * The whole chat screen.
 * @category constructors
 */
export const ChatApp = ({ backend }: { readonly backend: ChatBackend }) => {
  const { exit } = useApp()
  const nextId = useRef(0)
  const [entries, setEntries] = useState<ReadonlyArray<Keyed>>(() =>
    backend.banner.map((text) => ({ id: nextId.current++, entry: { kind: 'banner', text } })),
  )
  const [streaming, setStreaming] = useState('')
  const [busy, setBusyState] = useState<string | null>('Recovering interrupted runs…')
  const [input, setInputState] = useState('')
  // Refs mirror the state so several keys arriving in one chunk see each other's effects.
  const busyRef = useRef<string | null>('Recovering interrupted runs…')
  const inputRef = useRef('')
  const setBusy = useCallback((label: string | null) => {
    busyRef.current = label
    setBusyState(label)
  }, [])
  const setInput = (line: string) => {
    inputRef.current = line
    setInputState(line)
  }
  const [permission, setPermission] = useState<PendingPermission | null>(null)

  const push = useCallback((...added: ReadonlyArray<TranscriptEntry>) => {
    if (added.length === 0) return
    setEntries((prev) => [...prev, ...added.map((entry) => ({ id: nextId.current++, entry }))])
  }, [])
  const pushNotices = useCallback(
    (notices: ReadonlyArray<Notice>) => push(...notices.map((notice): TranscriptEntry => ({ kind: 'notice', notice }))),
    [push],
  )

  const work = useCallback(
    async (label: string, task: () => Promise<ReadonlyArray<Notice>>) => {
      setBusy(label)
      try {
        pushNotices(await task())
      } catch (error) {
        pushNotices([
          { tone: 'error', text: `Unexpected error: ${error instanceof Error ? error.message : String(error)}` },
        ])
      } finally {
        setStreaming('')
        setBusy(null)
      }
    },
    [pushNotices, setBusy],
  )

  useEffect(() => {
    backend.attach({
      onTextDelta: (_runId, text) => setStreaming((s) => s + text),
      onEvent: (event) => {
        const entry = entryOfEvent(event)
        if (entry?.kind === 'model') setStreaming('')
        if (entry !== null) push(entry)
      },
      askPermission: (question) =>
        new Promise((resolve) => {
          setPermission({ question, answer: resolve })
        }),
    })
    // Startup recovery comes before anything else the user can do.
    void work('Recovering interrupted runs…', () => backend.recover())
  }, [backend, push, work])

  const submit = (line: string) => {
    const parsed = parseChatInput(line)
    switch (parsed._tag) {
      case 'Empty':
        return
      case 'Usage':
        pushNotices([{ tone: 'warn', text: parsed.usage }])
        return
      case 'Unknown':
        pushNotices([{ tone: 'warn', text: `Unknown command ${parsed.name}; type /help.` }])
        return
      case 'Prompt':
        push({ kind: 'user', text: parsed.text })
        void work('The model is working…', () => backend.submit(parsed.text))
        return
      case 'Command':
        switch (parsed.name) {
          case '/help':
            pushNotices(HELP_LINES.map((text) => ({ tone: 'info', text })))
            return
          case '/quit':
            exit()
            return
          case '/sessions':
            void work('Listing sessions…', () => backend.sessions())
            return
          case '/plan':
            void work('Planning…', () => backend.plan())
            return
          case '/resume':
            pushNotices([{ tone: 'info', text: 'Resuming from the latest safe boundary (no new prompt is sent)…' }])
            void work('Resuming…', () => backend.resume())
            return
        }
    }
  }

  useInput((typed, key) => {
    if (permission !== null) {
      const answer = typed.toLowerCase() === 'y' ? 'allow' : typed.toLowerCase() === 'n' ? 'deny' : null
      if (answer === null) return
      setPermission(null)
      permission.answer(answer)
      return
    }
    if (key.return) {
      if (busyRef.current !== null) return
      const line = inputRef.current
      setInput('')
      submit(line)
      return
    }
    if (key.backspace || key.delete) {
      setInput(inputRef.current.slice(0, -1))
      return
    }
    if (
      key.ctrl ||
      key.meta ||
      key.tab ||
      key.escape ||
      key.upArrow ||
      key.downArrow ||
      key.leftArrow ||
      key.rightArrow
    )
      return
    // Pasted or buffered text may hold several lines: each finished line is submitted in turn.
    const [first = '', ...more] = typed.split(/\r\n|\r|\n/)
    let line = inputRef.current + first
    for (const next of more) {
      if (busyRef.current !== null) {
        line = `${line} ${next}`
        continue
      }
      submit(line)
      line = next
    }
    setInput(line)
  })

  return (
    <>
      <Static items={[...entries]}>{(item) => <TranscriptItem key={item.id} entry={item.entry} />}</Static>
      <Box flexDirection="column">
        {streaming === '' ? null : (
          <Box>
            <Text color="magenta" bold>
              {'maka › '}
            </Text>
            <Text>{streaming}</Text>
          </Box>
        )}
        {permission === null ? null : (
          <Text color="yellow" bold>
            {`Allow ${permission.question.toolName} (tool call ${permission.question.toolCallId})? [y/n]`}
          </Text>
        )}
        {busy === null ? null : <Spinner label={busy} />}
        <Text>
          <Text color="blue">{'› '}</Text>
          {input}
          <Text inverse> </Text>
        </Text>
      </Box>
    </>
  )
}
