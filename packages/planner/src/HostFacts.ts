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
}
