/**
 * `list_dir`: the entries of one folder inside the workspace, sorted by code unit so the listing is
 * the same on every machine and locale, with a trailing `/` on folders.
 */
import { readdir } from 'node:fs/promises'
import * as E from 'fp-ts/lib/Either.js'
import { pipe } from 'fp-ts/lib/function.js'
import { defineTool } from './defineTool.js'
import { resolveInsideWorkspace } from './resolveInsideWorkspace.js'
import type { Tool } from './Tool.js'
import { argumentsObject, optionalString } from './ToolArguments.js'
import { fileSystemFailed } from './ToolFailure.js'

/**
 * Builds the `list_dir` tool.
 * @category constructors
 */
export const makeListDirTool = (): Tool =>
  defineTool(
    {
      name: 'list_dir',
      description: 'List a folder inside the workspace (default: the workspace root). Folders end with "/".',
      parameters: {
        type: 'object',
        properties: { path: { type: 'string', description: 'Folder path, relative to the workspace root.' } },
        additionalProperties: false,
      },
      mutates: false,
      recovery: 'replay_safe',
    },
    async (args, context) => {
      const path = pipe(
        // A model may call a no-argument listing with no arguments object at all.
        argumentsObject('list_dir', args ?? {}, ['path']),
        E.flatMap((a) => optionalString(a, 'path')),
        E.map((p) => p ?? '.'),
      )
      if (E.isLeft(path)) return path
      const resolved = await resolveInsideWorkspace(context.cwd, path.right)
      if (E.isLeft(resolved)) return resolved
      try {
        const entries = await readdir(resolved.right, { withFileTypes: true })
        const names = entries.map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.name))
        return E.right({ result: names.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)), isError: false })
      } catch (cause) {
        return E.left(fileSystemFailed('list', path.right, cause))
      }
    },
  )
