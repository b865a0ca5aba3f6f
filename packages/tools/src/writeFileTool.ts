/**
 * `write_file`: creates or replaces one file inside the workspace, creating its parent folders. The
 * replacement is all-or-nothing (`replaceFileAtomically`), so a crash mid-call leaves the old file or
 * the new one, never an empty or partial one.
 *
 * Its recovery mode is `reconcile`: before the call is dispatched, the basis records what the target
 * held (`absent`, or the SHA-256 of its bytes); after a crash, the probe reads the target again. The
 * new content means the write happened (`applied`, with the result the call would have given); the
 * recorded state means it did not (`not_applied`, final, because only the agent process writes and it
 * is gone); anything else is `diverged`, and whatever cannot be read or was never recorded is
 * `unreadable`. Both read the path the call resolves to, with `O_NOFOLLOW`, at most 16 MiB + 1 bytes.
 */
import { createHash } from 'node:crypto'
import { constants } from 'node:fs'
import { open, type FileHandle } from 'node:fs/promises'
import * as E from 'fp-ts/lib/Either.js'
import { pipe } from 'fp-ts/lib/function.js'
import { defineTool } from './defineTool.js'
import { replaceFileAtomically } from './replaceFileAtomically.js'
import { resolveInsideWorkspace, workspaceRelative } from './resolveInsideWorkspace.js'
import type { ProbeVerdict, ReconcileProbe, Tool } from './Tool.js'
import { argumentsObject, requiredString } from './ToolArguments.js'
import { errorCode, fileSystemFailed, type ToolFailure } from './ToolFailure.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * The largest file `write_file`'s reconcile basis hashes (16 MiB); a larger one is `unhashable`.
 * @category models
 */
export const WRITE_FILE_HASH_CAP_BYTES = 16 * 1024 * 1024

interface WriteFileArgs {
  readonly path: string
  readonly content: string
}

// O_NOFOLLOW: the path was resolved through its links already, so a link appearing since is refused.
// O_NONBLOCK: opening a FIFO must not hang the check waiting for a writer.
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK
const READ_CHUNK_BYTES = 1024 * 1024

/** Where a call's target is: refused by the tool itself, not resolvable now, or a resolved path. */
type Target =
  | { readonly _tag: 'refused' }
  | { readonly _tag: 'unresolvable' }
  | { readonly _tag: 'resolved'; readonly path: string; readonly content: string }

/** What the target holds now, read as the probe may read it. */
type Seen =
  | { readonly _tag: 'absent' }
  | { readonly _tag: 'bytes'; readonly bytes: Buffer }
  | { readonly _tag: 'too_large' }
  | { readonly _tag: 'unreadable' }

const ABSENT = 'absent'
const UNHASHABLE = 'unhashable'
const NONE = 'none'

const NOT_APPLIED: ProbeVerdict = { verdict: 'not_applied' }
const DIVERGED: ProbeVerdict = { verdict: 'diverged' }
const UNREADABLE: ProbeVerdict = { verdict: 'unreadable' }

// -------------------------------------------------------------------------------------
// reading
// -------------------------------------------------------------------------------------

const decodeArgs = (args: unknown): E.Either<ToolFailure, WriteFileArgs> =>
  pipe(
    argumentsObject('write_file', args, ['path', 'content']),
    E.flatMap((a) =>
      pipe(
        E.Do,
        E.apS('path', requiredString(a, 'path', { nonEmpty: true })),
        E.apS('content', requiredString(a, 'content', { nonEmpty: false })),
      ),
    ),
  )

/** The target exactly as `run` finds it: the same argument checks and the same confinement. */
const locate = async (args: unknown, cwd: string): Promise<Target> => {
  const parsed = decodeArgs(args)
  if (E.isLeft(parsed)) return { _tag: 'refused' }
  const resolved = await resolveInsideWorkspace(cwd, parsed.right.path)
  if (E.isRight(resolved)) return { _tag: 'resolved', path: resolved.right, content: parsed.right.content }
  // Outside the workspace, `run` refuses before any effect; a workspace or path that cannot be
  // resolved now (a link loop, a folder without permission) is a read that failed.
  return resolved.left._tag === 'OutsideWorkspace' ? { _tag: 'refused' } : { _tag: 'unresolvable' }
}

const readAtMost = async (handle: FileHandle, limit: number): Promise<Buffer> => {
  const chunks: Array<Buffer> = []
  let total = 0
  while (total < limit) {
    const chunk = Buffer.allocUnsafe(Math.min(limit - total, READ_CHUNK_BYTES))
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, total)
    if (bytesRead === 0) break
    chunks.push(chunk.subarray(0, bytesRead))
    total += bytesRead
  }
  return Buffer.concat(chunks, total)
}

/** Reads a regular file of at most the cap, never more than the cap + 1 bytes. */
const look = async (resolved: string): Promise<Seen> => {
  let handle: FileHandle
  try {
    handle = await open(resolved, READ_FLAGS)
  } catch (cause) {
    // ELOOP (a link at the path), EACCES, ENOTDIR…: the state cannot be read.
    return errorCode(cause) === 'ENOENT' ? { _tag: 'absent' } : { _tag: 'unreadable' }
  }
  try {
    const stat = await handle.stat()
    // A folder, a FIFO, a socket or a device: `run` refuses it, and its bytes say nothing.
    if (!stat.isFile()) return { _tag: 'unreadable' }
    if (stat.size > WRITE_FILE_HASH_CAP_BYTES) return { _tag: 'too_large' }
    // One byte past the cap tells a file that grew since fstat from one that fits.
    const bytes = await readAtMost(handle, WRITE_FILE_HASH_CAP_BYTES + 1)
    return bytes.length > WRITE_FILE_HASH_CAP_BYTES ? { _tag: 'too_large' } : { _tag: 'bytes', bytes }
  } catch {
    return { _tag: 'unreadable' }
  } finally {
    await handle.close().catch(() => undefined)
  }
}

const sha256Of = (bytes: Buffer): string => `sha256:${createHash('sha256').update(bytes).digest('hex')}`

// -------------------------------------------------------------------------------------
// reconcile
// -------------------------------------------------------------------------------------

const basis = async (args: unknown, cwd: string): Promise<string> => {
  const target = await locate(args, cwd)
  if (target._tag === 'refused') return NONE
  if (target._tag === 'unresolvable') return UNHASHABLE
  const seen = await look(target.path)
  if (seen._tag === 'absent') return ABSENT
  return seen._tag === 'bytes' ? sha256Of(seen.bytes) : UNHASHABLE
}

const probe = async (args: unknown, cwd: string, recorded: string): Promise<ProbeVerdict> => {
  const target = await locate(args, cwd)
  if (target._tag === 'refused') return recorded === NONE ? NOT_APPLIED : UNREADABLE
  if (target._tag === 'unresolvable') return UNREADABLE
  const seen = await look(target.path)
  if (seen._tag === 'unreadable') return UNREADABLE
  // UTF-8 as `run` writes it (a lone surrogate becomes U+FFFD there too).
  const wanted = Buffer.from(target.content, 'utf8')
  if (seen._tag === 'bytes' && seen.bytes.equals(wanted)) {
    return { verdict: 'applied', output: { path: await workspaceRelative(cwd, target.path), bytes: wanted.length } }
  }
  // A file past the cap may hold content past the cap: it cannot be compared without reading it all.
  if (seen._tag === 'too_large' && wanted.length > WRITE_FILE_HASH_CAP_BYTES) return UNREADABLE
  if (recorded === ABSENT) return seen._tag === 'absent' ? NOT_APPLIED : DIVERGED
  if (/^sha256:[0-9a-f]{64}$/.test(recorded)) {
    return seen._tag === 'bytes' && sha256Of(seen.bytes) === recorded ? NOT_APPLIED : DIVERGED
  }
  // `unhashable`, `none` with args that are valid and inside now, or a basis this probe never gives.
  return UNREADABLE
}

// The probe never throws at its caller: a failure it did not foresee is a state it cannot read.
const writeFileReconcile: ReconcileProbe = {
  basis: (args, context) => basis(args, context.cwd),
  probe: async (args, context, recorded) => {
    try {
      return await probe(args, context.cwd, recorded)
    } catch {
      return UNREADABLE
    }
  },
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

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
      recovery: 'reconcile',
      reconcile: writeFileReconcile,
      describeCall: (args) => {
        if (typeof args !== 'object' || args === null) return undefined
        const { path, content } = args as { path?: unknown; content?: unknown }
        if (typeof path !== 'string') return undefined
        return `write ${path}${typeof content === 'string' ? ` (${Buffer.byteLength(content)} bytes)` : ''}`
      },
    },
    async (args, context) => {
      const parsed = decodeArgs(args)
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
