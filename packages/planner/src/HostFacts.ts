import type { RecoveryMode } from '@maka/events'

/**
 * The facts only the running host can observe. The planner owns this type; `host-inspector`
 * produces values of it, so the shell depends on the core and never the reverse.
 */

/**
 * A workspace checkpoint the host may offer: which ref, whether it was restored, and which
 * RuntimeEvent high-water it covers.
 * @category models
 */
export interface WorkspaceCheckpoint {
  readonly ref?: string
  readonly restored: boolean
  readonly runtimeEventHighWater: number
}

/**
 * An operation that keeps the session busy: a background shell run, a child run (sub-agent) or a
 * continuation run that has not ended.
 * @category models
 */
export interface UnsettledOperation {
  readonly kind: 'shell_run' | 'child_run' | 'continuation_run'
  readonly id: string
  /** A supervised foreground command's operation (Phase 2): while it is open, only its observation judges it. */
  readonly operationId?: string
}

/**
 * A tool that is not built in, as the host declares it now: the MCP server that serves it and the
 * digest of its declaration (name, input schema, annotations).
 * @category models
 */
export interface ToolCatalogEntry {
  readonly server: string
  readonly digest: string
}

/**
 * A configured tool server that did not start: its tools are absent, and this says why.
 * @category models
 */
export interface UnavailableToolServer {
  readonly server: string
  readonly reason: string
}

/**
 * What the host observed about the session, right now.
 * @category models
 */
export interface HostFacts {
  /** realpath of the session cwd, without a trailing separator. */
  readonly currentCwd: string
  /** `fs:<dev>:<ino>:<canonicalPath>` of that directory. */
  readonly currentWorkspaceIdentity: string
  /** False while any background shell run, child run or continuation run is unsettled. */
  readonly backgroundOperationsSettled: boolean
  /** What keeps the session busy, for diagnostics; empty when settled. */
  readonly unsettledOperations: ReadonlyArray<UnsettledOperation>
  /** Names of the tools the host registers now. */
  readonly availableToolNames: ReadonlyArray<string>
  /** Present only when a checkpoint provider is configured and returned one. */
  readonly workspaceCheckpoint?: WorkspaceCheckpoint
  /** A caller-supplied expected ledger length for the source run. */
  readonly expectedRuntimeEventHighWater?: number
  /**
   * True when a run started here now would write the tool journal (Phase 2): the resume flag is on,
   * the store's appends are durable and `MAKA_RUNTIME_TOOL_JOURNAL` is not `0`. Absent: false.
   */
  readonly toolJournal?: boolean
  /** Each registered tool's recovery mode, or `by_args` when its mode depends on a call's args. */
  readonly toolRecoveryModes?: Readonly<Record<string, RecoveryMode | 'by_args'>>
  /**
   * The tools that come from MCP servers: name → server and declaration digest. Absent (or empty)
   * on a host without them; a call that recorded a digest needs the same digest now (gate 11).
   */
  readonly toolCatalog?: Readonly<Record<string, ToolCatalogEntry>>
  /** Configured tool servers that did not start, for the plan's detail. Absent when none. */
  readonly unavailableToolServers?: ReadonlyArray<UnavailableToolServer>
}

/**
 * What a probe found: whether a `reconcile` operation's effect happened.
 * @category models
 */
export type ProbeVerdict = 'applied' | 'not_applied' | 'diverged' | 'unreadable'

/**
 * What the host saw of a `reattach` operation's command: ended, still running, or gone without a trace.
 * @category models
 */
export type ReattachObservation = 'exited' | 'running' | 'lost'

/**
 * What the host found, right now, about one open operation of the chain: the mode its tool gives
 * the call's args today and, for a `reconcile` or `reattach` operation whose mode is unchanged, the
 * probe's verdict or the command's observation. World reads made for planning; they write nothing.
 * @category models
 */
export interface OperationFacts {
  readonly currentMode: RecoveryMode | null
  readonly probe?: ProbeVerdict
  readonly observation?: ReattachObservation
}
