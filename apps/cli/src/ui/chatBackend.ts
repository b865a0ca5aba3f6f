/**
 * What the chat screen talks to: one runtime over the data directory, with the runtime's observer
 * and permission question forwarded to whichever screen is attached. Results come back as notices
 * (plain sentences with a tone), so the screen holds no domain rule and tests can fake it.
 */
import type { StorePorts } from '@maka/stores'
import * as E from 'fp-ts/lib/Either.js'
import { type RuntimeEvent, describeCode } from '@maka/events'
import type { ContinuationProviderResolver, PermissionMode, PermissionQuestion, WaitingOperation } from '@maka/executor'
import type { OperatorVerdict } from '@maka/events'
import { composeRuntime } from '../composeRuntime.js'
import type { CommandMcp } from '../commandMcp.js'
import {
  type ProviderChoice,
  type ProviderFlags,
  type ScriptDefaults,
  continuationProviderResolver,
  providerForRuns,
} from '../providerChoice.js'
import { DEMO_SCRIPT } from '@maka/providers'
import {
  chatResolveCommand,
  continuationResultLines,
  openOperationLines,
  planLines,
  recoveryLine,
} from '../reportLines.js'
import type { ResolveTarget } from './chatInput.js'
import { resolveNotices, resolveThrough } from './resolveThrough.js'
import { ownerLockLiveness } from '@maka/host-inspector'
import { listSessionSummaries, loadSessionOutline, summarizeStoredSession } from '@maka/sessions'
import { statSync } from 'node:fs'
import { homedir } from 'node:os'
import { makeEventNarrator } from '../eventSummary.js'
import type { Notice, TranscriptEntry } from './transcriptEntry.js'
import { transcriptOfEvent } from './transcriptOfEvent.js'
import { makeStyle } from '../Style.js'
import { sessionLine } from '../commands/sessions.js'
import { interruptedFirst } from '../commands/pickSession.js'
import { type PickEntry, pickEntries } from '../commands/resumePick.js'
import { failedWriteSentence } from '../writeFailure.js'

export type { Notice } from './transcriptEntry.js'

/**
 * What the runtime tells the attached screen while it works.
 * @category models
 */
export interface ChatListener {
  onEvent(event: RuntimeEvent): void
  onTextDelta(runId: string, text: string): void
  askPermission(question: PermissionQuestion): Promise<'allow' | 'deny'>
  /** `/resume` waits for commands still running: which ones and for how long (never a command). */
  onWaiting?(operations: ReadonlyArray<WaitingOperation>): void
}

/**
 * What the status line under the prompt says: the model, the folder and the permission mode.
 * @category models
 */
export interface ChatStatus {
  readonly model: string
  readonly folder: string
  readonly permissionMode: string
}

/**
 * What the chat finds when it opens a session that has runs: its transcript (user, model and tool
 * lines from the ledgers) and whether its latest turn was interrupted, i.e. whether to offer a resume.
 * @category models
 */
export interface Reopened {
  readonly entries: ReadonlyArray<TranscriptEntry>
  readonly interrupted: boolean
  /** Why no resume is offered for an interrupted turn (e.g. safe resume is off); shown instead. */
  readonly offerRefused?: string
}

/**
 * The chat screen's view of the runtime.
 * @category models
 */
export interface ChatBackend {
  readonly sessionId: string
  readonly banner: ReadonlyArray<string>
  readonly status?: ChatStatus
  /** The session's transcript and interrupted mark, read after startup recovery. */
  reopen?(): Promise<Reopened>
  attach(listener: ChatListener): void
  recover(): Promise<ReadonlyArray<Notice>>
  submit(prompt: string): Promise<ReadonlyArray<Notice>>
  /**
   * Plans the latest safe boundary and continues it; while the only reason to park is a command
   * still running, waits for it (the listener's `onWaiting`) and goes on when it ends.
   */
  resume(): Promise<ReadonlyArray<Notice>>
  /** Stops a wait of `resume` (nothing was written; `resume` answers the park): false when none waits. */
  stopWaiting?(): boolean
  /** `/resolve` alone: the open tool calls of the latest turn, with the verdicts and the command. */
  openOperations?(): Promise<ReadonlyArray<Notice>>
  /** `/resolve …`: records what happened to one open tool call (actor `tui`); nothing is run. */
  resolve?(target: ResolveTarget, verdict: OperatorVerdict, output?: string): Promise<ReadonlyArray<Notice>>
  plan(): Promise<ReadonlyArray<Notice>>
  sessions(): Promise<ReadonlyArray<Notice>>
  /** Cancels the running turn or continuation; its id, or null when none runs. */
  cancel(): string | null
  /**
   * What `/resume` offers (decision 240): null when it continues this session as `resume()` does,
   * else the interrupted sessions to pick from, newest first (`all`: the list whatever this session
   * holds, as `/resume list` asks).
   */
  resumeChoices?(all: boolean): Promise<ReadonlyArray<PickEntry> | null>
  /** Makes a listed session the chat's own: later turns, `/plan` and `/resume` work on it. */
  switchTo?(sessionId: string): ReadonlyArray<Notice>
}

/**
 * Options of the real backend.
 * @category models
 */
export interface ChatBackendOptions {
  readonly dataDir: string
  /** The chosen store's ports (`--store`); the JSONL files of `dataDir` when absent. */
  readonly stores?: StorePorts
  readonly sessionId: string
  readonly cwd: string
  readonly choice: ProviderChoice
  /** The provider flags `chat` was started with; they override a resumed run's recorded provider. */
  readonly providerFlags?: ProviderFlags
  readonly permissionMode: PermissionMode
  /**
   * The resolver of `/resume` over the scripts this backend uses: `chat` keeps the source run's
   * recorded model and permission mode (`sessionSetup.ts`); `providerFlags` over the recorded model when absent.
   */
  readonly resolveContinuationProvider?: (scripts: ScriptDefaults) => ContinuationProviderResolver
  readonly safeBoundaryResumeEnabled: boolean
  readonly verbose: boolean
  /** The model the status line names; by default the one `choice` makes. */
  readonly modelLabel?: string
  /** The MCP servers the chat opened: their tools join the built-in ones. */
  readonly mcp?: CommandMcp
}

// At most this many lines of earlier turns are drawn when a session reopens; `maka show` has them all.
const REOPEN_LINES = 200

/**
 * The model a provider choice uses, as the status line names it.
 * @category constructors
 */
export const modelLabelOf = (choice: ProviderChoice): string =>
  choice.kind === 'scripted' ? 'scripted' : `${choice.model} (openai-compatible)`

/**
 * A folder as the status line shows it: under the home folder with `~`.
 * @category constructors
 */
export const folderLabel = (folder: string, home: string = homedir()): string =>
  home !== '' && home !== '/' && (folder === home || folder.startsWith(`${home}/`))
    ? `~${folder.slice(home.length)}`
    : folder

const plain = makeStyle(false)

/**
 * The backend over a real runtime.
 * @category constructors
 */
export const makeChatBackend = (options: ChatBackendOptions): ChatBackend => {
  let listener: ChatListener | null = null
  const scripts = { turn: DEMO_SCRIPT, continuation: [] }
  const { runtime, stores } = composeRuntime({
    dataDir: options.dataDir,
    ...(options.stores === undefined ? {} : { stores: options.stores }),
    providerFor: providerForRuns(options.choice, scripts),
    // A continuation runs with the provider its source run recorded, resolved by /resume.
    resolveContinuationProvider:
      options.resolveContinuationProvider?.(scripts) ??
      continuationProviderResolver(options.providerFlags ?? {}, scripts),
    safeBoundaryResumeEnabled: options.safeBoundaryResumeEnabled,
    permissionMode: options.permissionMode,
    verbose: options.verbose,
    ...(options.mcp === undefined ? {} : { mcp: options.mcp }),
    observer: {
      onEvent: (event) => listener?.onEvent(event),
      onTextDelta: (runId, text) => listener?.onTextDelta(runId, text),
    },
    askPermission: (question) => (listener === null ? Promise.resolve('deny') : listener.askPermission(question)),
  })
  // The session and folder the chat works on; a session picked from the `/resume` list replaces them.
  let sessionId = options.sessionId
  let cwd = options.cwd
  // The folders of the sessions the last `/resume` list showed, for `switchTo`.
  const listed = new Map<string, string | null>()
  // The wait of the running `/resume`, if it waits for a command.
  let waiting: AbortController | null = null
  const isDirectory = (path: string): boolean => {
    try {
      return statSync(path).isDirectory()
    } catch {
      return false
    }
  }
  return {
    get sessionId() {
      return sessionId
    },
    banner: [
      `maka chat — session ${sessionId}`,
      `data dir ${options.dataDir} · permission mode ${options.permissionMode} · safe resume ${
        options.safeBoundaryResumeEnabled ? 'on' : 'off'
      } · /help for commands`,
    ],
    get status() {
      return {
        model: options.modelLabel ?? modelLabelOf(options.choice),
        folder: folderLabel(cwd),
        permissionMode: options.permissionMode,
      }
    },
    attach: (next) => {
      listener = next
    },
    reopen: async () => {
      const summary = await summarizeStoredSession(stores, sessionId, ownerLockLiveness)
      const record = await stores.sessions.read(sessionId)()
      if (E.isLeft(record) || summary.runCount === 0) return { entries: [], interrupted: false }
      const outline = await loadSessionOutline<{
        readonly toolCallId?: string
        readonly entry: TranscriptEntry | null
      }>(stores, record.right, () => {
        const narrator = makeEventNarrator()
        return (event: RuntimeEvent) => ({ entry: transcriptOfEvent(event, narrator, { history: true }) })
      })
      const entries: Array<TranscriptEntry> = []
      if (E.isRight(outline)) {
        for (const run of outline.right.runs) {
          await outline.right.timeline(run.runId, (rows) => {
            for (const row of rows) if (row.entry !== null) entries.push(row.entry)
          })
        }
      }
      const shown = entries.slice(-REOPEN_LINES)
      const left = entries.length - shown.length
      return {
        entries: [
          {
            kind: 'notice',
            notice: {
              tone: 'info',
              text: `Earlier in this session${left > 0 ? ` (the last ${shown.length} lines; maka show ${sessionId} has all)` : ''}:`,
            },
          },
          ...shown,
        ],
        interrupted: summary.interrupted,
        ...(options.safeBoundaryResumeEnabled
          ? {}
          : { offerRefused: 'Its last turn was interrupted; set MAKA_RUNTIME_SAFE_BOUNDARY_RESUME=1 to resume it.' }),
      }
    },
    recover: async () => {
      const { actions } = await runtime.recover()
      if (actions.length === 0) return [{ tone: 'info', text: 'Startup recovery: nothing to repair.' }]
      return [
        { tone: 'info', text: `Startup recovery: ${actions.length} action${actions.length === 1 ? '' : 's'}.` },
        ...actions.map((action): Notice => ({
          tone: failedWriteSentence(action.error) === null ? 'info' : 'error',
          text: `- ${recoveryLine(action)}`,
        })),
      ]
    },
    submit: async (prompt) => {
      const result = await runtime.runTurn({ sessionId, cwd, prompt })
      switch (result._tag) {
        case 'Finished':
          return result.status === 'completed'
            ? []
            : [
                {
                  tone: 'error',
                  text: `The turn ${result.status}${result.failureClass === undefined ? '' : ` (${result.failureClass})`}.${
                    result.failureMessage === undefined ? '' : ` ${result.failureMessage}`
                  }${result.retryLater === true ? ' /resume tries it again later.' : ''}`,
                },
              ]
        case 'Refused':
          return [
            { tone: 'error', text: `The turn was refused: ${failedWriteSentence(result.error) ?? result.message}` },
          ]
        case 'Interrupted': {
          const sentence = failedWriteSentence(result.error)
          return [
            {
              tone: 'error',
              text: sentence === null ? result.message : `${sentence}; the run stopped and recovery will close it.`,
            },
          ]
        }
      }
    },
    resume: async () => {
      const notices: Array<Notice> = []
      const wait = new AbortController()
      waiting = wait
      const result = await runtime
        .resume(
          { sessionId, wait: { signal: wait.signal } },
          {
            onProviderNote: (note) => {
              notices.push({ tone: 'info', text: note })
            },
            onWaiting: (operations) => listener?.onWaiting?.(operations),
          },
        )
        .finally(() => {
          if (waiting === wait) waiting = null
        })
      if (result._tag === 'Parked') {
        return [
          ...notices,
          ...(wait.signal.aborted ? [{ tone: 'info', text: 'Stopped waiting; nothing was written.' } as const] : []),
          { tone: 'warn', text: 'Cannot resume:' },
          ...result.plan.rejectionReasons.map((code): Notice => ({
            tone: 'warn',
            text: `- ${describeCode(code)} (${code})`,
          })),
          ...openOperationLines(result.plan, plain, chatResolveCommand).map((text): Notice => ({ tone: 'warn', text })),
        ]
      }
      const tone: Notice['tone'] =
        result._tag === 'Finished' && result.status === 'completed'
          ? 'ok'
          : result._tag === 'Rejected'
            ? 'warn'
            : 'error'
      return [...notices, ...continuationResultLines(result, plain).map((text): Notice => ({ tone, text }))]
    },
    stopWaiting: () => {
      if (waiting === null || waiting.signal.aborted) return false
      waiting.abort()
      return true
    },
    openOperations: async () => {
      const plan = await runtime.plan({ sessionId })
      const lines = openOperationLines(plan, plain, chatResolveCommand)
      if (lines.length === 0) return [{ tone: 'info', text: 'No open tool call of this session waits for a verdict.' }]
      return lines.map((text): Notice => ({ tone: 'info', text }))
    },
    resolve: async (target, verdict, output) =>
      resolveNotices(
        await resolveThrough(runtime, {
          sessionId,
          target,
          verdict,
          ...(output === undefined ? {} : { output }),
          actor: 'tui',
        }),
      ),
    plan: async () => {
      const plan = await runtime.plan({ sessionId })
      return planLines(plan, plain, undefined, chatResolveCommand).map((text) => ({
        tone: plan.disposition === 'continue' ? 'ok' : 'warn',
        text,
      }))
    },
    cancel: () => runtime.cancel(),
    resumeChoices: async (all) => {
      if (!all && (await runtime.plan({ sessionId })).disposition === 'continue') return null
      const summaries = await listSessionSummaries(stores, ownerLockLiveness)
      if (E.isLeft(summaries)) {
        if (!all) return null
        throw new Error(`The sessions cannot be listed (${summaries.left}).`)
      }
      const interrupted = interruptedFirst(summaries.right)
      // Only this session (or none) is interrupted: /resume says what it always said about it.
      if (!all && interrupted.every((s) => s.sessionId === sessionId)) return null
      // The same pass `maka resume --pick` makes before planning: repair what crashed since the chat opened.
      const report = await runtime.recover({ sessionIds: interrupted.map((s) => s.sessionId) })
      listed.clear()
      for (const s of interrupted) listed.set(s.sessionId, s.cwd)
      return pickEntries(runtime, interrupted, new Set(report.unwritable.map((u) => u.sessionId)))
    },
    switchTo: (next) => {
      sessionId = next
      const folder = listed.get(next) ?? null
      // A session's turns run in its own folder when that folder is still there.
      if (folder !== null && isDirectory(folder)) cwd = folder
      return [{ tone: 'info', text: `The chat is now on session ${next} (folder ${folderLabel(cwd)}).` }]
    },
    sessions: async () => {
      const summaries = await listSessionSummaries(stores, ownerLockLiveness)
      if (E.isLeft(summaries)) return [{ tone: 'error', text: `The sessions cannot be listed (${summaries.left}).` }]
      if (summaries.right.length === 0) return [{ tone: 'info', text: 'No sessions yet.' }]
      return summaries.right.map((s) => ({
        tone: 'info',
        text: `${s.sessionId === sessionId ? '*' : ' '} ${sessionLine(s, plain)}`,
      }))
    },
  }
}
