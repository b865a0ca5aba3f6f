/**
 * The one place the CLI builds a runtime: file stores over the data directory, the built-in tools
 * and the command's MCP server tools,
 * a provider per run (and, to resume, a resolver of the source run's model), the permission mode and
 * an optional `--verbose` lifecycle log on stderr.
 */
import type { ModelProvider } from '@maka/providers'
import {
  type ContinuationProviderResolver,
  type CrashPoint,
  type FileRuntime,
  type LifecycleEvent,
  type LifecycleSink,
  type PermissionMode,
  type PermissionQuestion,
  type RunObserver,
  makeFileRuntime,
} from '@maka/executor'
import type { StorePorts } from '@maka/stores'
import { builtinTools } from '@maka/tools'
import { noteCodePath } from './codePaths.js'
import type { CommandMcp } from './commandMcp.js'

/**
 * What a command chooses when it builds a runtime.
 * @category models
 */
export interface RuntimeChoice {
  readonly dataDir: string
  /** Where files that are not store state live (see `Workspace.filesDir`); `dataDir` when absent. */
  readonly filesDir?: string
  /**
   * Runs write the tool journal (Phase 2) where the store's appends are durable; from
   * `MAKA_RUNTIME_TOOL_JOURNAL` when absent.
   */
  readonly toolJournal?: boolean
  /** The chosen store's ports (`--store`); the JSONL files of `dataDir` when absent. */
  readonly stores?: StorePorts
  readonly providerFor: (run: { readonly kind: 'turn' | 'continuation'; readonly runId: string }) => ModelProvider
  /** Which model a resumed run continues with, from its source header (`runtime.resume`). */
  readonly resolveContinuationProvider?: ContinuationProviderResolver
  readonly safeBoundaryResumeEnabled: boolean
  readonly permissionMode: PermissionMode
  readonly verbose: boolean
  readonly observer?: RunObserver
  readonly askPermission?: (question: PermissionQuestion) => Promise<'allow' | 'deny'>
  readonly onCrashPoint?: (point: CrashPoint, context: { readonly runId: string }) => void | Promise<void>
  /** The command's MCP servers (`openCommandMcp`): their tools join the built-in ones. */
  readonly mcp?: CommandMcp
}

const fieldsOf = (event: LifecycleEvent): string =>
  Object.entries(event)
    .filter(([key]) => key !== 'type')
    .map(([key, value]) => `${key}=${Array.isArray(value) ? value.join(',') : String(value)}`)
    .join(' ')

/**
 * One stderr line per lifecycle event: identities and codes only (the executor emits nothing else).
 * @category constructors
 */
export const verboseSink = (
  write: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): LifecycleSink => ({
  emit: (event) => write(`maka: ${event.type} ${fieldsOf(event)}`),
})

/**
 * Whether runs write the tool journal, from the environment (host only): on unless
 * `MAKA_RUNTIME_TOOL_JOURNAL=0`, the switch for fleets whose older binaries share a store. A run
 * writes it only with the resume flag on and a durable store as well.
 * @category guards
 */
export const toolJournalFromEnv = (env: NodeJS.ProcessEnv = process.env): boolean =>
  env['MAKA_RUNTIME_TOOL_JOURNAL'] !== '0'

/**
 * Builds the runtime a command runs on.
 * @category constructors
 */
export const composeRuntime = (choice: RuntimeChoice): FileRuntime => {
  const toolJournal = choice.toolJournal ?? toolJournalFromEnv()
  // A protocol run's tool calls go through the journal's own code (the dispatch row, the args
  // digest): the command's code cache must hold it too, whichever run wrote the cache first.
  if (toolJournal && choice.safeBoundaryResumeEnabled) noteCodePath('tool-journal')
  return makeFileRuntime({
    dataDir: choice.dataDir,
    ...(choice.filesDir === undefined ? {} : { filesDir: choice.filesDir }),
    toolJournal,
    ...(choice.stores === undefined ? {} : { stores: choice.stores }),
    tools: [...builtinTools(), ...(choice.mcp?.tools ?? [])],
    ...(choice.mcp === undefined || choice.mcp.unavailableToolServers.length === 0
      ? {}
      : { unavailableToolServers: choice.mcp.unavailableToolServers }),
    providerFor: choice.providerFor,
    ...(choice.resolveContinuationProvider === undefined
      ? {}
      : { resolveContinuationProvider: choice.resolveContinuationProvider }),
    safeBoundaryResumeEnabled: choice.safeBoundaryResumeEnabled,
    permissionMode: choice.permissionMode,
    ...(choice.verbose ? { sink: verboseSink() } : {}),
    ...(choice.observer === undefined ? {} : { observer: choice.observer }),
    ...(choice.askPermission === undefined ? {} : { askPermission: choice.askPermission }),
    ...(choice.onCrashPoint === undefined ? {} : { onCrashPoint: choice.onCrashPoint }),
  })
}
