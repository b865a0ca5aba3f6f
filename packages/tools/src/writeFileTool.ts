/**
 * `write_file`: creates or replaces one file inside the workspace, creating its parent folders. The
 * replacement is all-or-nothing (`replaceFileAtomically`), so a crash mid-call leaves the old file or
 * the new one, never an empty or partial one.
 */
import * as E from 'fp-ts/lib/Either.js'
import { pipe } from 'fp-ts/lib/function.js'
import { defineTool } from './defineTool.js'
import { replaceFileAtomically } from './replaceFileAtomically.js'
import { resolveInsideWorkspace, workspaceRelative } from './resolveInsideWorkspace.js'
import type { Tool } from './Tool.js'
import { argumentsObject, requiredString } from './ToolArguments.js'
import { fileSystemFailed } from './ToolFailure.js'

/**
 * Builds the `write_file` tool.
 * @category constructors
 */
export const makeWriteFileTool = (): Tool =>
  defineTool(
    {
      name: 'write_file',
      description: 'Create or overwrite a text file inside the workspace; missing parent folders are created.',
      parameters: {
        type: 'object',
        properties: {
          path: { type: 'string', description: 'File path, relative to the workspace root.' },
          content: { type: 'string', description: 'The complete new content of the file.' },
        },
        required: ['path', 'content'],
        additionalProperties: false,
      },
      mutates: true,
      describeCall: (args) => {
        if (typeof args !== 'object' || args === null) return undefined
        const { path, content } = args as { path?: unknown; content?: unknown }
        if (typeof path !== 'string') return undefined
        return `write ${path}${typeof content === 'string' ? ` (${Buffer.byteLength(content)} bytes)` : ''}`
      },
    },
    async (args, context) => {
      const parsed = pipe(
        argumentsObject('write_file', args, ['path', 'content']),
        E.flatMap((a) =>
          pipe(
            E.Do,
            E.apS('path', requiredString(a, 'path', { nonEmpty: true })),
            E.apS('content', requiredString(a, 'content', { nonEmpty: false })),
          ),
        ),
      )
      if (E.isLeft(parsed)) return parsed
      const { path, content } = parsed.right
      const resolved = await resolveInsideWorkspace(context.cwd, path)
      if (E.isLeft(resolved)) return resolved
      try {
        await replaceFileAtomically(resolved.right, content)
      } catch (cause) {
        return E.left(fileSystemFailed('write', path, cause))
      }
      return E.right({
        result: { path: await workspaceRelative(context.cwd, resolved.right), bytes: Buffer.byteLength(content) },
        isError: false,
      })
    },
  )
