/**
 * @maka/tools — the tool port and the built-in tools (`read_file`, `write_file`, `list_dir`, `shell`).
 * Every path is confined to the session cwd after following symlinks; background shell commands are
 * recorded as shell runs before the call returns, so recovery and the resume gates can see them; in a
 * protocol run a foreground command runs under a supervisor, recorded before it starts, and its files
 * give its result even after a crash of the agent (`shellResultFromFiles`).
 * Tools never throw at the executor: failures are error outcomes with one short sentence.
 */
export type { ShellRunRecorder, RecordFailure, ProcessIdentityPort, ToolContext, ToolOutcome, Tool } from './Tool.js'
export { type ToolFailure, failureOutcome } from './ToolFailure.js'
export { resolveInsideWorkspace } from './resolveInsideWorkspace.js'
export { type ToolDefinition, defineTool } from './defineTool.js'
export { READ_FILE_CAP_BYTES, makeReadFileTool } from './readFileTool.js'
export { makeWriteFileTool } from './writeFileTool.js'
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
export { type ToolSpec, type ToolRegistry, makeToolRegistry } from './ToolRegistry.js'
