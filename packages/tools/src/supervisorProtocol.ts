/**
 * What the tool and its supervisor (`shellSupervisor.ts`) agree on: the config argument, the control
 * bytes on the pipe and the supervisor's exit codes. Node-free and import-free, so the supervisor
 * script loads nothing else.
 */

/**
 * What the tool tells the supervisor, as `process.argv[2]` (JSON).
 * @category models
 */
export interface SupervisorConfig {
  /** The run's folder: `stdout`, `stderr` and `exit` are written there. */
  readonly dir: string
  /** The workspace root, where `/bin/sh -c command` runs. */
  readonly cwd: string
  readonly command: string
  /** Counted from the command's start; the process group is killed then. */
  readonly timeoutMs: number
  /** How many bytes of each pipe are kept in its file. */
  readonly capBytes: number
  /** Exported to the command as `MAKA_AGENT_PID`. */
  readonly agentPid: number
}

/**
 * The "go" byte: start the command. Sent only after the shell-run record is durable.
 * @category models
 */
export const CONTROL_GO = 'g'

/**
 * The cancel byte: kill the command's process group; `exit` is still written.
 * @category models
 */
export const CONTROL_CANCEL = 'c'

/**
 * The supervisor's exit codes, which only the tool that waits on it reads.
 * @category models
 */
export const SUPERVISOR_EXIT = {
  /** `exit` was written. */
  reported: 0,
  /** The config or the files could not be set up; nothing was started. */
  not_set_up: 2,
  /** The pipe ended (or said cancel) before "go"; nothing was started. */
  not_started: 3,
  /** `/bin/sh` could not be spawned; `spawn-error` holds the errno code. */
  spawn_failed: 4,
} as const
