/**
 * The renderer: sessions with their "interrupted" mark, the selected session's transcript (tool
 * activity, permission prompts, the continuation streaming in), the interrupted-turn banner with
 * **Safe resume**, and toasts. It holds no domain rule: the banner follows the host's mark, Safe
 * resume is live only while the host's plan would continue (or wait for a command still running), a
 * park is shown with the sentences, the next step and the open tool calls the host sent, and
 * **Resolve…** appears on the calls the host offers verdicts for. While a resume waits for a command,
 * the banner shows the host's progress and the resume goes on by itself when the command ends.
 */
import { type FormEvent, useCallback, useEffect, useRef, useState } from 'react'
import type {
  HostInfo,
  HostMessage,
  MakaApi,
  OpenOperation,
  Parked,
  PermissionPrompt,
  ResumeOutcome,
  ResumeProgress,
  SessionListItem,
  SessionView,
  TranscriptItem,
  Verdict,
  WaitingOperation,
} from '../hostContract/api.js'

/**
 * A toast: a title and, for a park, one line per reason.
 * @category models
 */
export interface Toast {
  readonly id: number
  readonly tone: 'info' | 'warn' | 'error'
  readonly title: string
  readonly lines: ReadonlyArray<string>
}

// Info and warnings close by themselves; an error stays until dismissed.
const TOAST_LIFETIME_MS: { readonly [T in Toast['tone']]: number | null } = { info: 8_000, warn: 12_000, error: null }

/**
 * What Safe resume would do for the selected session: the host's plan is being asked for, it would
 * continue (or the host cannot say), or it would park.
 * @category models
 */
export type ResumeState =
  | { readonly status: 'checking' }
  /** `running`: the commands Safe resume would wait for first. */
  | { readonly status: 'ready'; readonly running?: ReadonlyArray<WaitingOperation> }
  | { readonly status: 'parked'; readonly park: Parked }

// The start-up continuations this tab has been told of, by run id: a reload of the page does not
// tell them again, a new host process's continuations (new run ids) are told (decision 232).
const TOLD_KEY = 'maka:toldContinued'
const TOLD_KEPT = 100

const loadTold = (): Set<string> => {
  try {
    const stored: unknown = JSON.parse(window.sessionStorage.getItem(TOLD_KEY) ?? '[]')
    return new Set(Array.isArray(stored) ? stored.filter((id): id is string => typeof id === 'string') : [])
  } catch {
    return new Set()
  }
}

const saveTold = (told: ReadonlySet<string>): void => {
  try {
    window.sessionStorage.setItem(TOLD_KEY, JSON.stringify([...told].slice(-TOLD_KEPT)))
  } catch {
    // No storage (a locked-down profile): the notice is told once per page load instead.
  }
}

const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error))

const seconds = (ms: number | null): string => (ms === null ? '' : ` for ${Math.round(ms / 1000)} s`)

const callName = (op: { readonly toolName: string; readonly toolCallId: string }): string =>
  `${op.toolName} (call ${op.toolCallId})`

const VERDICT_WORDS: { readonly [V in Verdict]: string } = {
  applied: 'It took effect',
  not_applied: 'It did not take effect',
  failed: 'It failed',
}

const WaitingLines = ({ operations }: { readonly operations: ReadonlyArray<WaitingOperation> }) => (
  <div className="park waiting" role="status" aria-label="Waiting for a command">
    {operations.map((op) => (
      <p key={op.operationId}>
        Waiting for <span className="tool">{callName(op)}</span>: still running{seconds(op.elapsedMs)}.
      </p>
    ))}
    <p className="meta">
      It resumes by itself when the command ends. Closing the window stops waiting; nothing is written.
    </p>
  </div>
)

const OpenOperations = ({
  ops,
  onResolve,
}: {
  readonly ops: ReadonlyArray<OpenOperation>
  readonly onResolve: ((op: OpenOperation) => void) | null
}) => (
  <div className="park open-ops">
    <p>Open tool calls:</p>
    <ul>
      {ops.map((op) => (
        <li key={op.operationId} data-operation={op.operationId}>
          <span className="tool">{callName(op)}</span>
          {op.preview === undefined ? null : <span className="preview"> — {op.preview}</span>}
          <span className="code">
            {' '}
            ({op.status}, mode {op.recoveryMode ?? 'unknown'})
          </span>
          {op.reasonText === null ? null : <div className="why">{op.reasonText}</div>}
          {op.verdicts === undefined || onResolve === null ? null : (
            <button type="button" className="secondary" onClick={() => onResolve(op)}>
              Resolve…
            </button>
          )}
        </li>
      ))}
    </ul>
  </div>
)

const ResolveDialog = ({
  op,
  busy,
  onConfirm,
  onCancel,
}: {
  readonly op: OpenOperation
  readonly busy: boolean
  readonly onConfirm: (verdict: Verdict, output: string) => void
  readonly onCancel: () => void
}) => {
  const [verdict, setVerdict] = useState<Verdict | null>(null)
  const [output, setOutput] = useState('')
  const chosen = op.verdicts?.find((v) => v.verdict === verdict)
  return (
    <section className="dialog" role="dialog" aria-modal="true" aria-label={`Resolve ${callName(op)}`}>
      <h3>What happened to {callName(op)}?</h3>
      {op.preview === undefined ? null : <p className="preview">{op.preview}</p>}
      <fieldset>
        <legend>Record that…</legend>
        {(op.verdicts ?? []).map((v) => (
          <label key={v.verdict}>
            <input
              type="radio"
              name="verdict"
              value={v.verdict}
              checked={verdict === v.verdict}
              onChange={() => setVerdict(v.verdict)}
            />{' '}
            {VERDICT_WORDS[v.verdict]} ({v.verdict})
          </label>
        ))}
      </fieldset>
      {chosen === undefined ? (
        <p className="meta">Pick what happened; nothing is recorded until you confirm.</p>
      ) : (
        <p className="meaning" role="note">
          <strong>Recording {chosen.verdict} means:</strong> {chosen.meaning}
        </p>
      )}
      <label className="output">
        Output (optional)
        <textarea value={output} onChange={(event) => setOutput(event.target.value)} rows={3} />
      </label>
      <div className="banner-actions">
        <button
          type="button"
          disabled={chosen === undefined || busy}
          onClick={() => verdict && onConfirm(verdict, output)}
        >
          {busy ? 'Recording…' : 'Record verdict'}
        </button>
        <button type="button" className="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </section>
  )
}

const ParkReasons = ({ park }: { readonly park: Parked }) => (
  <div className="park" id="park-reasons">
    <p>Cannot resume safely:</p>
    <ul>
      {park.messages.map((sentence, i) => (
        <li key={park.rejectionReasons[i] ?? i}>
          {sentence} <span className="code">({park.rejectionReasons[i] ?? '?'})</span>
        </li>
      ))}
    </ul>
    {park.nextStep === undefined ? null : (
      <p className="next">
        <strong>Next:</strong> {park.nextStep}
      </p>
    )}
  </div>
)

const Item = ({ item }: { readonly item: TranscriptItem }) => (
  <li className={`item item-${item.kind} role-${item.role}`} data-kind={item.kind}>
    {item.kind === 'tool_call' || item.kind === 'tool_result' ? (
      <span>
        <span className="tool">{item.toolName}</span> {item.kind === 'tool_call' ? 'called' : 'answered'}
        {item.status === undefined ? null : <span className="status"> · {item.status}</span>}
      </span>
    ) : (
      <span>{item.text}</span>
    )}
  </li>
)

/**
 * The whole window.
 * @category components
 */
export const App = ({ api }: { readonly api: MakaApi }) => {
  const [info, setInfo] = useState<HostInfo | null>(null)
  const [sessions, setSessions] = useState<ReadonlyArray<SessionListItem>>([])
  const [selected, setSelected] = useState<string | null>(null)
  const [view, setView] = useState<SessionView | null>(null)
  const [live, setLive] = useState<ReadonlyArray<TranscriptItem>>([])
  const [streaming, setStreaming] = useState<Readonly<Record<string, string>>>({})
  const [prompts, setPrompts] = useState<ReadonlyArray<PermissionPrompt>>([])
  const [toasts, setToasts] = useState<ReadonlyArray<Toast>>([])
  const [pending, setPending] = useState(false)
  const [resume, setResume] = useState<{ readonly sessionId: string; readonly state: ResumeState } | null>(null)
  // The commands resumes wait for, by session, as the host's progress says (a start-up resume too).
  const [waiting, setWaiting] = useState<Readonly<Record<string, ReadonlyArray<WaitingOperation>>>>({})
  const [resolving, setResolving] = useState<OpenOperation | null>(null)
  const [recording, setRecording] = useState(false)
  const [draft, setDraft] = useState('')
  const selectedRef = useRef<string | null>(null)
  const toastId = useRef(0)
  const toastTimers = useRef(new Set<ReturnType<typeof setTimeout>>())
  // A continuation the start-up pass started is told once, whether its message or the host info
  // (for a window that connected after start-up) arrives first, and not again when the page reloads.
  const toldContinued = useRef<Set<string> | null>(null)

  const dismiss = useCallback((id: number) => setToasts((all) => all.filter((other) => other.id !== id)), [])

  const toast = useCallback(
    (tone: Toast['tone'], title: string, lines: ReadonlyArray<string> = []) => {
      toastId.current += 1
      const next: Toast = { id: toastId.current, tone, title, lines }
      setToasts((all) => [...all, next])
      const lifetime = TOAST_LIFETIME_MS[tone]
      if (lifetime === null) return
      const timer = setTimeout(() => {
        toastTimers.current.delete(timer)
        dismiss(next.id)
      }, lifetime)
      toastTimers.current.add(timer)
    },
    [dismiss],
  )

  useEffect(() => {
    const timers = toastTimers.current
    return () => {
      for (const timer of timers) clearTimeout(timer)
      timers.clear()
    }
  }, [])

  const resumePlan = api.sessions.resumePlan
  const checkPlan = useCallback(
    async (sessionId: string) => {
      // An older host without the plan channel: the click plans (and parks) as before.
      if (resumePlan === undefined) {
        setResume({ sessionId, state: { status: 'ready' } })
        return
      }
      setResume({ sessionId, state: { status: 'checking' } })
      try {
        const plan = await resumePlan(sessionId)
        if (selectedRef.current !== sessionId) return
        setResume({
          sessionId,
          state:
            plan.disposition === 'park'
              ? { status: 'parked', park: plan }
              : plan.disposition === 'waiting'
                ? { status: 'ready', running: plan.operations }
                : { status: 'ready' },
        })
      } catch (error) {
        if (selectedRef.current !== sessionId) return
        // The click plans again before anything starts, so an unanswered check leaves it live.
        setResume({ sessionId, state: { status: 'ready' } })
        toast('error', 'Whether this session can resume could not be checked.', [errorText(error)])
      }
    },
    [resumePlan, toast],
  )

  const refreshList = useCallback(async () => {
    try {
      setSessions(await api.sessions.list())
    } catch (error) {
      toast('error', 'The sessions cannot be listed.', [errorText(error)])
    }
  }, [api, toast])

  const open = useCallback(
    async (sessionId: string) => {
      selectedRef.current = sessionId
      setSelected(sessionId)
      try {
        const loaded = await api.sessions.get(sessionId)
        if (selectedRef.current !== sessionId) return
        setView(loaded)
        setLive([])
        setStreaming({})
        if (loaded.session.interrupted && api.sessions.resumeLatest !== undefined) void checkPlan(sessionId)
      } catch (error) {
        toast('error', `The session ${sessionId} cannot be opened.`, [errorText(error)])
      }
    },
    [api, checkPlan, toast],
  )

  useEffect(() => {
    const tellContinued = (sessionId: string, runId: string): void => {
      toldContinued.current ??= loadTold()
      if (toldContinued.current.has(runId)) return
      toldContinued.current.add(runId)
      saveTold(toldContinued.current)
      toast('info', `Session ${sessionId} was interrupted: continuing from its latest safe boundary.`)
    }
    void api.info().then((loaded) => {
      setInfo(loaded)
      for (const { sessionId, runId } of loaded.autoContinued) tellContinued(sessionId, runId)
    })
    void refreshList()
    return api.onMessage((message: HostMessage) => {
      switch (message.type) {
        case 'item':
          if (message.sessionId !== selectedRef.current) return
          setLive((items) => (items.some((i) => i.eventId === message.item.eventId) ? items : [...items, message.item]))
          if (message.item.kind === 'text' && message.item.role === 'model') {
            setStreaming(({ [message.item.runId]: _done, ...rest }) => rest)
          }
          return
        case 'text':
          if (message.sessionId !== selectedRef.current) return
          setStreaming((all) => ({ ...all, [message.runId]: (all[message.runId] ?? '') + message.text }))
          return
        case 'permission':
          setPrompts((all) => [...all, message.prompt])
          return
        case 'runEnded':
          void refreshList()
          if (message.sessionId === selectedRef.current) void open(message.sessionId)
          if (message.status !== 'completed') {
            toast(
              'error',
              `The ${message.kind === 'continuation' ? 'continuation' : 'turn'} ended ${message.status}.`,
              [...(message.message === undefined ? [] : [message.message])],
            )
          }
          return
        case 'autoContinued':
          tellContinued(message.sessionId, message.runId)
          void refreshList()
          return
        case 'resumeProgress':
          // Heard through onResumeProgress.
          return
      }
    })
  }, [api, open, refreshList, toast])

  const resumeLatest = api.sessions.resumeLatest
  // How a resume ended, whether it answered at once or after waiting for a command.
  const settle = useCallback(
    (sessionId: string, result: ResumeOutcome): void => {
      if (result.disposition === 'park') {
        if (selectedRef.current !== sessionId) return
        // The park stays in the banner and the button stays off: clicking again would park again.
        setResume({ sessionId, state: { status: 'parked', park: result } })
        // An execution rejection (the session changed after planning) names no next step: a new
        // plan does.
        if (result.nextStep === undefined && resumePlan !== undefined) void checkPlan(sessionId)
      } else if (result.disposition === 'failed') {
        toast('error', 'The continuation did not start.', [result.message])
      } else {
        toast('info', `Resuming from the latest safe boundary: run ${result.runId}.`)
        if (selectedRef.current !== sessionId) return
        setView((current) =>
          current === null || current.session.sessionId !== sessionId
            ? current
            : { ...current, session: { ...current.session, interrupted: false } },
        )
      }
    },
    [checkPlan, resumePlan, toast],
  )

  const onResumeProgress = api.sessions.onResumeProgress
  useEffect(() => {
    if (onResumeProgress === undefined) return
    return onResumeProgress((progress: ResumeProgress) => {
      setWaiting(({ [progress.sessionId]: _was, ...rest }) =>
        progress.result === undefined ? { ...rest, [progress.sessionId]: progress.operations } : rest,
      )
      if (progress.result !== undefined) {
        settle(progress.sessionId, progress.result)
        void refreshList()
      }
    })
  }, [onResumeProgress, settle, refreshList])

  const safeResume = async (): Promise<void> => {
    if (resumeLatest === undefined || selected === null) return
    const sessionId = selected
    setPending(true)
    try {
      const result = await resumeLatest(sessionId)
      // It waits in the background; the progress messages carry the rest.
      if (result.disposition === 'waiting') setWaiting((all) => ({ ...all, [sessionId]: result.operations }))
      else settle(sessionId, result)
    } catch (error) {
      toast('error', 'Resuming failed.', [errorText(error)])
    } finally {
      setPending(false)
      void refreshList()
    }
  }

  const resolveCall = api.sessions.resolveCall
  const confirmResolve = async (op: OpenOperation, verdict: Verdict, output: string): Promise<void> => {
    if (resolveCall === undefined || selected === null) return
    const sessionId = selected
    setRecording(true)
    try {
      const result = await resolveCall(sessionId, op.operationId, verdict, ...(output === '' ? [] : [output]))
      if (result.disposition === 'resolved') {
        setResolving(null)
        toast('info', `Recorded: ${VERDICT_WORDS[verdict].toLowerCase()} — ${callName(op)}.`, [
          'Safe resume continues the turn from this record.',
        ])
        await open(sessionId)
      } else if (result.disposition === 'refused') {
        toast(
          'warn',
          'The verdict was not recorded.',
          result.messages.map((m, i) => `${m} (${result.codes[i] ?? '?'})`),
        )
      } else {
        toast('error', 'The verdict could not be recorded.', [result.message])
      }
    } catch (error) {
      toast('error', 'The verdict could not be recorded.', [errorText(error)])
    } finally {
      setRecording(false)
      void refreshList()
    }
  }

  const send = async (event: FormEvent): Promise<void> => {
    event.preventDefault()
    if (selected === null || draft.trim() === '') return
    const prompt = draft
    setDraft('')
    try {
      const result = await api.sessions.send(selected, prompt)
      if (result.disposition === 'failed') toast('error', 'The turn did not start.', [result.message])
    } catch (error) {
      toast('error', 'The turn did not start.', [errorText(error)])
    }
  }

  const answer = async (prompt: PermissionPrompt, decision: 'allow' | 'deny'): Promise<void> => {
    setPrompts((all) => all.filter((p) => p.requestId !== prompt.requestId))
    await api.permissions.answer(prompt.requestId, decision)
  }

  const items =
    view === null ? [] : [...view.items, ...live.filter((i) => !view.items.some((v) => v.eventId === i.eventId))]
  const session = view?.session
  const sessionPrompts = prompts.filter((p) => p.sessionId === selected)
  const resumeState: ResumeState =
    resume !== null && resume.sessionId === selected ? resume.state : { status: 'checking' }
  const waitingNow = selected === null ? undefined : waiting[selected]
  const resolvedBefore = session?.latestRun?.failureClass === 'operator_resolved'

  return (
    <div className="app">
      <aside className="sessions" aria-label="Sessions">
        <h1>maka</h1>
        <p className="host">{info === null ? '…' : info.safeResume ? 'Safe resume on' : 'Safe resume off'}</p>
        <ul>
          {sessions.map((s) => (
            <li key={s.sessionId}>
              <button
                type="button"
                className={s.sessionId === selected ? 'session selected' : 'session'}
                onClick={() => void open(s.sessionId)}
                data-session={s.sessionId}
              >
                <span className="title">{s.title ?? s.sessionId}</span>
                {s.interrupted ? <span className="mark">interrupted</span> : null}
                <span className="meta">{s.latestRun === null ? 'no run' : s.latestRun.status}</span>
              </button>
            </li>
          ))}
        </ul>
        {sessions.length === 0 ? <p className="empty">No sessions yet.</p> : null}
      </aside>
      <main className="transcript" aria-label="Transcript">
        <div className="scroll">
          {session === undefined ? (
            <p className="empty">Pick a session.</p>
          ) : (
            <>
              <header>
                <h2>{session.title ?? session.sessionId}</h2>
                <p className="meta">{session.cwd}</p>
              </header>
              {session.interrupted ? (
                <section className="banner" role="region" aria-label="Interrupted turn">
                  <p>
                    {resolvedBefore
                      ? 'A verdict was recorded for the interrupted turn’s open tool call.'
                      : `The last turn was interrupted${
                          session.latestRun?.failureClass === undefined ? '' : ` (${session.latestRun.failureClass})`
                        }.`}
                  </p>
                  {resumeLatest === undefined ? (
                    <p className="meta">Safe resume is off: start with MAKA_RUNTIME_SAFE_BOUNDARY_RESUME=1.</p>
                  ) : (
                    <div className="banner-actions">
                      <button
                        type="button"
                        onClick={() => void safeResume()}
                        disabled={pending || waitingNow !== undefined || resumeState.status !== 'ready'}
                        {...(resumeState.status === 'parked' ? { 'aria-describedby': 'park-reasons' } : {})}
                      >
                        {pending
                          ? 'Resuming…'
                          : waitingNow !== undefined
                            ? 'Waiting…'
                            : resumeState.status === 'checking'
                              ? 'Checking…'
                              : 'Safe resume'}
                      </button>
                      {resumeState.status === 'parked' && resumePlan !== undefined ? (
                        <button type="button" className="secondary" onClick={() => void checkPlan(session.sessionId)}>
                          Check again
                        </button>
                      ) : null}
                    </div>
                  )}
                  {waitingNow !== undefined ? <WaitingLines operations={waitingNow} /> : null}
                  {waitingNow === undefined && resumeState.status === 'ready' && resumeState.running !== undefined ? (
                    <p className="park meta">
                      {resumeState.running.map(callName).join(', ')} is still running: Safe resume waits for it to end,
                      then continues.
                    </p>
                  ) : null}
                  {resumeState.status === 'parked' ? <ParkReasons park={resumeState.park} /> : null}
                  {resumeState.status === 'parked' && resumeState.park.openToolOperations !== undefined ? (
                    <OpenOperations
                      ops={resumeState.park.openToolOperations}
                      onResolve={resolveCall === undefined ? null : setResolving}
                    />
                  ) : null}
                </section>
              ) : null}
              {resolving === null ? null : (
                <ResolveDialog
                  key={resolving.operationId}
                  op={resolving}
                  busy={recording}
                  onConfirm={(verdict, output) => void confirmResolve(resolving, verdict, output)}
                  onCancel={() => setResolving(null)}
                />
              )}
              {view !== null && view.omitted > 0 ? (
                <p className="meta">{view.omitted} earlier rows not shown.</p>
              ) : null}
              <ol className="items">
                {items.map((item) => (
                  <Item key={item.eventId} item={item} />
                ))}
                {Object.entries(streaming).map(([runId, text]) => (
                  <li key={`stream-${runId}`} className="item item-streaming role-model">
                    {text}
                  </li>
                ))}
              </ol>
              {sessionPrompts.map((prompt) => (
                <section key={prompt.requestId} className="permission" role="region" aria-label="Permission">
                  <p>
                    Allow <span className="tool">{prompt.toolName}</span>? {prompt.summary}
                  </p>
                  <button type="button" onClick={() => void answer(prompt, 'allow')}>
                    Allow
                  </button>
                  <button type="button" onClick={() => void answer(prompt, 'deny')}>
                    Deny
                  </button>
                </section>
              ))}
            </>
          )}
        </div>
        {/* In the flow between the transcript and the composer, so a toast never covers Send. */}
        <div className="toasts" aria-live="polite">
          {toasts.map((t) => (
            <div key={t.id} className={`toast toast-${t.tone}`} role="status">
              <p className="toast-title">{t.title}</p>
              {t.lines.length === 0 ? null : (
                <ul>
                  {t.lines.map((line) => (
                    <li key={line}>{line}</li>
                  ))}
                </ul>
              )}
              <button type="button" aria-label="Dismiss" onClick={() => dismiss(t.id)}>
                ×
              </button>
            </div>
          ))}
        </div>
        {session === undefined ? null : (
          <form className="composer" onSubmit={(event) => void send(event)}>
            <input
              aria-label="Prompt"
              value={draft}
              onChange={(event) => setDraft(event.target.value)}
              placeholder="Ask the agent…"
            />
            <button type="submit">Send</button>
          </form>
        )}
      </main>
    </div>
  )
}
