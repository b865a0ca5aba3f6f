/**
 * The contract between the main process (or `maka ui`'s server) and the renderer: the channels,
 * what each returns, the messages pushed to the renderer, and `window.maka`. Plain data only, so
 * the same renderer runs over Electron IPC and over the loopback HTTP bridge. Nothing here lets
 * the renderer state a safety fact: it names a session and the host decides everything else.
 */

/**
 * The IPC channels. `sessions:resumePlan`, `sessions:resumeLatest` and `sessions:resolveCall` are
 * registered only with the resume flag.
 * @category models
 */
export const Channels = {
  info: 'host:info',
  list: 'sessions:list',
  get: 'sessions:get',
  send: 'sessions:send',
  resumePlan: 'sessions:resumePlan',
  resumeLatest: 'sessions:resumeLatest',
  resolveCall: 'sessions:resolveCall',
  answerPermission: 'permissions:answer',
} as const

/**
 * A channel name.
 * @category models
 */
export type Channel = (typeof Channels)[keyof typeof Channels]

/**
 * The one push channel from the host to the renderer.
 * @category models
 */
export const MESSAGE_CHANNEL = 'maka:message'

/**
 * The push channel of a resume's progress while it waits for a command still running (Electron
 * sends `resumeProgress` messages here; the HTTP bridge carries them on its one event stream).
 * @category models
 */
export const RESUME_PROGRESS_CHANNEL = 'sessions:resumeProgress'

/**
 * What the host tells the renderer about itself.
 * @category models
 */
export interface HostInfo {
  /** `MAKA_RUNTIME_SAFE_BOUNDARY_RESUME=1`: the resume entry points exist. */
  readonly safeResume: boolean
  readonly transport: 'electron' | 'http'
  /**
   * The continuations the start-up pass started (with the flag), so a window that connects after
   * start-up still tells the user which interrupted sessions it continued.
   */
  readonly autoContinued: ReadonlyArray<{ readonly sessionId: string; readonly runId: string }>
}

/**
 * A session in the list.
 * @category models
 */
export interface SessionListItem {
  readonly sessionId: string
  readonly title: string | null
  readonly cwd: string | null
  readonly createdAt: string | null
  /** The planner's mark: the latest top-level run failed with `app_restarted` or lost its owner. */
  readonly interrupted: boolean
  readonly ownerAlive: boolean
  readonly latestRun: {
    readonly runId: string
    readonly kind: string
    readonly status: string
    readonly failureClass?: string
  } | null
  /** Why the session could not be read, when it could not. */
  readonly error?: string
}

/**
 * One row of a transcript: a committed ledger event as the renderer shows it. Tool arguments and
 * results are not carried (the name and the operation's status are), so nothing the tool touched
 * leaves the host through this channel.
 * @category models
 */
export interface TranscriptItem {
  readonly eventId: string
  readonly runId: string
  readonly turnId: string
  readonly role: 'user' | 'model' | 'tool' | 'system'
  readonly kind:
    | 'text'
    | 'thinking'
    | 'tool_call'
    | 'tool_result'
    | 'error'
    | 'permission_request'
    | 'permission_decision'
    | 'continuation_start'
    | 'terminal'
    | 'other'
  readonly text: string
  readonly toolName?: string
  readonly toolCallId?: string
  readonly status?: string
}

/**
 * A session with its transcript (the newest rows when the ledgers are long).
 * @category models
 */
export interface SessionView {
  readonly session: SessionListItem
  readonly items: ReadonlyArray<TranscriptItem>
  /** Rows left out before `items` because the transcript is long. */
  readonly omitted: number
}

/**
 * A run the host started (a turn or a continuation); it streams on the message channel.
 * @category models
 */
export interface Started {
  readonly disposition: 'started'
  readonly runId: string
  readonly turnId: string
}

/**
 * A verdict a person may record for an open tool call.
 * @category models
 */
export type Verdict = 'applied' | 'not_applied' | 'failed'

/**
 * A tool call the interrupted turn left without a result, as a park answer shows it to the person.
 * The host decides everything here: which calls a person may settle (`verdicts` present) and what
 * each verdict means. `preview` is built by the host with the tool's own description of the call,
 * for this person only: it is never logged, and the call's args never leave the host.
 * @category models
 */
export interface OpenOperation {
  readonly operationId: string
  readonly toolCallId: string
  readonly toolName: string
  /** `dispatched_outcome_unknown`, `definitely_not_dispatched` or `indeterminate`. */
  readonly status: string
  readonly recoveryMode: string | null
  /** Why it parks (a park reason code), or null when it does not park the plan. */
  readonly reason: string | null
  /** The reason's human sentence, or null without a reason. */
  readonly reasonText: string | null
  /** One line saying what the call does (e.g. `run "npm publish"`), when the tool can say it. */
  readonly preview?: string
  /** The verdicts a person may record, in order, each with what it means; absent when none may. */
  readonly verdicts?: ReadonlyArray<{ readonly verdict: Verdict; readonly meaning: string }>
}

/**
 * A command a resume waits for: which call, and how long it has run (null when unknown).
 * @category models
 */
export interface WaitingOperation {
  readonly operationId: string
  readonly toolCallId: string
  readonly toolName: string
  readonly elapsedMs: number | null
}

/**
 * Resuming waits for commands the interrupted turn started that are still running; it continues by
 * itself once they end (its progress and its last answer come as `resumeProgress` messages).
 * @category models
 */
export interface Waiting {
  readonly disposition: 'waiting'
  readonly operations: ReadonlyArray<WaitingOperation>
}

/**
 * Resuming was refused: every reason's code, and its human sentence at the same index.
 * @category models
 */
export interface Parked {
  readonly disposition: 'park'
  readonly rejectionReasons: ReadonlyArray<string>
  readonly messages: ReadonlyArray<string>
  /** The tool calls left open, when the plan got as far as finding them. */
  readonly openToolOperations?: ReadonlyArray<OpenOperation>
  /**
   * What the person can do: the next step of the first reason (the planner ranks them), from
   * `@maka/events`' `nextStepForPark` (decision 172). Absent when the first code is an execution
   * rejection (the session changed after planning): a new plan names the way on.
   */
  readonly nextStep?: string
}

/**
 * Resuming would continue: the plan was approved (nothing was started or claimed).
 * @category models
 */
export interface WouldContinue {
  readonly disposition: 'continue'
  /** The interrupted run the continuation would start from. */
  readonly sourceRunId: string
}

/**
 * The answer of `sessions:resumePlan`: what Safe resume would do now, as `maka resume plan` says it
 * (`waiting`: it would wait for these commands, then plan again; `elapsedMs` is null here).
 * @category models
 */
export type ResumePlanResult = WouldContinue | Parked | Waiting

/**
 * The run could not start for a reason that is no park (a store write failed, the recorded model
 * cannot be built here).
 * @category models
 */
export interface StartFailed {
  readonly disposition: 'failed'
  readonly message: string
}

/**
 * How a resume ended after it waited: what `sessions:resumeLatest` would have answered.
 * @category models
 */
export type ResumeOutcome = Started | Parked | StartFailed

/**
 * The answer of `sessions:resumeLatest`. It never waits: `waiting` says it is waiting in the
 * background, and `resumeProgress` messages follow.
 * @category models
 */
export type ResumeLatestResult = ResumeOutcome | Waiting

/**
 * The answer of `sessions:resolveCall`: the person's verdict was recorded in a new run (`runId`),
 * refused with every code and its sentence (nothing written), or its write failed.
 * @category models
 */
export type ResolveCallResult =
  | { readonly disposition: 'resolved'; readonly runId: string }
  | {
      readonly disposition: 'refused'
      readonly codes: ReadonlyArray<string>
      readonly messages: ReadonlyArray<string>
    }
  | { readonly disposition: 'failed'; readonly message: string }

/**
 * A resume's progress while it waits: the commands still running, and — on the last message only —
 * how the resume ended.
 * @category models
 */
export interface ResumeProgress {
  readonly type: 'resumeProgress'
  readonly sessionId: string
  readonly operations: ReadonlyArray<WaitingOperation>
  readonly result?: ResumeOutcome
}

/**
 * The answer of `sessions:send`.
 * @category models
 */
export type SendResult = Started | StartFailed

/**
 * A permission question for a running tool call.
 * @category models
 */
export interface PermissionPrompt {
  readonly sessionId: string
  readonly runId: string
  readonly requestId: string
  readonly toolName: string
  readonly summary: string
}

/**
 * What the host pushes to the renderer.
 * @category models
 */
export type HostMessage =
  | { readonly type: 'item'; readonly sessionId: string; readonly item: TranscriptItem }
  | { readonly type: 'text'; readonly sessionId: string; readonly runId: string; readonly text: string }
  | { readonly type: 'permission'; readonly prompt: PermissionPrompt }
  | {
      readonly type: 'runEnded'
      readonly sessionId: string
      readonly runId: string
      readonly kind: 'turn' | 'continuation'
      readonly status: string
      readonly message?: string
    }
  | {
      readonly type: 'autoContinued'
      readonly sessionId: string
      readonly runId: string
    }
  | ResumeProgress

/**
 * A refusal of bad input, as both transports carry it.
 * @category models
 */
export interface HostErrorBody {
  readonly code: string
  readonly message: string
}

/**
 * `window.maka`: what the renderer can ask. `resumePlan`, `resumeLatest`, `resolveCall` and
 * `onResumeProgress` are absent without the resume flag.
 * @category models
 */
export interface MakaApi {
  readonly info: () => Promise<HostInfo>
  readonly sessions: {
    readonly list: () => Promise<ReadonlyArray<SessionListItem>>
    readonly get: (sessionId: string) => Promise<SessionView>
    readonly send: (sessionId: string, prompt: string) => Promise<SendResult>
    /** What Safe resume would do now; starts nothing. Absent without the resume flag. */
    readonly resumePlan?: (sessionId: string) => Promise<ResumePlanResult>
    readonly resumeLatest?: (sessionId: string) => Promise<ResumeLatestResult>
    /**
     * Records what happened to an open tool call (`verdict`, with optional `output` text); a Safe
     * resume then continues from it. Absent without the resume flag.
     */
    readonly resolveCall?: (
      sessionId: string,
      operationId: string,
      verdict: Verdict,
      output?: string,
    ) => Promise<ResolveCallResult>
    /** Subscribes to the progress of resumes that wait; returns the unsubscribe. Absent without the flag. */
    readonly onResumeProgress?: (listener: (progress: ResumeProgress) => void) => () => void
  }
  readonly permissions: {
    readonly answer: (requestId: string, decision: 'allow' | 'deny') => Promise<boolean>
  }
  /** Subscribes to host messages; returns the unsubscribe. */
  readonly onMessage: (listener: (message: HostMessage) => void) => () => void
}
