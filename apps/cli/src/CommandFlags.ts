/**
 * The parsed flags of every `maka` command, apart from the program that parses them so commands and
 * program do not import each other.
 */

/**
 * The global options every command sees (commander's `optsWithGlobals`).
 * @category models
 */
export interface GlobalFlags {
  readonly dataDir?: string
  /** `jsonl:DIR`, `sqlite:FILE` or `postgres://…` (else `MAKA_STORE`, else the data dir's JSONL). */
  readonly store?: string
  readonly verbose?: boolean
}

/**
 * The crash points `maka demo --at` accepts.
 * @category models
 */
export const DEMO_CRASH_POINTS = ['after_tool_response', 'after_function_call'] as const

/**
 * Flags of `demo`.
 * @category models
 */
export interface DemoFlags {
  readonly at: (typeof DEMO_CRASH_POINTS)[number]
  readonly script?: string
  readonly json?: boolean
  readonly keep?: boolean
}
/**
 * Flags of the hidden demo child.
 * @category models
 */
export interface DemoChildFlags {
  readonly session: string
  readonly cwd: string
  readonly at: string
  readonly script?: string
}
/**
 * Flags of `chaos`.
 * @category models
 */
export interface ChaosFlags {
  readonly iterations?: string
  readonly seed?: string
  readonly json?: boolean
  readonly keep?: boolean
  readonly stormSize?: string
  readonly stormRoles?: 'mixed' | 'recover' | 'resume'
  /** Protocol turns with real tool time, children with the tool journal on, or the same turns with it off. */
  readonly journal?: 'on' | 'off'
}
/**
 * Flags of the hidden chaos child.
 * @category models
 */
export interface ChaosChildFlags {
  readonly mode: 'turn' | 'resume' | 'recover'
  readonly session: string
  readonly cwd: string
  readonly script: string
  readonly crashAt?: string
  readonly crashNth?: string
  readonly cue?: boolean
}
/**
 * Provider flags plus `--yes`.
 * @category models
 */
export interface ModelFlags {
  readonly script?: string
  readonly provider?: string
  readonly baseUrl?: string
  readonly model?: string
  readonly timeout?: string
  readonly yes?: boolean
  /** `--permission-mode`: ask, allow or deny (`--yes` is allow). */
  readonly permissionMode?: 'ask' | 'allow' | 'deny'
  /** `--profile NAME`: a provider profile of the settings file. */
  readonly profile?: string
  /** `--mcp-config FILE`: an MCP config file read after the user's and the project's. */
  readonly mcpConfig?: string
}
/**
 * Flags of `chat`.
 * @category models
 */
export interface ChatFlags extends ModelFlags {
  readonly session?: string
  readonly cwd?: string
}
/**
 * Flags of `run`.
 * @category models
 */
export interface RunFlags extends ModelFlags {
  readonly session?: string
  readonly cwd?: string
  readonly json?: boolean
}
/**
 * `--json`.
 * @category models
 */
export interface JsonFlag {
  readonly json?: boolean
}
/**
 * Flags of `resume`.
 * @category models
 */
export interface ResumeFlags extends ModelFlags {
  readonly session?: string
  readonly json?: boolean
  /** False with `--no-wait`: park at once when a command of the crashed turn is still running. */
  readonly wait?: boolean
  /** `--pick`: list the interrupted sessions and let the person choose one. */
  readonly pick?: boolean
}
/**
 * Flags of `resolve` (the session is its argument).
 * @category models
 */
export interface ResolveFlags {
  readonly call?: string
  readonly operation?: string
  /** The verdict; checked by the command (after `resolve_unavailable`), not by the parser. */
  readonly as?: string
  readonly output?: string
  readonly json?: boolean
}

/**
 * Flags of `resume plan`.
 * @category models
 */
export interface ResumePlanFlags {
  readonly session?: string
  /** `--mcp-config FILE`. */
  readonly mcpConfig?: string
  readonly run?: string
  readonly json?: boolean
  readonly recover: boolean
}

/**
 * Options of `maka ui`.
 * @category models
 */
export interface UiFlags extends ModelFlags {
  readonly port?: string
  readonly open: boolean
}

/**
 * Flags of `doctor`: the provider flags it checks instead of the settings', and `--json`.
 * @category models
 */
export interface DoctorFlags extends ModelFlags {
  readonly json?: boolean
}

/**
 * Flags of `config list`.
 * @category models
 */
export interface ConfigListFlags {
  readonly json?: boolean
}

/**
 * Flags of `store copy`.
 * @category models
 */
export interface StoreCopyFlags {
  readonly from: string
  readonly to: string
  readonly json?: boolean
}

/**
 * Flags of `mcp list`.
 * @category models
 */
export interface McpListFlags {
  readonly json?: boolean
  readonly cwd?: string
  readonly mcpConfig?: string
}
