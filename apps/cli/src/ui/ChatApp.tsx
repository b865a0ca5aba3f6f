/**
 * The chat screen: the transcript (finished entries printed once with ink's Static), the model's
 * streaming text, tool activity (what ran, a preview of its output), permission prompts (y/n), slash
 * commands, a spinner while the runtime works and a status line (model, folder, permission mode).
 * Startup recovery runs before the prompt accepts anything; a reopened session then shows its
 * earlier turns and, when its last turn was interrupted, offers to resume it with one key. Keys
 * (decision 216): Esc or Ctrl+C during a turn cancel the turn and keep the chat; Ctrl+C on an idle
 * prompt clears a non-empty line, then leaves; Ctrl+D on an empty line leaves. The line itself is
 * edited by `lineEditor` (node:readline). All domain decisions (plans, parks, permissions recorded
 * in the ledger) happen behind the backend. `/resume` with nothing to continue here (or `/resume
 * list`) shows the interrupted sessions as a numbered list; a number and Enter picks one, which the
 * chat switches to and resumes through the same `resume()`, and Esc leaves the list (decision 240).
 * While `/resume` waits for a command still running, the spinner names the call and how long it has
 * run, and Esc or Ctrl+C stops the wait (nothing is written). `/resolve` lists the open tool calls with
 * what each verdict would mean, and `/resolve <call> <verdict> [text]` records one (decision 262).
 */
import { Box, Static, Text, useApp, useInput } from 'ink'
import { useCallback, useEffect, useRef, useState } from 'react'
import type { PermissionQuestion } from '@maka/executor'
import { makeEventNarrator } from '../eventSummary.js'
import { type InterruptSignal, SECOND_SIGNAL_GRACE_MS } from '../interrupts.js'
import type { PickEntry } from '../commands/resumePick.js'
import { pickLine } from '../commands/resumePick.js'
import type { ChatBackend, Notice } from './chatBackend.js'
import { HELP_LINES, parseChatInput } from './chatInput.js'
import { type EditorState, makeLineEditor } from './lineEditor.js'
import { Spinner } from './Spinner.js'
import { Said, type TranscriptEntry, TranscriptItem } from './TranscriptItem.js'
import { transcriptOfEvent } from './transcriptOfEvent.js'

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

// One object for every render without controls, so the callbacks built on it stay the same.
const NO_CONTROLS: ChatControls = {}

/**
 * The whole chat screen.
 * @category constructors
 */
export const ChatApp = ({
  backend,
  controls = NO_CONTROLS,
}: {
  readonly backend: ChatBackend
  readonly controls?: ChatControls
}) => {
  const { exit } = useApp()
  const narrator = useRef(makeEventNarrator())
  const editor = useRef(makeLineEditor())
  useEffect(() => {
    const current = editor.current
    return () => current.dispose()
  }, [])
  // Lines submitted while the runtime works wait here, in order, and run one by one afterwards.
  const queue = useRef<Array<string>>([])
  const [queued, setQueued] = useState<ReadonlyArray<string>>([])
  // Set by the first SIGINT/SIGTERM: the exit to take once the cancelled run has ended.
  const interrupted = useRef<ChatExit | null>(null)
  // The run a key (Esc, Ctrl+C) is cancelling: the chat stays open once it has ended.
  const cancelling = useRef<string | null>(null)
  // Text of a bracketed paste still arriving (null when none is).
  const pasting = useRef<string | null>(null)
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
  const [input, setInputState] = useState<EditorState>({ line: '', cursor: 0 })
  // Refs mirror the state so several keys arriving in one chunk see each other's effects.
  const busyRef = useRef<string | null>('Recovering interrupted runs…')
  const setBusy = useCallback((label: string | null) => {
    busyRef.current = label
    setBusyState(label)
  }, [])
  const showLine = () => setInputState(editor.current.state())
  const [permission, setPermission] = useState<PendingPermission | null>(null)
  // The one-key question "resume the interrupted turn?" of a reopened session.
  const [offer, setOfferState] = useState(false)
  const offerRef = useRef(false)
  const setOffer = useCallback((on: boolean) => {
    offerRef.current = on
    setOfferState(on)
  }, [])

  // The interrupted sessions `/resume` listed, while the user picks one by number.
  const [picking, setPickingState] = useState<ReadonlyArray<PickEntry> | null>(null)
  const pickingRef = useRef<ReadonlyArray<PickEntry> | null>(null)
  const setPicking = useCallback((list: ReadonlyArray<PickEntry> | null) => {
    pickingRef.current = list
    setPickingState(list)
  }, [])

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
      if (cancelling.current !== null) {
        cancelling.current = null
        pushNotices([{ tone: 'warn', text: 'Turn cancelled; the chat stays open (/resume continues it).' }])
      }
      drainRef.current()
    },
    [pushNotices, setBusy, leave],
  )

  const started = useRef(false)
  useEffect(() => {
    // Recovery and the reopened transcript happen once per screen, whatever re-renders.
    if (started.current) return
    started.current = true
    backend.attach({
      onTextDelta: (_runId, text) => setStreaming((s) => s + text),
      onEvent: (event) => {
        const entry = transcriptOfEvent(event, narrator.current)
        if (entry?.kind === 'model') setStreaming('')
        if (entry !== null) push(entry)
      },
      askPermission: (question) =>
        new Promise((resolve) => {
          setPermission({ question, answer: resolve })
        }),
      // The spinner names each command /resume waits for and how long it has run — never the command.
      onWaiting: (operations) =>
        setBusy(
          `${operations
            .map(
              (op) =>
                `Waiting for ${op.toolName} (call ${op.toolCallId}), still running${
                  op.elapsedMs === null ? '' : ` after ${Math.round(op.elapsedMs / 1000)} s`
                }`,
            )
            .join('; ')}; Esc stops waiting`,
        ),
    })
    // Startup recovery comes before anything else the user can do; then a reopened session shows
    // its earlier turns, and offers to resume an interrupted one.
    void work('Recovering interrupted runs…', async () => {
      const recovered = await backend.recover()
      const reopened = backend.reopen === undefined ? null : await backend.reopen()
      if (reopened === null) return recovered
      pushNotices(recovered)
      push(...reopened.entries)
      if (!reopened.interrupted) return []
      if (reopened.offerRefused !== undefined) return [{ tone: 'warn', text: reopened.offerRefused }]
      setOffer(true)
      return []
    })
  }, [backend, push, pushNotices, work, setOffer])

  const RESUMING: Notice = { tone: 'info', text: 'Resuming from the latest safe boundary (no new prompt is sent)…' }
  const resume = () => {
    pushNotices([RESUMING])
    void work('Resuming…', () => backend.resume())
  }

  /** `/resume` (and `/resume list`): continue this session, or list the interrupted ones to pick from. */
  const resumeCommand = (all: boolean) => {
    if (backend.resumeChoices === undefined) {
      resume()
      return
    }
    void work('Looking for interrupted sessions…', async () => {
      const entries = (await backend.resumeChoices?.(all)) ?? null
      if (entries === null) {
        pushNotices([RESUMING])
        setBusy('Resuming…')
        return backend.resume()
      }
      if (entries.length === 0) return [{ tone: 'info', text: 'No interrupted session in this data directory.' }]
      setPicking(entries)
      return []
    })
  }

  /** A line typed while the list is shown: the number of the session to resume. */
  const pick = (line: string) => {
    const list = pickingRef.current ?? []
    const text = line.trim()
    if (text === '') return
    const entry = /^\d+$/.test(text) ? list[Number(text) - 1] : undefined
    if (entry === undefined) {
      pushNotices([{ tone: 'warn', text: `Type a number from 1 to ${list.length} and Enter, or Esc to pick none.` }])
      return
    }
    setPicking(null)
    pushNotices([
      { tone: 'info', text: `Picked ${entry.title} (${entry.sessionId}).` },
      ...(backend.switchTo?.(entry.sessionId) ?? []),
    ])
    resume()
  }

  const submit = (line: string) => {
    if (pickingRef.current !== null) {
      pick(line)
      return
    }
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
      case 'ResumeList':
        resumeCommand(true)
        return
      case 'ResolveList':
        if (backend.openOperations === undefined) {
          pushNotices([{ tone: 'warn', text: '/resolve is not available here.' }])
          return
        }
        void work('Looking for open tool calls…', () => backend.openOperations?.() ?? Promise.resolve([]))
        return
      case 'Resolve':
        if (backend.resolve === undefined) {
          pushNotices([{ tone: 'warn', text: '/resolve is not available here.' }])
          return
        }
        void work(
          'Recording what happened…',
          () => backend.resolve?.(parsed.target, parsed.verdict, parsed.output) ?? Promise.resolve([]),
        )
        return
      case 'Prompt':
        push({ kind: 'user', text: parsed.text })
        void work('The model is working… (Esc to cancel)', () => backend.submit(parsed.text))
        return
      case 'Command':
        switch (parsed.name) {
          case '/help':
            pushNotices(HELP_LINES.map((text) => ({ tone: 'info', text })))
            return
          case '/quit':
          case '/exit':
            leave({ code: 0 })
            return
          case '/sessions':
            void work('Listing sessions…', () => backend.sessions())
            return
          case '/plan':
            void work('Planning…', () => backend.plan())
            return
          case '/resume':
            resumeCommand(false)
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

  const denyPending = () => {
    if (permission !== null) {
      setPermission(null)
      permission.answer('deny')
    }
  }

  /** SIGINT or SIGTERM from outside: cancel the running turn and leave once its end is committed. */
  const interrupt = (signal: InterruptSignal) => {
    const code = SIGNAL_CODE[signal]
    if (interrupted.current !== null) {
      controls.exitNow?.({ code: interrupted.current.code, line: 'maka: interrupted again; exiting now.' })
      return
    }
    interrupted.current = { code, line: 'maka: interrupted.' }
    // A moment first, so a second signal sent together with this one still exits at once, however
    // fast the cancel's writes are (decision 176).
    setTimeout(() => {
      const runId = cancelling.current ?? backend.cancel()
      if (runId === null) {
        leave({ code })
        return
      }
      interrupted.current = { code, line: `maka: interrupted; run ${runId} cancelled` }
      queue.current = []
      setQueued([])
      denyPending()
    }, SECOND_SIGNAL_GRACE_MS)
  }
  const interruptRef = useRef(interrupt)
  interruptRef.current = interrupt
  useEffect(() => controls.onSignal?.((signal) => interruptRef.current(signal)), [controls])

  /** Esc or Ctrl+C while a turn runs: cancel it, keep the chat. False when no turn runs. */
  const cancelTurn = (): boolean => {
    if (cancelling.current !== null) return true
    // A /resume waiting for a command: stop waiting (nothing is written), keep the chat.
    if (backend.stopWaiting?.() === true) {
      queue.current = []
      setQueued([])
      setBusy('Stopping the wait…')
      return true
    }
    const runId = backend.cancel()
    if (runId === null) return false
    cancelling.current = runId
    queue.current = []
    setQueued([])
    denyPending()
    setBusy(`Cancelling run ${runId}…`)
    return true
  }

  /** Ctrl+C: cancel the turn; on an idle prompt clear the line, or leave when it is empty. */
  const ctrlC = () => {
    if (cancelling.current !== null) {
      // A second Ctrl+C while the cancel is being committed: leave now, like a second signal.
      controls.exitNow?.({ code: SIGNAL_CODE.SIGINT, line: 'maka: interrupted again; exiting now.' })
      return
    }
    if (cancelTurn()) return
    if (editor.current.state().line !== '') {
      editor.current.clear()
      showLine()
      return
    }
    leave({ code: 0 })
  }

  useInput((typed, key) => {
    if (pasting.current !== null) {
      // A bracketed paste: everything up to its end marker is text, newlines included.
      if (typed === '[201~') {
        editor.current.paste(pasting.current)
        pasting.current = null
        showLine()
      } else {
        pasting.current += key.return ? '\n' : key.tab ? '\t' : typed
      }
      return
    }
    if (typed === '[200~') {
      pasting.current = ''
      return
    }
    if (key.ctrl && typed === 'c') {
      ctrlC()
      return
    }
    if (permission !== null) {
      if (key.escape) {
        cancelTurn()
        return
      }
      const answer = typed.toLowerCase() === 'y' ? 'allow' : typed.toLowerCase() === 'n' ? 'deny' : null
      if (answer === null) return
      setPermission(null)
      permission.answer(answer)
      return
    }
    if (offerRef.current) {
      // One key answers: y or Enter resumes, n or Esc does not. Anything else is the start of a
      // line: the offer steps aside (not resumed) and the key is typed as usual.
      const yes = key.return || typed === 'y' || typed === 'Y'
      const no = key.escape || typed === 'n' || typed === 'N'
      setOffer(false)
      pushNotices([
        { tone: 'info', text: yes ? 'Resuming the interrupted turn.' : 'Not resumed; /resume continues it later.' },
      ])
      if (yes) {
        resume()
        return
      }
      if (no) return
    }
    if (key.escape && pickingRef.current !== null) {
      setPicking(null)
      pushNotices([{ tone: 'info', text: 'No session picked.' }])
      return
    }
    if (key.escape) {
      cancelTurn()
      return
    }
    if (key.ctrl && typed === 'd') {
      if (editor.current.state().line === '' && busyRef.current === null) leave({ code: 0 })
      return
    }
    if (key.return) {
      const line = editor.current.submit()
      showLine()
      enqueue(line)
      return
    }
    if (key.backspace || key.delete) editor.current.press('backspace')
    else if (key.leftArrow) editor.current.press('left', { ctrl: key.ctrl })
    else if (key.rightArrow) editor.current.press('right', { ctrl: key.ctrl })
    else if (key.upArrow) editor.current.press('up')
    else if (key.downArrow) editor.current.press('down')
    else if (key.home) editor.current.press('home')
    else if (key.end) editor.current.press('end')
    else if (key.ctrl || key.meta) editor.current.chord(typed, key.ctrl ? 'ctrl' : 'meta')
    else if (!key.tab && !key.pageUp && !key.pageDown) {
      // A chunk may hold several keys (keys typed while the screen was busy): each control
      // character edits the line, each finished line is queued in turn.
      for (const done of editor.current.type(typed)) enqueue(done)
    }
    showLine()
  })

  const before = input.line.slice(0, input.cursor)
  const atCursor = input.line.slice(input.cursor, input.cursor + 1)
  const after = input.line.slice(input.cursor + 1)
  const status = backend.status
  return (
    <>
      <Static items={[...entries]}>{(item) => <TranscriptItem key={item.id} entry={item.entry} />}</Static>
      <Box flexDirection="column">
        {streaming === '' ? null : <Said who="maka ›" color="magenta" text={streaming} />}
        {permission === null ? null : (
          <Text color="yellow" bold>
            {`Allow ${permission.question.toolName}${
              permission.question.preview === undefined ? '' : `: ${permission.question.preview}`
            } (tool call ${permission.question.toolCallId})? [y/n]`}
          </Text>
        )}
        {offer ? (
          <Text color="yellow" bold>
            Interrupted turn found: resume it from its latest safe boundary? [y/n]
          </Text>
        ) : null}
        {picking === null ? null : (
          <Box flexDirection="column">
            <Text color="yellow" bold>
              Interrupted sessions, newest first — type a number and Enter to resume it (Esc: none):
            </Text>
            {picking.map((entry, i) => (
              <Text key={entry.sessionId}>{`${i + 1}. ${pickLine(entry)}`}</Text>
            ))}
          </Box>
        )}
        {queued.map((line, i) => (
          <Text key={i} dimColor>{`queued › ${line}`}</Text>
        ))}
        {busy === null ? null : <Spinner label={busy} />}
        <Box>
          <Box flexShrink={0} width={2}>
            <Text color="blue">›</Text>
          </Box>
          <Text>
            {before}
            {atCursor === '' || atCursor === '\n' ? <Text inverse> </Text> : <Text inverse>{atCursor}</Text>}
            {atCursor === '\n' ? '\n' : ''}
            {after}
          </Text>
        </Box>
        {status === undefined ? null : (
          <Text dimColor wrap="truncate-end">
            {`${status.model} · ${status.folder} · ${status.permissionMode} mode · Esc cancels a turn · /help`}
          </Text>
        )}
      </Box>
    </>
  )
}
