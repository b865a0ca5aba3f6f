/**
 * What a runtime is composed of. Hosts build these from packages (stores, host-inspector,
 * providers, tools) and pass them in; tests pass the same real parts, wrapped where a failure must
 * be injected at a port.
 */
import type { AgentRun, ExecutionRejection, RuntimeEvent } from '@maka/events'
import type { HostInspector } from '@maka/host-inspector'
import type { Continuation, UnavailableToolServer } from '@maka/planner'
import type { ModelProvider, ProviderErrorCode } from '@maka/providers'
import type { StorePorts } from '@maka/stores'
import type { Tool } from '@maka/tools'
import type * as E from 'fp-ts/lib/Either.js'

/**
 * How tool calls that change the world are authorised.
 * @category models
 */
export type PermissionMode = 'ask' | 'allow' | 'deny'

/**
 * Named points of a run where tests and the demo stop a process to kill it (`SIGKILL`).
 * @category models
 */
export type CrashPoint =
  | 'after_run_created'
  | 'after_initial_user_committed'
  | 'after_function_call'
  | 'after_permission_request_committed'
  | 'after_tool_dispatch_committed'
  | 'after_tool_response'
  | 'after_settlement_committed'
  | 'after_continuation_start_committed'
  | 'after_adjudication_committed'
  | 'after_terminal_event_committed'
  | 'after_terminal_header_committed'

/**
 * Structured operational events. Identities, codes and error classes only: never prompts, tool
 * arguments, tool results or secrets.
 * @category models
 */
export type LifecycleEvent =
  | {
      readonly type: 'plan_approved'
      readonly sessionId: string
      readonly sourceRunId: string
      readonly targetRunId: string
    }
  | {
      readonly type: 'plan_parked'
      readonly sessionId: string
      readonly sourceRunId: string | null
      readonly rejectionReasons: ReadonlyArray<string>
    }
  | {
      readonly type: 'execution_started'
      readonly sessionId: string
      readonly sourceRunId: string
      readonly targetRunId: string
    }
  | {
      readonly type: 'execution_completed'
      readonly sessionId: string
      readonly sourceRunId: string
      readonly targetRunId: string
    }
  | {
      /** A continuation settled an operation its source left open (Phase 2). */
      readonly type: 'operation_settled'
      readonly sessionId: string
      readonly targetRunId: string
      readonly operationId: string
      readonly action: 'reissue' | 'settle_applied' | 'settle_reattached' | 'adjudicate'
      readonly recoveryMode: string | null
      readonly settlementOrigin: string
    }
  | {
      /**
       * A person recorded what became of an open tool call (`resolve`): identities and the verdict's
       * name only — never the text the person gave.
       */
      readonly type: 'call_resolved'
      readonly sessionId: string
      readonly sourceRunId: string
      readonly targetRunId: string
      readonly operationId: string
      readonly verdict: 'applied' | 'not_applied' | 'failed'
      readonly actor: 'cli' | 'tui' | 'desktop' | 'browser'
    }
  | {
      readonly type: 'execution_failed'
      readonly sessionId: string
      readonly sourceRunId: string
      readonly targetRunId: string | null
      readonly errorClass: string
    }

/**
 * Where lifecycle events go. Best-effort: a sink that throws or rejects changes nothing.
 * @category models
 */
export interface LifecycleSink {
  emit(event: LifecycleEvent): void | Promise<void>
}

/**
 * Live notifications for a host UI: committed rows and streaming text.
 * @category models
 */
export interface RunObserver {
  onEvent?(event: RuntimeEvent): void
  onTextDelta?(runId: string, text: string): void
  /** A model step failed and is about to be tried again after `retry.delayMs`. */
  onRetry?(retry: StepRetry): void
}

/**
 * A failed model step about to be tried again, for a host to say so (the text it streamed so far
 * will be streamed again). `message` is the failure's secret-free sentence.
 * @category models
 */
export interface StepRetry {
  readonly runId: string
  /** The try about to start (2 for the first retry). */
  readonly attempt: number
  readonly maxAttempts: number
  readonly delayMs: number
  readonly code: ProviderErrorCode
  readonly status?: number
  readonly message: string
}

/**
 * A permission question put to the user.
 * @category models
 */
export interface PermissionQuestion {
  readonly sessionId: string
  readonly runId: string
  readonly requestId: string
  readonly toolName: string
  readonly toolCallId: string
  /**
   * What the call will do (`write notes.txt (12 bytes)`, `run: ls -la`), for the person answering.
   * It may hold tool arguments, so hosts show it in the terminal only: never in a log, a lifecycle
   * event or the ledger.
   */
  readonly preview?: string
}

/**
 * A run a provider is asked for.
 * @category models
 */
export interface ProviderRun {
  readonly kind: 'turn' | 'continuation'
  readonly runId: string
}

/**
 * Why the model a continuation needs cannot be built here (a provider this host does not know, a
 * missing key or base URL, an unreadable script): one sentence for the person, naming no secret.
 * @category models
 */
export interface ProviderUnavailable {
  readonly message: string
}

/**
 * The model a continuation runs with, as the host resolved it from the source run's header.
 * @category models
 */
export interface ResolvedProvider {
  /** Builds the continuation's provider; asked once, after revalidation, as `providerFor` is. */
  readonly providerFor: (run: ProviderRun) => ModelProvider
  /** One sentence when the host chose another model than the one the source run recorded. */
  readonly note?: string
  /**
   * How the continuation authorises tool calls that change the workspace — the host keeps the mode
   * its source run recorded unless the person chose another; the runtime's `permissionMode` when absent.
   */
  readonly permissionMode?: PermissionMode
}

/**
 * A host's answer to "which model continues this run?", asked by `resume` with the approved plan's
 * continuation and the source header planning read — after planning, before the in-process guard,
 * the owner lock and the claim — so a model that cannot be built never spends the boundary. An
 * expected failure is a Left; a throw is a bug.
 * @category models
 */
export type ContinuationProviderResolver = (request: {
  readonly source: AgentRun
  readonly continuation: Continuation
}) => Promise<E.Either<ProviderUnavailable, ResolvedProvider>>

/**
 * The parts a runtime is built from.
 * @category models
 */
export interface RuntimeDeps {
  readonly stores: StorePorts
  readonly inspector: HostInspector
  readonly tools: ReadonlyArray<Tool>
  /**
   * Configured tool servers (MCP) that did not start: their tools are absent from `tools`, and a plan
   * that needs one names the server and this reason. Absent when none.
   */
  readonly unavailableToolServers?: ReadonlyArray<UnavailableToolServer>
  /** A provider for each run; called once per run so scripted cursors never leak between runs. */
  readonly providerFor: (run: ProviderRun) => ModelProvider
  /**
   * Resolves a continuation's model from its source run's header (`resume` only). Without it,
   * `providerFor` serves continuations as it serves turns.
   */
  readonly resolveContinuationProvider?: ContinuationProviderResolver
  readonly safeBoundaryResumeEnabled: boolean
  /**
   * False when `MAKA_RUNTIME_TOOL_JOURNAL=0`: runs write exactly what Phase 1 writes even where the
   * journal could be written (fleets whose older binaries share a store). Default true; a run writes
   * the journal only with the resume flag on and a store whose appends are durable.
   */
  readonly toolJournal?: boolean
  /**
   * The host's data directory, whatever the store: a protocol run's foreground shell commands keep
   * their output and exit status in `<dataDir>/sessions/<sessionId>/shell-runs/<shellRunId>/`.
   */
  readonly dataDir?: string
  readonly permissionMode?: PermissionMode
  readonly askPermission?: (question: PermissionQuestion) => Promise<'allow' | 'deny'>
  readonly systemPrompt?: string
  readonly sink?: LifecycleSink
  readonly observer?: RunObserver
  /** Called at each crash point; the demo and crash tests stop the process there. */
  readonly onCrashPoint?: (point: CrashPoint, context: { readonly runId: string }) => void | Promise<void>
  readonly clock?: () => Date
  readonly newId?: (kind: 'session' | 'run' | 'invocation' | 'turn') => string
  readonly maxModelSteps?: number
}

/**
 * Why an execution was refused before anything was written.
 * @category models
 */
export type ContinuationRejectionCode = ExecutionRejection | 'session_owner_alive' | 'resume_feature_disabled'
