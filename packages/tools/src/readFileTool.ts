/**
 * `read_file`: the text of one file inside the workspace, capped so a huge or binary file cannot
 * flood the model's context.
 */
import { constants } from 'node:fs'
import { open } from 'node:fs/promises'
import { StringDecoder } from 'node:string_decoder'
import * as E from 'fp-ts/lib/Either.js'
import { pipe } from 'fp-ts/lib/function.js'
import { defineTool } from './defineTool.js'
import { resolveInsideWorkspace } from './resolveInsideWorkspace.js'
import type { Tool } from './Tool.js'
import { argumentsObject, requiredString } from './ToolArguments.js'
import { fileSystemFailed, type ToolFailure } from './ToolFailure.js'

/**
 * How many bytes `read_file` returns at most; the rest is replaced by a truncation note.
 * @category models
 */
export const READ_FILE_CAP_BYTES = 256 * 1024

// O_NOFOLLOW: the path was resolved through its links already, so a link appearing since is refused.
// O_NONBLOCK: opening a FIFO must not hang the turn waiting for a writer.
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK

const readCapped = async (requested: string, resolved: string): Promise<E.Either<ToolFailure, string>> => {
  let handle
  try {
    handle = await open(resolved, READ_FLAGS)
  } catch (cause) {
    return E.left(fileSystemFailed('read', requested, cause))
  }
  try {
    const stat = await handle.stat()
    if (stat.isDirectory()) return E.left(fileSystemFailed('read', requested, { code: 'EISDIR' }))
    if (!stat.isFile()) return E.left(fileSystemFailed('read', requested, { code: 'NOT_REGULAR_FILE' }))
    const buffer = Buffer.alloc(Math.min(stat.size, READ_FILE_CAP_BYTES))
    let filled = 0
    while (filled < buffer.length) {
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled)
      if (bytesRead === 0) break
      filled += bytesRead
    }
    // StringDecoder holds back a multi-byte character cut by the cap instead of emitting U+FFFD.
    const text = new StringDecoder('utf8').write(buffer.subarray(0, filled))
    return E.right(
      stat.size > filled ? `${text}\n\n[truncated: showing the first ${filled} of ${stat.size} bytes]` : text,
    )
  } catch (cause) {
    return E.left(fileSystemFailed('read', requested, cause))
  } finally {
    await handle.close()
  }
}

/**
 * Builds the `read_file` tool.
 * @category constructors
 */
export const makeReadFileTool = (): Tool =>
  defineTool(
    {
      name: 'read_file',
      description: `Read a text file inside the workspace. Output is capped at ${READ_FILE_CAP_BYTES} bytes.`,
      parameters: {
        type: 'object',
        properties: { path: { type: 'string', description: 'File path, relative to the workspace root.' } },
        required: ['path'],
        additionalProperties: false,
      },
      mutates: false,
      recovery: 'replay_safe',
    },
    async (args, context) => {
      const path = pipe(
        argumentsObject('read_file', args, ['path']),
        E.flatMap((a) => requiredString(a, 'path', { nonEmpty: true })),
      )
      if (E.isLeft(path)) return path
      const resolved = await resolveInsideWorkspace(context.cwd, path.right)
      if (E.isLeft(resolved)) return resolved
      return pipe(
        await readCapped(path.right, resolved.right),
        E.map((text) => ({ result: text, isError: false })),
      )
    },
  )
