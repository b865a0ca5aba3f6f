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
import { type EventNarrator, makeEventNarrator } from '../eventSummary.js'
import type { InterruptSignal } from '../interrupts.js'
import type { ChatBackend, Notice } from './chatBackend.js'
import { HELP_LINES, applyTyped, parseChatInput } from './chatInput.js'
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

/**
 * How the screen was left: the exit code and, after a cancel, the one line to print.
 * @category models
 */
export interface ChatExit {
  readonly code: number
  readonly line?: string
}

/**
 * What the host wires into the screen: process signals (SIGINT, SIGTERM), how the screen is left,
 * and how the process ends at once on a second interrupt.
 * @category models
 */
export interface ChatControls {
  /** Subscribes to process signals; returns the unsubscribe. */
  readonly onSignal?: (listener: (signal: InterruptSignal) => void) => () => void
  readonly onLeave?: (exit: ChatExit) => void
  readonly exitNow?: (exit: ChatExit) => void
}

const SIGNAL_CODE = { SIGINT: 130, SIGTERM: 143 } as const

const entryOfEvent = (event: RuntimeEvent, narrator: EventNarrator): TranscriptEntry | null => {
  const summary = narrator.summarize(event)
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
    case 'function_response': {
      const failed = summary.denied === true || summary.text.endsWith(' error')
      return {
        kind: 'tool',
        text: `${failed ? '✗' : '✓'} ${summary.text}${summary.denied === true ? ' — the tool did not run' : ''}`,
        failed,
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

/**
 * The whole chat screen.
 * @category constructors
 */
export const ChatApp = ({
  backend,
  controls = {},
}: {
  readonly backend: ChatBackend
  readonly controls?: ChatControls
}) => {
  const { exit } = useApp()
  const narrator = useRef(makeEventNarrator())
  // Lines submitted while the runtime works wait here, in order, and run one by one afterwards.
  const queue = useRef<Array<string>>([])
  const [queued, setQueued] = useState<ReadonlyArray<string>>([])
  // Set by the first interrupt: the exit to take once the cancelled run has ended.
  const interrupted = useRef<ChatExit | null>(null)
  const drainRef = useRef<() => void>(() => undefined)
  const leave = useCallback(
    (how: ChatExit) => {
      controls.onLeave?.(how)
      exit()
    },
    [controls, exit],
  )
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
      const after = interrupted.current
      if (after !== null) {
        leave(after)
        return
      }
      drainRef.current()
    },
    [pushNotices, setBusy, leave],
  )

  useEffect(() => {
    backend.attach({
      onTextDelta: (_runId, text) => setStreaming((s) => s + text),
      onEvent: (event) => {
        const entry = entryOfEvent(event, narrator.current)
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

  const drain = () => {
    while (busyRef.current === null && interrupted.current === null && queue.current.length > 0) {
      const next = queue.current.shift() ?? ''
      setQueued([...queue.current])
      submit(next)
    }
  }
  drainRef.current = drain
  const enqueue = (line: string) => {
    queue.current.push(line)
    setQueued([...queue.current])
    drain()
  }

  /** Ctrl+C, SIGINT or SIGTERM: cancel the running turn and leave once its end is committed. */
  const interrupt = (signal: InterruptSignal | 'key') => {
    const code = signal === 'key' ? SIGNAL_CODE.SIGINT : SIGNAL_CODE[signal]
    if (interrupted.current !== null) {
      controls.exitNow?.({ code: interrupted.current.code, line: 'maka: interrupted again; exiting now.' })
      return
    }
    const runId = backend.cancel()
    if (runId === null) {
      // Nothing to cancel: the key leaves like /quit, a signal with its own code.
      leave({ code: signal === 'key' ? 0 : code })
      return
    }
    interrupted.current = { code, line: `maka: interrupted; run ${runId} cancelled` }
    queue.current = []
    setQueued([])
    if (permission !== null) {
      setPermission(null)
      permission.answer('deny')
    }
  }
  const interruptRef = useRef(interrupt)
  interruptRef.current = interrupt
  useEffect(() => controls.onSignal?.((signal) => interruptRef.current(signal)), [controls])

  useInput((typed, key) => {
    if (key.ctrl && typed === 'c') {
      interrupt('key')
      return
    }
    if (permission !== null) {
      const answer = typed.toLowerCase() === 'y' ? 'allow' : typed.toLowerCase() === 'n' ? 'deny' : null
      if (answer === null) return
      setPermission(null)
      permission.answer(answer)
      return
    }
    if (key.return) {
      const line = inputRef.current
      setInput('')
      enqueue(line)
      return
    }
    if (key.backspace || key.delete) {
      setInput(applyTyped(inputRef.current, '\u007f').line)
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
    // A chunk may hold several keys (pasted text, keys typed while the screen was busy): each
    // backspace edits the line, each finished line is queued in turn.
    const { line, submitted } = applyTyped(inputRef.current, typed)
    setInput(line)
    for (const done of submitted) enqueue(done)
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
            {`Allow ${permission.question.toolName}${
              permission.question.preview === undefined ? '' : `: ${permission.question.preview}`
            } (tool call ${permission.question.toolCallId})? [y/n]`}
          </Text>
        )}
        {queued.map((line, i) => (
          <Text key={i} dimColor>{`queued › ${line}`}</Text>
        ))}
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
