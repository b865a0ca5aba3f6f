/**
 * @maka/tools — the tool port and the built-in tools (`read_file`, `write_file`, `list_dir`, `shell`).
 * Every path is confined to the session cwd after following symlinks; background shell commands are
 * recorded as shell runs before the call returns, so recovery and the resume gates can see them; in a
 * protocol run a foreground command runs under a supervisor, recorded before it starts, and its files
 * give its result even after a crash of the agent (`shellResultFromFiles`).
 * Tools never throw at the executor: failures are error outcomes with one short sentence. Each tool
 * declares how its calls may be recovered after a crash (`recoveryModeOf`), and a `reconcile` tool
 * carries a read-only basis and probe, run here under a time limit (`computeReconcileBasis`, `runProbe`).
 */
export type {
  ShellRunRecorder,
  RecordFailure,
  ProcessIdentityPort,
  ToolContext,
  ToolOutcome,
  Tool,
  ToolSource,
  ProbeContext,
  ProbeVerdict,
  ReconcileProbe,
} from './Tool.js'
export { type ToolFailure, failureOutcome } from './ToolFailure.js'
export { resolveInsideWorkspace } from './resolveInsideWorkspace.js'
export { type ToolDefinition, defineTool } from './defineTool.js'
export { READ_FILE_CAP_BYTES, makeReadFileTool } from './readFileTool.js'
export { WRITE_FILE_HASH_CAP_BYTES, makeWriteFileTool } from './writeFileTool.js'
export { makeListDirTool } from './listDirTool.js'
export {
  SHELL_DEFAULT_TIMEOUT_MS,
  SHELL_MAX_TIMEOUT_MS,
  SHELL_OUTPUT_CAP_BYTES,
  type ShellResult,
  type BackgroundShellResult,
  shellOutcomeOf,
} from './ShellResult.js'
export { makeShellTool } from './shellTool.js'
export {
  type ShellRunFile,
  type ShellFilesError,
  shellRunDirOf,
  shellRunStatusOf,
  readShellRunExit,
  shellResultFromFiles,
} from './shellRunFiles.js'
export { builtinTools } from './builtinTools.js'
export {
  type ToolSpec,
  type ToolRegistry,
  type ToolRegistrationRefusal,
  ToolRegistrationRefusalSentences,
  ToolRegistrationError,
  makeToolRegistry,
  recoveryModesOf,
  toolCatalogOf,
} from './ToolRegistry.js'
export { recoveryModeOf } from './recoveryModeOf.js'
export {
  RECONCILE_LIMIT_MS,
  type BasisRefusalCode,
  type BasisRefusal,
  BasisRefusalSentences,
  computeReconcileBasis,
  runProbe,
} from './reconcileProbe.js'
