/**
 * The four tools every host registers by default.
 */
import { makeListDirTool } from './listDirTool.js'
import { makeReadFileTool } from './readFileTool.js'
import { makeShellTool } from './shellTool.js'
import type { Tool } from './Tool.js'
import { makeWriteFileTool } from './writeFileTool.js'

/**
 * `read_file`, `write_file`, `list_dir` and `shell`, freshly built.
 * @category constructors
 */
export const builtinTools = (): ReadonlyArray<Tool> => [
  makeReadFileTool(),
  makeWriteFileTool(),
  makeListDirTool(),
  makeShellTool(),
]
